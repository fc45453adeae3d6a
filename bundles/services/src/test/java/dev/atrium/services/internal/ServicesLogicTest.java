package dev.atrium.services.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.services.internal.ServiceStore.DeploymentRow;
import dev.atrium.services.internal.ServiceStore.Service;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The logic of the services capability that needs no runtime: idempotency, desired state, validation, sealing, DNS. */
class ServicesLogicTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void idempotencyReplaysTheSameBodyAndRefusesAnotherOne() throws Exception {
        String a = Idempotency.hash(
                JSON.readTree("{\"bundle\":\"eA==\",\"strategy\":\"direct\",\"provider\":{\"name\":\"workerd\"}}"));
        String sameReordered = Idempotency.hash(
                JSON.readTree("{ \"provider\":{\"name\":\"workerd\"}, \"strategy\":\"direct\", \"bundle\":\"eA==\" }"));
        String other = Idempotency.hash(
                JSON.readTree("{\"bundle\":\"eQ==\",\"strategy\":\"direct\",\"provider\":{\"name\":\"workerd\"}}"));
        assertEquals(a, sameReordered);
        assertNotEquals(a, other);
        assertEquals(Idempotency.Outcome.NEW, Idempotency.decide(null, a));
        assertEquals(Idempotency.Outcome.REPLAY, Idempotency.decide(a, sameReordered));
        assertEquals(Idempotency.Outcome.CONFLICT, Idempotency.decide(a, other));
        assertNull(Idempotency.key(null));
        assertEquals("k-1", Idempotency.key(" k-1 "));
        assertThrows(ApiException.class, () -> Idempotency.key(""));
        assertThrows(ApiException.class, () -> Idempotency.key("a b"));
        assertThrows(ApiException.class, () -> Idempotency.key("x".repeat(201)));
    }

    private static Service service(String id, String current, String canary, int revision) {
        Instant now = Instant.now();
        return new Service(
                id, "sp_1", "pr_1", id, id, "{}", revision, current, canary, canary == null ? null : 10, now, now);
    }

    private static DeploymentRow row(String id, String service, String provider) {
        return new DeploymentRow(
                id,
                service,
                1,
                "active",
                "direct",
                provider,
                "worker-bundle",
                "services/x",
                "x",
                1,
                "",
                null,
                null,
                null,
                Instant.now());
    }

    @Test
    void desiredStateIsEveryCurrentDeploymentAndCanaryPerProvider() {
        Map<String, DeploymentRow> rows = Map.of(
                "d1",
                row("d1", "s1", "workerd"),
                "d2",
                row("d2", "s1", "workerd"),
                "d3",
                row("d3", "s2", "containers"),
                "d4",
                row("d4", "s3", "gone"));
        List<Service> services = List.of(
                service("s1", "d1", "d2", 3),
                service("s2", "d3", null, 1),
                service("s3", "d4", null, 1),
                service("s4", null, null, 1));
        Map<String, List<DesiredState.Entry>> desired = DesiredState.compute(
                services, id -> Optional.ofNullable(rows.get(id)), List.of("workerd", "containers", "idle"));
        assertEquals(
                List.of("d1-r3", "d2-r3"),
                desired.get("workerd").stream()
                        .map(DesiredState.Entry::runtimeId)
                        .toList());
        assertEquals(
                List.of(false, true),
                desired.get("workerd").stream().map(DesiredState.Entry::canary).toList());
        assertEquals(
                List.of("d3-r1"),
                desired.get("containers").stream()
                        .map(DesiredState.Entry::runtimeId)
                        .toList());
        // a provider with nothing to run is told so (its deployments stop); one that is not running is not called
        assertEquals(List.of(), desired.get("idle"));
        assertFalse(desired.containsKey("gone"));
        // a change of env, settings or bindings (the revision) is a new runtime deployment of the same API deployment
        assertNotEquals(DesiredState.runtimeId("d1", 3), DesiredState.runtimeId("d1", 4));
        assertEquals("d1", Views.apiDeploymentId(DesiredState.runtimeId("d1", 4)));
    }

    @Test
    void settingsAreValidatedByType() throws Exception {
        ObjectNode empty = JSON.createObjectNode();
        ObjectNode ok = Settings.merge(
                empty,
                JSON.readTree(
                        "{\"compatibility_date\":\"2024-09-23\",\"compatibility_flags\":[\"nodejs_compat\"],\"limits\":{\"cpu_ms\":50,\"memory_mb\":128},\"mcp_server\":{\"path\":\"/mcp\"}}"));
        assertEquals("2024-09-23", ok.get("compatibility_date").asText());
        assertEquals(50, ok.get("limits").get("cpu_ms").asInt());
        assertFalse(Settings.merge(ok, JSON.readTree("{\"limits\":null}")).has("limits"));
        for (String bad : List.of(
                "{\"compatibility_date\":\"2024-02-30\"}",
                "{\"compatibility_date\":20240101}",
                "{\"compatibility_flags\":\"x\"}",
                "{\"compatibility_flags\":[1]}",
                "{\"limits\":{\"cpu_ms\":\"50\"}}",
                "{\"limits\":{\"cpu_ms\":0}}",
                "{\"limits\":{\"memory_mb\":15}}",
                "{\"limits\":{\"disk\":1}}",
                "{\"limits\":[]}",
                "{\"mcp_server\":\"yes\"}",
                "{\"colour\":\"blue\"}")) {
            assertThrows(ApiException.class, () -> Settings.merge(empty, JSON.readTree(bad)), bad);
        }
    }

    @Test
    void slugsFollowTheWorkspaceSlugRules() {
        assertNull(Slugs.problem("my-api"));
        assertEquals("slug 'api' is reserved", Slugs.problem("api"));
        assertTrue(Slugs.problem("My-API") != null
                && Slugs.problem("a--b") != null
                && Slugs.problem("-a") != null
                && Slugs.problem("x".repeat(64)) != null
                && Slugs.problem("a.b") != null);
        assertEquals("my-api", Slugs.from("My API!"));
        assertEquals("service-api", Slugs.from("API"));
        assertEquals("service", Slugs.from("???"));
    }

    @Test
    void secretsAreSealedPerVariableAndBindingSecretsPerDeployment() {
        byte[] k1 = new byte[32];
        byte[] k2 = new byte[32];
        k2[0] = 1;
        Sealer sealer = new Sealer(k1, k2);
        Sealer.Sealed s = sealer.seal("svc_1", "TOKEN", "s3cret");
        assertFalse(new String(s.ciphertext(), StandardCharsets.UTF_8).contains("s3cret"));
        assertEquals("s3cret", sealer.open("svc_1", "TOKEN", s.keyId(), s.nonce(), s.ciphertext()));
        // moved to another variable or service, it does not open
        assertThrows(
                IllegalStateException.class, () -> sealer.open("svc_1", "OTHER", s.keyId(), s.nonce(), s.ciphertext()));
        assertThrows(
                IllegalStateException.class, () -> sealer.open("svc_2", "TOKEN", s.keyId(), s.nonce(), s.ciphertext()));
        assertEquals(sealer.bindingSecret("dep_a-r1"), new Sealer(k1, k2).bindingSecret("dep_a-r1"));
        assertNotEquals(sealer.bindingSecret("dep_a-r1"), sealer.bindingSecret("dep_a-r2"));
        assertNotEquals(sealer.bindingSecret("dep_a-r1"), new Sealer(k1, k1).bindingSecret("dep_a-r1"));
    }
}
