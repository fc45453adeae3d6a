package dev.atrium.services.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.services.api.ServiceControl;
import dev.atrium.services.api.ServiceRoutes;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The checks {@code ServiceControl} shares with the {@code /api/services} routes: a deployment request, an env
 * variable and a binding are refused the same way whether they come as a JSON body or as a call, and a refusal keeps
 * the route's status and code.
 */
class ServiceControlChecksTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final byte[] CODE = "export default {}".getBytes(StandardCharsets.UTF_8);
    private static final long MAX = 1024;

    private static void badRequest(Executable call) {
        ApiException e = assertThrows(ApiException.class, call);
        assertEquals(400, e.status(), e.getMessage());
        assertEquals("BAD_REQUEST", e.code(), e.getMessage());
    }

    @Test
    void aPathRoutesPrefixIsAUrlPathWithoutATrailingSlash() {
        assertEquals("/", ServiceControls.prefix("/"));
        assertEquals("/api", ServiceControls.prefix("/api/"));
        assertEquals("/api/v1", ServiceControls.prefix("/api/v1"));
        badRequest(() -> ServiceControls.prefix(null));
        badRequest(() -> ServiceControls.prefix("api"));
        badRequest(() -> ServiceControls.prefix("/a b"));
        badRequest(() -> ServiceControls.prefix("/a?b"));
        badRequest(() -> ServiceControls.prefix("//evil"));
        badRequest(() -> ServiceControls.prefix("/" + "a".repeat(600)));
    }

    @Test
    void aPathRouteMatchesWholeSegments() {
        ServiceRoutes.PathRoute api = new ServiceRoutes.PathRoute("/api", null);
        assertTrue(api.matches("/api"));
        assertTrue(api.matches("/api/x"));
        assertFalse(api.matches("/apix"));
        assertFalse(api.matches("/"));
        assertTrue(new ServiceRoutes.PathRoute("/", null).matches("/anything"));
    }

    @Test
    void aDeploymentRequestGetsTheCreateBodysDefaults() {
        DeployFlow.Request r = DeployFlow.Request.of(CODE, null, null, null, null, null, MAX);
        assertEquals("", r.message());
        assertEquals("direct", r.strategy());
        assertEquals("workerd", r.provider());
        assertEquals("worker-bundle", r.kind());
        assertNull(r.canaryPercent());
        DeployFlow.Request canary = DeployFlow.Request.of(CODE, " v2 ", "canary", "workerd", "worker-bundle", 25, MAX);
        assertEquals("v2", canary.message());
        assertEquals(25, canary.canaryPercent());
    }

    @Test
    void aBadDeploymentRequestIsRefusedAsTheRouteRefusesIt() {
        badRequest(() -> DeployFlow.Request.of(new byte[0], null, null, null, null, null, MAX));
        badRequest(() -> DeployFlow.Request.of(null, null, null, null, null, null, MAX));
        badRequest(() -> DeployFlow.Request.of(CODE, null, "blue-green", null, null, null, MAX));
        badRequest(() -> DeployFlow.Request.of(CODE, null, null, null, "jar", null, MAX));
        badRequest(() -> DeployFlow.Request.of(CODE, null, null, " ", null, null, MAX));
        badRequest(() -> DeployFlow.Request.of(CODE, "a\0b", null, null, null, null, MAX));
        badRequest(() -> DeployFlow.Request.of(CODE, "x".repeat(1001), null, null, null, null, MAX));
        badRequest(() -> DeployFlow.Request.of(CODE, null, "canary", null, null, 0, MAX));
        badRequest(() -> DeployFlow.Request.of(CODE, null, "canary", null, null, 100, MAX));
        badRequest(() -> DeployFlow.Request.of(CODE, null, "direct", null, null, 50, MAX));
        ApiException tooLarge = assertThrows(
                ApiException.class, () -> DeployFlow.Request.of(new byte[2048], null, null, null, null, null, MAX));
        assertEquals(413, tooLarge.status());
        assertEquals("PAYLOAD_TOO_LARGE", tooLarge.code());
    }

    @Test
    void aCreateBodyIsTheSameRequestAsTheCall() throws Exception {
        DeployFlow.Request parsed = DeployFlow.parse(
                JSON.readTree(
                        "{\"bundle\":\"ZXhwb3J0IGRlZmF1bHQge30=\",\"deploy_message\":\"m\",\"strategy\":\"canary\","
                                + "\"provider\":{\"name\":\"workerd\"},\"target\":{\"artifact\":{\"kind\":\"worker-bundle\"}},"
                                + "\"canary_percent\":30}"),
                MAX);
        DeployFlow.Request called = DeployFlow.Request.of(CODE, "m", "canary", "workerd", "worker-bundle", 30, MAX);
        assertArrayEquals(called.bundle(), parsed.bundle());
        assertEquals(
                java.util.List.of(
                        called.message(), called.strategy(), called.provider(), called.kind(), called.canaryPercent()),
                java.util.List.of(
                        parsed.message(), parsed.strategy(), parsed.provider(), parsed.kind(), parsed.canaryPercent()));
        badRequest(() -> DeployFlow.parse(JSON.readTree("{\"bundle\":\"eA==\",\"canary_percent\":1.5}"), MAX));
        badRequest(() -> DeployFlow.parse(
                JSON.readTree("{\"bundle\":\"eA==\",\"strategy\":\"canary\",\"canary_percent\":100}"), MAX));
    }

    @Test
    void envVariablesAndBindingsAreCheckedByName() {
        assertEquals(
                new ServiceEdits.EnvChange("API_KEY", "v", true), ServiceEdits.EnvChange.checked("API_KEY", "v", true));
        badRequest(() -> ServiceEdits.EnvChange.checked("api_key", "v", false));
        badRequest(() -> ServiceEdits.EnvChange.checked(null, "v", false));
        badRequest(() -> ServiceEdits.EnvChange.checked("K", "x".repeat(ServiceEdits.MAX_VALUE + 1), false));
        badRequest(() -> ServiceEdits.EnvChange.checked("K", "a\0b", false));

        assertEquals(
                "res_1",
                ServiceEdits.Wanted.checked("CACHE", "res_1", null, null).resourceId());
        badRequest(() -> ServiceEdits.Wanted.checked("1CACHE", "res_1", null, null));
        badRequest(() -> ServiceEdits.Wanted.checked("CACHE", null, null, null));
        badRequest(() -> ServiceEdits.Wanted.checked("CACHE", "res_1", "cache", null));
    }

    @Test
    void aNameIsTrimmedAndBoundedAsInABody() {
        assertEquals("web", ServiceEdits.text("name", "  web ", 1, 100));
        badRequest(() -> ServiceEdits.text("name", "   ", 1, 100));
        badRequest(() -> ServiceEdits.text("name", null, 1, 100));
        badRequest(() -> ServiceEdits.text("name", "x".repeat(101), 1, 100));
    }

    @Test
    void aRefusalCarriesTheRoutesStatusCodeAndMessage() {
        ApiException conflict = ApiException.conflict(DeployFlow.NO_CANARY);
        ServiceControl.Refused r = assertThrows(
                ServiceControl.Refused.class,
                () -> ServiceControls.refusing(() -> {
                    throw conflict;
                }));
        assertEquals(409, r.status());
        assertEquals(conflict.code(), r.code());
        assertEquals(DeployFlow.NO_CANARY, r.getMessage());
        assertSame(conflict, r.getCause());
        assertEquals("done", ServiceControls.refusing(() -> "done"));
    }
}
