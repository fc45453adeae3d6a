package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Services end to end with a real worker runtime: deploy through the API, requests through Atrium's Host routing answered
 * by workerd, env and secrets, kv and d1 through bindings, swaps without a failed request, rollback, canary split,
 * isolation of the internal binding endpoint, logs. These need the workerd deployment provider (bundle
 * {@code dev.atrium.deploy.workerd}): they run when it is in the runtime, or when {@code ATRIUM_ITEST_WORKERD_JAR} names
 * its jar (dropped into the server's {@code deploy/}); otherwise they are skipped (aborted), never faked.
 */
@SharedServer
class ServicesWorkerdTest {

    static final String WORKER = """
            export default {
              async fetch(request, env) {
                const url = new URL(request.url);
                const q = url.searchParams;
                if (url.pathname === "/env") return Response.json({ keys: Object.keys(env).sort(), greeting: env.GREETING ?? null, mine: env.MY_SECRET ?? null, stripe: env.STRIPE ?? null });
                if (url.pathname === "/kv/put") { await env.CACHE.put(q.get("k"), q.get("v")); return new Response("ok"); }
                if (url.pathname === "/kv/get") return new Response((await env.CACHE.get(q.get("k"))) ?? "null");
                if (url.pathname === "/kv/list") { const l = await env.CACHE.list({ prefix: q.get("p") ?? "" }); return Response.json(l.keys.map(k => k.name)); }
                if (url.pathname === "/kv/delete") { await env.CACHE.delete(q.get("k")); return new Response("ok"); }
                if (url.pathname === "/d1") {
                  await env.DB.prepare("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT)").run();
                  await env.DB.prepare("INSERT INTO notes (body) VALUES (?)").bind(q.get("body")).run();
                  const r = await env.DB.prepare("SELECT body FROM notes ORDER BY id").all();
                  return Response.json(r.results.map(x => x.body));
                }
                if (url.pathname === "/forge") {
                  try {
                    const r = await fetch(q.get("target"), { method: "PUT", body: "forged", headers: { "X-Atrium-Binding-Secret": q.get("secret") ?? "guess" } });
                    return new Response("status " + r.status);
                  } catch (e) { return new Response("error " + e.message); }
                }
                if (url.pathname === "/var") return new Response(env[q.get("n")] ?? "null");
                if (url.pathname === "/echo") return new Response(request.body, { headers: { "content-type": "application/octet-stream" } });
                console.log("served " + url.pathname + " by VERSION");
                return new Response("version VERSION");
              }
            };
            """;

    private AtriumServer server;

    @BeforeEach
    void needsWorkerd(AtriumServer server) throws Exception {
        this.server = server;
        Assumptions.assumeTrue(
                workerdPresent(server),
                "the workerd deployment provider is not in the runtime (set ATRIUM_ITEST_WORKERD_JAR to try a jar)");
    }

    static String code(String version) {
        return Base64.getEncoder()
                .encodeToString(WORKER.replace("VERSION", version).getBytes(StandardCharsets.UTF_8));
    }

    /** Whether a worker bundle deploys here; drops ATRIUM_ITEST_WORKERD_JAR into deploy/ first when it does not. */
    static synchronized boolean workerdPresent(AtriumServer server) throws Exception {
        User probe = server.newUser();
        String id = ServicesTest.createService(probe, ServicesTest.unique("probe"));
        Http.Reply r = probe.http().post("/api/services/" + id + "/deployments", Map.of("bundle", code("probe")));
        if (r.status() == 201) {
            return true;
        }
        String jar = System.getenv("ATRIUM_ITEST_WORKERD_JAR");
        if (jar == null || jar.isBlank() || !Files.isRegularFile(Path.of(jar))) {
            return false;
        }
        Path target = server.data.resolve("deploy").resolve(Path.of(jar).getFileName());
        if (!Files.exists(target)) {
            Files.createDirectories(target.getParent());
            Files.copy(Path.of(jar), target, StandardCopyOption.REPLACE_EXISTING);
        }
        for (int i = 0; i < 60; i++) {
            Thread.sleep(500);
            r = probe.http().post("/api/services/" + id + "/deployments", Map.of("bundle", code("probe")));
            if (r.status() == 201) {
                return true;
            }
        }
        return false;
    }

    record Svc(String id, String slug, String host) {}

    Svc service(User u, String name) {
        String id = ServicesTest.createService(u, ServicesTest.unique(name));
        String slug =
                u.http().get("/api/services/" + id).get("service").get("slug").asText();
        return new Svc(id, slug, slug + ".apps.localhost");
    }

    String deploy(User u, Svc s, String version, Map<String, Object> extra) {
        Map<String, Object> body = new java.util.HashMap<>(extra);
        body.put("bundle", code(version));
        Http.Reply r = u.http().post("/api/services/" + s.id() + "/deployments", body);
        assertEquals(201, r.status(), r.body());
        return r.get("deployment").get("id").asText();
    }

    String get(Svc s, String path) throws Exception {
        RawHttp.Response r = HostHttp.get(server.port, s.host(), path);
        assertEquals(200, r.status(), HostHttp.text(r));
        return HostHttp.text(r);
    }

    @Test
    void aWorkerIsServedThroughItsHostWithEnvSecretsKvAndD1(AtriumServer server) throws Exception {
        User u = server.newUser();
        Svc a = service(u, "served");
        Svc b = service(u, "neighbour");
        String kv = u.http()
                .post("/api/resources", Map.of("name", "cache", "type", "kv"))
                .get("resource")
                .get("id")
                .asText();
        String db = u.http()
                .post("/api/resources", Map.of("name", "notes", "type", "d1"))
                .get("resource")
                .get("id")
                .asText();
        Http.Reply secretRef = u.http()
                .post(
                        "/api/resources",
                        Map.of("name", "stripe-key", "type", "secretRef", "config", Map.of("value", "sk_live_42")));
        assertEquals(201, secretRef.status(), secretRef.body());
        assertEquals(
                200,
                u.http()
                        .patch(
                                "/api/services/" + a.id() + "/env",
                                Map.of(
                                        "variables",
                                        List.of(
                                                Map.of("name", "GREETING", "value", "hello"),
                                                Map.of("name", "MY_SECRET", "value", "mine-only", "secret", true))))
                        .status());
        assertEquals(
                200,
                u.http()
                        .patch(
                                "/api/services/" + b.id() + "/env",
                                Map.of(
                                        "variables",
                                        List.of(Map.of("name", "OTHER_SECRET", "value", "not-for-a", "secret", true))))
                        .status());
        assertEquals(
                200,
                u.http()
                        .patch(
                                "/api/services/" + a.id() + "/bindings",
                                Map.of(
                                        "bindings",
                                        List.of(
                                                Map.of("name", "CACHE", "resource_id", kv),
                                                Map.of("name", "DB", "resource_name", "notes"),
                                                Map.of("name", "STRIPE", "resource_name", "stripe-key"))))
                        .status());
        deploy(u, a, "one", Map.of("deploy_message", "first"));
        deploy(u, b, "other", Map.of());

        assertEquals("version one", get(a, "/"));
        JsonNode env = Http.JSON.readTree(get(a, "/env"));
        assertEquals("hello", env.get("greeting").asText());
        assertEquals("mine-only", env.get("mine").asText());
        assertEquals(
                "sk_live_42",
                env.get("stripe").asText(),
                "a bound secretRef is the code's env.STRIPE, its only way out");
        String keys = env.get("keys").toString();
        assertFalse(keys.contains("OTHER_SECRET"), keys);
        assertTrue(keys.contains("CACHE") && keys.contains("DB"), keys);
        assertEquals("version other", get(b, "/"));

        // kv: written by the worker, read back by it and through the resources API (the same resource)
        assertEquals("ok", get(a, "/kv/put?k=k1&v=from-worker"));
        assertEquals("from-worker", get(a, "/kv/get?k=k1"));
        assertEquals("[\"k1\"]", get(a, "/kv/list?p=k"));
        assertEquals(
                "from-worker",
                u.http().get("/api/resources/" + kv + "/kv/entries/k1").body());
        assertEquals("null", get(a, "/kv/get?k=missing"));
        assertEquals("ok", get(a, "/kv/delete?k=k1"));
        assertEquals("null", get(a, "/kv/get?k=k1"));
        // d1
        assertEquals("[\"first\"]", get(a, "/d1?body=first"));
        assertEquals("[\"first\",\"second\"]", get(a, "/d1?body=second"));
        JsonNode rows = u.http()
                .post("/api/resources/" + db + "/sql/query", Map.of("sql", "SELECT count(*) AS n FROM notes"))
                .json();
        assertEquals(2, rows.path("rows").path(0).path(0).asInt(), rows.toString());
        // bodies stream both ways through the proxy
        byte[] big = new byte[3 << 20];
        new java.util.Random(7).nextBytes(big);
        RawHttp.Response echo = HostHttp.send(
                server.port, a.host(), "POST", "/echo", Map.of("Content-Type", "application/octet-stream"), big);
        assertEquals(200, echo.status());
        assertTrue(java.util.Arrays.equals(big, echo.body()));

        // logs: the worker's console.log, paged and tailed
        JsonNode logs = null;
        for (int i = 0; i < 40; i++) {
            logs = u.http().get("/api/services/" + a.id() + "/logs?limit=100").json();
            if (logs.get("logs").toString().contains("served / by one")) {
                break;
            }
            Thread.sleep(100);
        }
        assertTrue(logs.get("logs").toString().contains("served / by one"), logs.toString());
        long after = logs.get("next_after").asLong();
        HttpURLConnection sse =
                (HttpURLConnection) URI.create(server.base() + "/api/services/" + a.id() + "/logs?after=" + after)
                        .toURL()
                        .openConnection();
        sse.setRequestProperty("Authorization", "Bearer " + u.http().token());
        sse.setRequestProperty("Accept", "text/event-stream");
        sse.setReadTimeout(10_000);
        assertEquals(200, sse.getResponseCode());
        get(a, "/tailed");
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(sse.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            boolean seen = false;
            while (!seen && (line = in.readLine()) != null) {
                seen = line.startsWith("data:") && line.contains("served /tailed by one");
            }
            assertTrue(seen);
        } finally {
            sse.disconnect();
        }
        // billing counts the requests each service served, per second (bundles/services.routing RequestMetering)
        BillingTest.eventually(
                "the workers' requests are counted",
                () -> {
                    for (JsonNode m : u.http()
                            .get("/api/billing/usage")
                            .json()
                            .path("usage")
                            .path("meters")) {
                        if (m.path("meter").asText().equals("worker_requests")) {
                            // a: /, /env, six kv calls, two d1 calls, /echo, /tailed; b: /
                            return m.path("dimensions").path(a.id()).asLong() == 12
                                    && m.path("dimensions").path(b.id()).asLong() == 1;
                        }
                    }
                    return false;
                },
                10,
                () -> u.http().get("/api/billing/usage").body());
    }

    /** Polls the worker until the variable has the value (a change redeploys the linking services in the background). */
    void awaitVariable(Svc s, String name, String expected) throws Exception {
        String seen = null;
        for (int i = 0; i < 100; i++) {
            seen = get(s, "/var?n=" + name);
            if (expected.equals(seen)) {
                return;
            }
            Thread.sleep(100);
        }
        assertEquals(expected, seen, name + " of " + s.slug());
    }

    @Test
    void linkedCommonVariablesReachTheWorkerAndFollowTheirChanges(AtriumServer server) throws Exception {
        User u = server.newUser();
        String space = u.defaultSpaceId();
        Svc linked = service(u, "linked");
        Svc unlinked = service(u, "unlinked");
        assertEquals(
                200,
                u.http()
                        .put("/api/spaces/" + space + "/common-env", Map.of("name", "REGION", "value", "eu-1"))
                        .status());
        assertEquals(
                200,
                u.http()
                        .put(
                                "/api/spaces/" + space + "/common-env",
                                Map.of("name", "SHARED_TOKEN", "value", "tok-1", "secret", true))
                        .status());
        assertEquals(
                200,
                u.http()
                        .put("/api/spaces/" + space + "/common-env", Map.of("name", "OVERRIDDEN", "value", "common"))
                        .status());
        assertEquals(
                200,
                u.http()
                        .put(
                                "/api/services/" + linked.id() + "/common-env-links",
                                Map.of("names", List.of("REGION", "SHARED_TOKEN", "OVERRIDDEN", "NOT_SET")))
                        .status());
        assertEquals(
                200,
                u.http()
                        .patch(
                                "/api/services/" + linked.id() + "/env",
                                Map.of("variables", List.of(Map.of("name", "OVERRIDDEN", "value", "own"))))
                        .status());
        deploy(u, linked, "one", Map.of());
        deploy(u, unlinked, "one", Map.of());

        assertEquals("eu-1", get(linked, "/var?n=REGION"));
        assertEquals(
                "tok-1", get(linked, "/var?n=SHARED_TOKEN"), "a secret common variable reaches the code that links it");
        assertEquals("own", get(linked, "/var?n=OVERRIDDEN"), "the service's own variable wins over the common one");
        assertEquals("null", get(linked, "/var?n=NOT_SET"));
        assertEquals("null", get(unlinked, "/var?n=REGION"), "only linked variables are given");
        assertEquals("null", get(unlinked, "/var?n=SHARED_TOKEN"));
        assertFalse(
                u.http().get("/api/spaces/" + space + "/common-env").body().contains("tok-1"),
                "the API never returns a secret value");

        // a change, a new link and a deletion reach the running code without a new deployment
        assertEquals(
                200,
                u.http()
                        .put("/api/spaces/" + space + "/common-env", Map.of("name", "REGION", "value", "eu-2"))
                        .status());
        awaitVariable(linked, "REGION", "eu-2");
        assertEquals(
                200,
                u.http()
                        .patch("/api/services/" + unlinked.id() + "/common-env-links", Map.of("add", List.of("REGION")))
                        .status());
        awaitVariable(unlinked, "REGION", "eu-2");
        assertEquals(
                200,
                u.http()
                        .delete("/api/spaces/" + space + "/common-env/SHARED_TOKEN")
                        .status());
        awaitVariable(linked, "SHARED_TOKEN", "null");

        // another Principal's workspace variable of the same name is not this service's
        User stranger = server.newUser();
        assertEquals(
                200,
                stranger.http()
                        .put(
                                "/api/spaces/" + stranger.defaultSpaceId() + "/common-env",
                                Map.of("name", "NOT_SET", "value", "theirs"))
                        .status());
        assertEquals("null", get(linked, "/var?n=NOT_SET"));
    }

    @Test
    void anIdempotencyKeyReplaysTheFirstDeploymentAndRefusesAnotherBody(AtriumServer server) {
        User u = server.newUser();
        Svc s = service(u, "idem");
        String path = "/api/services/" + s.id() + "/deployments";
        String body = "{\"bundle\":\"" + code("one") + "\",\"deploy_message\":\"m\"}";
        Http.Reply first = send(u, path, body, "key-1");
        assertEquals(201, first.status(), first.body());
        Http.Reply again = send(u, path, "{\"deploy_message\":\"m\",  \"bundle\":\"" + code("one") + "\"}", "key-1");
        assertEquals(200, again.status(), again.body());
        assertEquals(first.get("deployment"), again.get("deployment"));
        Http.Reply other = send(u, path, "{\"bundle\":\"" + code("two") + "\"}", "key-1");
        assertEquals(409, other.status(), other.body());
        assertEquals("CONFLICT", other.errorCode());
        // the low-level path shares the keys of its service
        assertEquals(
                200,
                send(u, "/api/workers/" + s.id() + "/deployments", body, "key-1")
                        .status());
        assertEquals(1, u.http().get(path).get("total").asInt());
        assertEquals(201, send(u, path, body, "key-2").status());
        assertEquals(2, u.http().get(path).get("total").asInt());
    }

    private static Http.Reply send(User u, String path, String body, String key) {
        try {
            var req = java.net.http.HttpRequest.newBuilder(URI.create(u.http().base() + path))
                    .header("Authorization", "Bearer " + u.http().token())
                    .header("Content-Type", "application/json")
                    .header("Idempotency-Key", key)
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
                    .build();
            var r = java.net.http.HttpClient.newHttpClient()
                    .send(req, java.net.http.HttpResponse.BodyHandlers.ofString());
            return new Http.Reply(r.statusCode(), Http.JSON.readTree(r.body()), r.body(), r);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aBadBundleIsRefusedWithItsErrorAndTheCurrentDeploymentKeepsServing(AtriumServer server) throws Exception {
        User u = server.newUser();
        Svc s = service(u, "badbundle");
        deploy(u, s, "good", Map.of());
        Http.Reply bad = u.http()
                .post(
                        "/api/services/" + s.id() + "/deployments",
                        Map.of(
                                "bundle",
                                Base64.getEncoder()
                                        .encodeToString("export default { fetch( { return 1 } }"
                                                .getBytes(StandardCharsets.UTF_8))));
        assertEquals(400, bad.status(), bad.body());
        assertTrue(bad.json().path("error").path("message").asText().contains("SyntaxError"), bad.body());
        assertEquals("version good", get(s, "/"));
        assertEquals(
                1,
                u.http()
                        .get("/api/services/" + s.id() + "/deployments")
                        .get("total")
                        .asInt());
    }

    @Test
    void aSecondDeploymentReplacesTheFirstWithNoFailedRequestUnderEightClients(AtriumServer server) throws Exception {
        User u = server.newUser();
        Svc s = service(u, "swap");
        deploy(u, s, "one", Map.of());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger ok = new AtomicInteger();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> versions = new ConcurrentLinkedQueue<>();
        List<Thread> clients = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        RawHttp.Response r = HostHttp.get(server.port, s.host(), "/");
                        String text = HostHttp.text(r);
                        if (r.status() != 200 || !text.startsWith("version ")) {
                            failures.add(r.status() + " " + text);
                        } else {
                            ok.incrementAndGet();
                            if (!versions.contains(text)) {
                                versions.add(text);
                            }
                        }
                    } catch (Exception e) {
                        failures.add(e.toString());
                    }
                }
            });
            t.start();
            clients.add(t);
        }
        Thread.sleep(500);
        deploy(u, s, "two", Map.of());
        Thread.sleep(1000);
        stop.set(true);
        for (Thread t : clients) {
            t.join();
        }
        assertEquals(List.of(), List.copyOf(failures));
        assertTrue(ok.get() > 100, "only " + ok.get() + " requests");
        assertTrue(versions.contains("version one") && versions.contains("version two"), versions.toString());
        assertEquals("version two", get(s, "/"));
    }

    @Test
    void rollbackRestoresTheEarlierDeployment(AtriumServer server) throws Exception {
        User u = server.newUser();
        Svc s = service(u, "rollback");
        String one = deploy(u, s, "one", Map.of());
        String two = deploy(u, s, "two", Map.of());
        assertEquals("version two", get(s, "/"));
        Http.Reply back = u.http().post("/api/services/" + s.id() + "/deployments/rollback", null);
        assertEquals(200, back.status(), back.body());
        assertEquals(one, back.get("deployment").get("id").asText());
        assertEquals("version one", get(s, "/"));
        assertEquals(
                one,
                u.http()
                        .get("/api/services/" + s.id())
                        .get("service")
                        .get("current_deployment_id")
                        .asText());
        assertEquals(
                "superseded",
                u.http()
                        .get("/api/services/" + s.id() + "/deployments/" + two)
                        .get("deployment")
                        .get("status")
                        .asText());
        Http.Reply forward =
                u.http().post("/api/services/" + s.id() + "/deployments/rollback", Map.of("deployment_id", two));
        assertEquals(200, forward.status(), forward.body());
        assertEquals("version two", get(s, "/"));
        assertEquals(
                409,
                u.http()
                        .post("/api/services/" + s.id() + "/deployments/rollback", Map.of("deployment_id", two))
                        .status());
    }

    @Test
    void aCanaryAtTenPercentServesTenPercentOf2000RequestsUntilAbortedOrPromoted(AtriumServer server) throws Exception {
        User u = server.newUser();
        Svc s = service(u, "canary");
        deploy(u, s, "old", Map.of());
        String canary = deploy(u, s, "new", Map.of("strategy", "canary"));
        JsonNode svc = u.http().get("/api/services/" + s.id()).get("service");
        assertEquals(canary, svc.get("canary_deployment_id").asText());
        assertEquals(10, svc.get("canary_percent").asInt());
        int fresh = 0;
        for (int i = 0; i < 2000; i++) {
            String text = get(s, "/");
            if (text.equals("version new")) {
                fresh++;
            } else {
                assertEquals("version old", text);
            }
        }
        assertTrue(fresh >= 140 && fresh <= 260, fresh + " of 2000 went to the canary");
        assertEquals(
                200,
                u.http()
                        .post("/api/services/" + s.id() + "/deployments/" + canary + "/abort", null)
                        .status());
        for (int i = 0; i < 200; i++) {
            assertEquals("version old", get(s, "/"));
        }
        String next = deploy(u, s, "newer", Map.of("strategy", "canary", "canary_percent", 50));
        assertEquals(
                200,
                u.http()
                        .post("/api/services/" + s.id() + "/deployments/" + next + "/promote", null)
                        .status());
        for (int i = 0; i < 50; i++) {
            assertEquals("version newer", get(s, "/"));
        }
        assertEquals(
                409,
                u.http()
                        .post("/api/services/" + s.id() + "/deployments/" + next + "/abort", null)
                        .status());
    }

    @Test
    void aWorkerCannotReachAnotherServicesBindings(AtriumServer server) throws Exception {
        User u = server.newUser();
        Svc a = service(u, "attacker");
        Svc b = service(u, "victim");
        String kv = u.http()
                .post("/api/resources", Map.of("name", "victim-kv", "type", "kv"))
                .get("resource")
                .get("id")
                .asText();
        assertEquals(
                200,
                u.http()
                        .patch(
                                "/api/services/" + b.id() + "/bindings",
                                Map.of("bindings", List.of(Map.of("name", "CACHE", "resource_id", kv))))
                        .status());
        String victim = deploy(u, b, "victim", Map.of());
        deploy(u, a, "attacker", Map.of());
        // the attacker's code guesses the victim's internal binding URL (deployment id and config revisions 1..5)
        for (int rev = 1; rev <= 5; rev++) {
            String target = "http://127.0.0.1:" + server.port + "/internal/bindings/" + victim + "-r" + rev
                    + "/CACHE/stolen?urlencoded=true";
            String answer = get(a, "/forge?target=" + java.net.URLEncoder.encode(target, StandardCharsets.UTF_8));
            assertNotEquals("status 200", answer, answer);
            // and the same forged request from outside the worker
            RawHttp.Response direct = HostHttp.send(
                    server.port,
                    "127.0.0.1:" + server.port,
                    "PUT",
                    "/internal/bindings/" + victim + "-r" + rev + "/CACHE/stolen",
                    Map.of("X-Atrium-Binding-Secret", "guess"),
                    "forged".getBytes(StandardCharsets.UTF_8));
            assertEquals(404, direct.status());
        }
        assertEquals(
                404, u.http().get("/api/resources/" + kv + "/kv/entries/stolen").status());
    }

    @Test
    void deletingAServiceStopsItsDeployments(AtriumServer server) throws Exception {
        User u = server.newUser();
        Svc s = service(u, "deleted");
        deploy(u, s, "one", Map.of());
        assertEquals("version one", get(s, "/"));
        assertEquals(200, u.http().delete("/api/services/" + s.id()).status());
        RawHttp.Response gone = HostHttp.get(server.port, s.host(), "/");
        assertEquals(404, gone.status());
        assertEquals(
                "NOT_FOUND",
                Http.JSON.readTree(gone.body()).path("error").path("code").asText());
    }

    /** Every path of a service's own host is the service's: the binding gateway's path prefix does not take it. */
    @Test
    void aServicesHostKeepsThePathsTheBindingGatewayClaimsElsewhere(AtriumServer server) throws Exception {
        User u = server.newUser();
        Svc s = service(u, "ownpaths");
        deploy(u, s, "paths", Map.of());
        assertEquals("version paths", get(s, "/internal/bindings/anything/CACHE"));
    }

    @Test
    void theCliDeploysAFileAndPrintsTheLogs(AtriumServer server) throws Exception {
        User u = server.newUser();
        Path file = Files.createTempFile("worker-", ".js");
        file.toFile().deleteOnExit();
        Files.writeString(file, WORKER.replace("VERSION", "cli"));
        String name = ServicesTest.unique("cli");
        Commands.Result deployed = Commands.atrium(
                "service",
                "deploy",
                "--space",
                u.defaultSpaceId(),
                "--name",
                name,
                file.toString(),
                "--url",
                server.base(),
                "--token",
                u.http().token());
        assertEquals(0, deployed.exit(), deployed.stderr());
        assertTrue(deployed.stdout().contains("created service " + name), deployed.stdout());
        String host = java.net.URI.create(deployed.lastLine()).getHost();
        assertEquals("version cli", HostHttp.text(HostHttp.get(server.port, host, "/logged")));
        Commands.Result again = Commands.atrium(
                "service",
                "deploy",
                "--space",
                u.defaultSpaceId(),
                "--name",
                name,
                file.toString(),
                "--url",
                server.base(),
                "--token",
                u.http().token());
        assertEquals(0, again.exit(), again.stderr());
        assertFalse(again.stdout().contains("created service"), again.stdout());
        Commands.Result logs = null;
        for (int i = 0; i < 40; i++) {
            logs = Commands.atrium(
                    "service",
                    "logs",
                    name,
                    "--url",
                    server.base(),
                    "--token",
                    u.http().token());
            if (logs.stdout().contains("served /logged by cli")) {
                break;
            }
            Thread.sleep(100);
        }
        assertEquals(0, logs.exit(), logs.stderr());
        assertTrue(logs.stdout().contains("served /logged by cli"), logs.stdout());
        assertEquals(
                2,
                Commands.atrium(
                                "service",
                                "deploy",
                                "--name",
                                name,
                                file.toString(),
                                "--url",
                                server.base(),
                                "--token",
                                u.http().token())
                        .exit());
        assertEquals(
                1,
                Commands.atrium(
                                "service",
                                "logs",
                                "no-such-service",
                                "--url",
                                server.base(),
                                "--token",
                                u.http().token())
                        .exit());
    }

    @Test
    void stoppingTheServicesFeatureLeavesNoWorkerRunningAndEnablingItServesAgain(AtriumServer server) throws Exception {
        User u = server.newUser();
        Svc s = service(u, "feature");
        deploy(u, s, "one", Map.of());
        assertEquals("version one", get(s, "/"));
        assertTrue(workerdProcesses(server) > 0);
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/services/disable", Map.of())
                            .status());
            long deadline = System.currentTimeMillis() + 20_000;
            while (workerdProcesses(server) > 0 && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
            }
            assertEquals(0, workerdProcesses(server), "workerd processes left after the services feature stopped");
            assertEquals(404, u.http().get("/api/services/" + s.id()).status());
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/services/enable", Map.of())
                            .status());
        }
        RawHttp.Response r = null;
        for (int i = 0; i < 100; i++) {
            r = HostHttp.get(server.port, s.host(), "/");
            if (r.status() == 200) {
                break;
            }
            Thread.sleep(100);
        }
        assertEquals("version one", HostHttp.text(r));
    }

    /** workerd processes under the server's JVM. */
    static long workerdProcesses(AtriumServer server) {
        return server.process
                .toHandle()
                .descendants()
                .filter(p -> p.info().command().orElse("").contains("workerd")
                        || p.info().commandLine().orElse("").contains("workerd serve"))
                .count();
    }
}
