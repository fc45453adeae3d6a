package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * services.api's {@code ServiceControl}, as the app platform calls it, on the whole runtime booted in the test JVM: a
 * service created, its env and bindings replaced, a worker deployed on workerd, a canary given another share of the
 * requests (the routing table has it when the call returns, and the requests follow it), promoted, rolled back,
 * aborted, the service deleted. Each refusal is the status and code the routes answer, and what the calls change is what
 * the routes then show. The API's classes are the framework's, not this class path's: the calls are reflective.
 */
@ResourceLock(InFrameworkRuntime.LOCK)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ServiceControlTest {

    static final String WORKER =
            "export default { async fetch(request) { return new Response(\"version VERSION\"); } };";

    @TempDir
    static Path tmp;

    static InFrameworkRuntime runtime;
    static Http eveHttp;
    static Object eve;
    static Object eveSpace;
    static String eveSpaceId;
    static Object mallory;
    static Object mallorySpace;

    /** A {@code ServiceControl.Refused}: its status, code and message. */
    record Refusal(int status, String code, String message) {}

    @BeforeAll
    static void boot() throws Exception {
        runtime = InFrameworkRuntime.start(tmp);
        runtime.assertHealthy(90_000);
        Http operator = new Http(
                runtime.base(),
                Files.readString(runtime.data.resolve("operator.token")).trim());
        JsonNode e = user(operator, "eve");
        eveHttp = operator.as(operator.post("/admin/users/eve/tokens", Map.of("scopes", "*"))
                .get("token")
                .asText());
        eveSpaceId = e.path("space").path("id").asText();
        eve = caller(e.path("user").path("id").asText());
        eveSpace = prove(eve, eveSpaceId);
        JsonNode m = user(operator, "mallory");
        mallory = caller(m.path("user").path("id").asText());
        mallorySpace = prove(mallory, m.path("space").path("id").asText());
    }

    @AfterAll
    static void stop() throws Exception {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    @Order(1)
    void servicesTheirEnvAndBindingsChangeAsTheRoutesChangeThem() throws Exception {
        Object web = call("create", eve, eveSpace, "Web App", null);
        String id = get(web, "id");
        assertEquals("web-app", get(web, "slug"));
        assertEquals("created", get(web, "status"));
        assertEquals(eveSpaceId, get(web, "spaceId"));
        assertTrue(((String) get(web, "hostname")).startsWith("web-app."), (String) get(web, "hostname"));
        // the same name again is another service with a slug made unique; a hint gives the slug
        Object again = call("create", eve, eveSpace, "Web App", null);
        assertEquals("web-app-2", get(again, "slug"));
        assertEquals("front-door", get(call("create", eve, eveSpace, "Front", "Front Door"), "slug"));
        assertEquals(id, get(((Optional<?>) call("byName", eveSpaceId, "Web App")).orElseThrow(), "id"));
        assertEquals(Optional.empty(), call("byName", eveSpaceId, "nothing of that name"));
        assertEquals("Web App", get(((Optional<?>) call("service", id)).orElseThrow(), "name"));
        // the routes see it
        assertEquals(
                "web-app",
                eveHttp.get("/api/services/" + id).get("service").get("slug").asText());

        assertEquals(
                new Refusal(400, "BAD_REQUEST", "name must not be empty"), refusal("create", eve, eveSpace, " ", null));
        // a workspace not proven for the caller, another Principal's service: not found, as on the routes
        assertEquals(404, refusal("create", mallory, eveSpace, "Intruder", null).status());
        assertEquals(404, refusal("replaceEnv", mallory, id, Map.of()).status());
        assertEquals(
                404,
                refusal("replaceBindings", mallory, mallorySpace, id, Map.of()).status());
        assertEquals(
                404,
                refusal("replaceBindings", eve, eveSpace, "svc_missing", Map.of())
                        .status());

        // env: exactly the variables given, secrets sealed and never shown
        call("replaceEnv", eve, id, Map.of("GREETING", env("hello", false), "API_KEY", env("s3cret", true)));
        Map<String, JsonNode> vars = vars(id);
        assertEquals(Set.of("GREETING", "API_KEY"), vars.keySet());
        assertEquals("hello", vars.get("GREETING").path("value").asText());
        assertTrue(vars.get("API_KEY").path("secret").asBoolean());
        assertTrue(vars.get("API_KEY").path("value").isMissingNode(), vars.toString());
        call("replaceEnv", eve, id, Map.of("GREETING", env("hi", false)));
        vars = vars(id);
        assertEquals(Set.of("GREETING"), vars.keySet());
        assertEquals("hi", vars.get("GREETING").path("value").asText());
        // the same env again changes nothing (the running deployments are not restarted for it)
        String updated = vars.get("GREETING").path("updated_at").asText();
        call("replaceEnv", eve, id, Map.of("GREETING", env("hi", false)));
        assertEquals(updated, vars(id).get("GREETING").path("updated_at").asText());
        assertEquals(
                400,
                refusal("replaceEnv", eve, id, Map.of("lower", env("x", false))).status());
        assertEquals("hi", vars(id).get("GREETING").path("value").asText(), "a refused env changes nothing");

        // bindings: each resource checked as PATCH /bindings checks it
        Http.Reply kv = eveHttp.post("/api/resources", Map.of("name", "cache", "type", "kv"));
        assertEquals(201, kv.status(), kv.body());
        String kvId = kv.get("resource").get("id").asText();
        call("replaceBindings", eve, eveSpace, id, Map.of("CACHE", kvId));
        JsonNode bindings = eveHttp.get("/api/services/" + id + "/bindings").get("bindings");
        assertEquals(1, bindings.size(), bindings.toString());
        assertEquals("CACHE", bindings.get(0).path("name").asText());
        assertEquals(kvId, bindings.get(0).path("resource_id").asText());
        Refusal missing = refusal("replaceBindings", eve, eveSpace, id, Map.of("CACHE", "res_missing"));
        assertEquals(new Refusal(404, "NOT_FOUND", "resource not found for binding CACHE"), missing);
        assertEquals(
                400,
                refusal("replaceBindings", eve, eveSpace, id, Map.of("1BAD", kvId))
                        .status());
        call("replaceBindings", eve, eveSpace, id, Map.of());
        assertEquals(
                0,
                eveHttp.get("/api/services/" + id + "/bindings").get("bindings").size());

        // what needs a deployment, a canary or a provider is refused with the routes' answers
        assertEquals(409, refusal("setCanaryPercent", id, 50).status());
        assertEquals(new Refusal(409, "CONFLICT", "the service has no canary"), refusal("endCanary", id, true));
        assertEquals(409, refusal("rollback", id, null).status());
        assertEquals(400, refusal("setCanaryPercent", id, 0).status());
        assertEquals(404, refusal("setCanaryPercent", "svc_missing", 50).status());
        byte[] code = worker("x");
        assertEquals(
                400,
                refusal("deploy", id, code, "worker-bundle", "workerd", "", "blue-green", null)
                        .status());
        assertEquals(
                400,
                refusal("deploy", id, code, "worker-bundle", "nomad", "", "direct", null)
                        .status());
        assertEquals(
                400, refusal("deploy", id, code, null, null, null, "direct", 50).status());
        assertEquals(
                400,
                refusal("deploy", id, new byte[0], null, null, null, null, null).status());
        assertEquals(List.of(), call("deployments", id));

        String second = get(again, "id");
        assertEquals(true, call("delete", second));
        assertEquals(Optional.empty(), call("service", second));
        assertEquals(false, call("delete", second));
        assertEquals(404, eveHttp.get("/api/services/" + second).status());
    }

    @Test
    @Order(2)
    void aRolloutDeploysShiftsPromotesRollsBackAndAborts() throws Exception {
        Assumptions.assumeTrue(
                workerdInstalled(), "workerd is not installed (./atrium test installs it; or set ATRIUM_WORKERD_BIN)");
        Object svc = call("create", eve, eveSpace, "Rollout", null);
        String id = get(svc, "id");
        String slug = get(svc, "slug");
        String host = get(svc, "hostname");

        Object first = call("deploy", id, worker("v1"), "worker-bundle", "workerd", "first", "direct", null);
        String d1 = get(first, "id");
        assertEquals("active", get(first, "status"));
        assertEquals("workerd", get(first, "provider"));
        assertEquals("worker-bundle", get(first, "artifactKind"));
        assertEquals(id, get(first, "serviceId"));
        assertEquals("deployed", get(service(id), "status"));
        assertEquals("version v1", served(host));

        Object second = call("deploy", id, worker("v2"), null, null, "second", "canary", 1);
        String d2 = get(second, "id");
        assertEquals("canary", get(second, "status"));
        Object s = service(id);
        assertEquals("canary", get(s, "status"));
        assertEquals(d1, get(s, "currentDeploymentId"));
        assertEquals(d2, get(s, "canaryDeploymentId"));
        assertEquals(1, (Integer) get(s, "canaryPercent"));
        assertEquals(1, routedCanaryPercent(slug));

        // a new share: in the routing table when the call returns, then in the requests, the routes and the deployment
        call("setCanaryPercent", id, 99);
        assertEquals(99, routedCanaryPercent(slug));
        assertEquals(99, (Integer) get(service(id), "canaryPercent"));
        JsonNode viaRoute = eveHttp.get("/api/services/" + id).get("service");
        assertEquals(99, viaRoute.path("canary_percent").asInt(), viaRoute.toString());
        assertEquals(
                99,
                eveHttp.get("/api/services/" + id + "/deployments/" + d2)
                        .get("deployment")
                        .path("canary_percent")
                        .asInt());
        int toCanary = 0;
        for (int i = 0; i < 40; i++) {
            String body = served(host);
            assertTrue(body.equals("version v1") || body.equals("version v2"), body);
            toCanary += body.equals("version v2") ? 1 : 0;
        }
        assertTrue(toCanary >= 34, toCanary + " of 40 requests went to the canary at 99%");
        assertEquals(400, refusal("setCanaryPercent", id, 100).status());
        assertEquals(99, routedCanaryPercent(slug), "a refused share changes nothing");

        call("endCanary", id, true);
        s = service(id);
        assertEquals("deployed", get(s, "status"));
        assertEquals(d2, get(s, "currentDeploymentId"));
        assertNull(get(s, "canaryDeploymentId"));
        assertNull(get(s, "canaryPercent"));
        assertEquals(0, routedCanaryPercent(slug));
        assertEquals("version v2", served(host));
        assertEquals(409, refusal("setCanaryPercent", id, 50).status());

        List<String> statuses = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (Object d : (List<?>) call("deployments", id)) {
            ids.add(get(d, "id"));
            statuses.add(get(d, "status"));
        }
        assertEquals(List.of(d2, d1), ids, "newest first");
        assertEquals(List.of("active", "superseded"), statuses);

        Object back = call("rollback", id, d1);
        assertEquals(d1, get(back, "id"));
        assertEquals("active", get(back, "status"));
        assertEquals("version v1", served(host));
        assertEquals(409, refusal("rollback", id, d1).status());
        assertEquals(404, refusal("rollback", id, "dep_missing").status());

        // a canary without a share gets the configured default; aborted, the current one takes every request
        String d3 = get(call("deploy", id, worker("v3"), null, null, null, "canary", null), "id");
        assertEquals(d3, get(service(id), "canaryDeploymentId"));
        assertEquals(10, (Integer) get(service(id), "canaryPercent"));
        assertEquals(10, routedCanaryPercent(slug));
        call("endCanary", id, false);
        assertEquals(d1, get(service(id), "currentDeploymentId"));
        assertNull(get(service(id), "canaryDeploymentId"));
        assertEquals("aborted", get(((List<?>) call("deployments", id)).get(0), "status"));
        for (int i = 0; i < 10; i++) {
            assertEquals("version v1", served(host));
        }

        assertEquals(true, call("delete", id));
        assertEquals(404, HostHttp.get(runtime.port, host, "/").status());
        assertFalse(routes().containsKey(slug));
    }

    /** DS ties the component to the services bundle: stopped with it, back with it, on the same stored services. */
    @Test
    @Order(3)
    void theControlGoesAndComesBackWithTheServicesBundle() throws Exception {
        String id = get(call("create", eve, eveSpace, "Survivor", null), "id");
        Bundle services = runtime.bundle("dev.atrium.services");
        services.stop();
        try {
            assertNull(reference("dev.atrium.services.api.ServiceControl"), "ServiceControl outlived its bundle");
        } finally {
            services.start();
        }
        long deadline = System.currentTimeMillis() + 30_000;
        while (reference("dev.atrium.services.api.ServiceControl") == null && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        assertNotEquals(null, reference("dev.atrium.services.api.ServiceControl"), "ServiceControl did not come back");
        assertEquals("Survivor", get(service(id), "name"));
    }

    // ------------------------------------------------------------------ the framework's services, reflectively

    private static JsonNode user(Http operator, String name) {
        Http.Reply created = operator.post("/admin/users", Map.of("username", name));
        assertEquals(201, created.status(), created.body());
        return created.json();
    }

    private static ServiceReference<?> reference(String type) throws Exception {
        ServiceReference<?>[] refs = runtime.framework.getBundleContext().getAllServiceReferences(type, null);
        return refs == null ? null : refs[0];
    }

    private static Object service(String type, BundleContext context) throws Exception {
        ServiceReference<?>[] refs = context.getAllServiceReferences(type, null);
        assertNotEquals(null, refs, "no " + type);
        return context.getService(refs[0]);
    }

    /** A caller for the Principal, made by the kernel as for a run (the runs bundle may act for a Principal). */
    private static Object caller(String principalId) throws Exception {
        BundleContext runs = runtime.bundle("dev.atrium.runs").getBundleContext();
        Object callers = service("dev.atrium.kernel.api.Callers", runs);
        return invoke(callers, "actingFor", principalId, Set.of("repos:read", "repos:write"));
    }

    private static Object prove(Object caller, String spaceId) throws Exception {
        Object scope = service("dev.atrium.kernel.api.OwnerScope", runtime.framework.getBundleContext());
        return invoke(scope, "require", caller, spaceId);
    }

    private static Object call(String method, Object... args) throws Exception {
        Object control = service("dev.atrium.services.api.ServiceControl", runtime.framework.getBundleContext());
        return invoke(control, method, args);
    }

    /** The refusal a call ends in; fails when it succeeds. */
    private static Refusal refusal(String method, Object... args) throws Exception {
        RefusedCall r = assertThrows(RefusedCall.class, () -> call(method, args), method + " was not refused");
        return r.refusal;
    }

    /** A call that ended in {@code ServiceControl.Refused}. */
    static final class RefusedCall extends Exception {
        private static final long serialVersionUID = 1L;
        final transient Refusal refusal;

        RefusedCall(Refusal refusal) {
            super(refusal.toString());
            this.refusal = refusal;
        }
    }

    private static Object invoke(Object target, String name, Object... args) throws Exception {
        Method m = null;
        for (Class<?> type : target.getClass().getInterfaces()) {
            for (Method candidate : type.getMethods()) {
                if (candidate.getName().equals(name) && candidate.getParameterCount() == args.length) {
                    m = candidate;
                }
            }
        }
        assertNotEquals(null, m, target.getClass() + " has no " + name + "/" + args.length);
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            Throwable t = e.getCause();
            if (t.getClass().getName().equals("dev.atrium.services.api.ServiceControl$Refused")) {
                throw new RefusedCall(new Refusal((Integer) get(t, "status"), (String) get(t, "code"), t.getMessage()));
            }
            throw e;
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T get(Object record, String accessor) throws Exception {
        return (T) record.getClass().getMethod(accessor).invoke(record);
    }

    private static Object service(String id) throws Exception {
        return ((Optional<?>) call("service", id)).orElseThrow();
    }

    private static Object env(String value, boolean secret) throws Exception {
        Class<?> type =
                runtime.bundle("dev.atrium.services.api").loadClass("dev.atrium.services.api.ServiceControl$EnvVar");
        return type.getConstructor(String.class, boolean.class).newInstance(value, secret);
    }

    private static Map<String, JsonNode> vars(String id) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        eveHttp.get("/api/services/" + id + "/env")
                .get("variables")
                .forEach(v -> out.put(v.path("name").asText(), v));
        return out;
    }

    /** The routing table's routes by slug, as the Host routing reads it. */
    private static Map<?, ?> routes() throws Exception {
        Object routes = invoke(
                service("dev.atrium.services.api.ServiceRoutes", runtime.framework.getBundleContext()), "routes");
        return get(routes, "bySlug");
    }

    private static int routedCanaryPercent(String slug) throws Exception {
        Object route = routes().get(slug);
        assertNotEquals(null, route, "no route for " + slug);
        return (Integer) get(route, "canaryPercent");
    }

    private static String served(String host) throws Exception {
        RawHttp.Response r = HostHttp.get(runtime.port, host, "/");
        assertEquals(200, r.status(), HostHttp.text(r));
        return HostHttp.text(r);
    }

    private static byte[] worker(String version) {
        return WORKER.replace("VERSION", version).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Whether there is a binary for the workerd provider to run where it looks (its default, under
     * {@code ~/.cache/atrium/workerd-<version>}, ATRIUM_WORKERD_BIN, the PATH).
     */
    private static boolean workerdInstalled() throws java.io.IOException {
        List<Path> candidates = new ArrayList<>();
        Path cache = Path.of(System.getProperty("user.home"), ".cache", "atrium");
        if (Files.isDirectory(cache)) {
            try (var dirs = Files.list(cache)) {
                dirs.filter(d -> d.getFileName().toString().startsWith("workerd-"))
                        .forEach(d ->
                                candidates.add(d.resolve("node_modules/@cloudflare/workerd-linux-64/bin/workerd")));
            }
        }
        String bin = System.getenv("ATRIUM_WORKERD_BIN");
        if (bin != null && !bin.isBlank()) {
            candidates.add(Path.of(bin));
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isBlank()) {
                candidates.add(Path.of(dir, "workerd"));
            }
        }
        return candidates.stream().anyMatch(Files::isExecutable);
    }
}
