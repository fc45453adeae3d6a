package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * durableObject resources run by workerd's own Durable Object support: a service's code exporting {@code Counter},
 * bound to a durableObject resource, reached through its Host name. Like {@link ServicesWorkerdTest}, these run only
 * when the workerd deployment provider is in the runtime.
 */
@SharedServer
class DurableObjectsWorkerdTest {

    static final String COUNTER = """
            import { DurableObject } from "cloudflare:workers";
            export class Counter extends DurableObject {
              async fetch(request) { return new Response(String(await this.add())); }
              async add() {
                const n = ((await this.ctx.storage.get("n")) || 0) + 1;
                await this.ctx.storage.put("n", n);
                return n;
              }
            }
            export default {
              async fetch(request, env) {
                const url = new URL(request.url);
                if (url.pathname === "/version") return new Response("VERSION");
                const stub = env.COUNTER.get(env.COUNTER.idFromName(url.searchParams.get("name")));
                if (url.pathname === "/rpc") return new Response(String(await stub.add()));
                return stub.fetch(request);
              }
            };
            """;

    static final String NO_CLASS = """
            export default { async fetch() { return new Response("no class here"); } };
            """;

    private AtriumServer server;

    @BeforeEach
    void needsWorkerd(AtriumServer server) throws Exception {
        this.server = server;
        Assumptions.assumeTrue(
                ServicesWorkerdTest.workerdPresent(server), "the workerd deployment provider is not in the runtime");
    }

    record Svc(String id, String host) {}

    Svc service(User u, String name) {
        String id = ServicesTest.createService(u, ServicesTest.unique(name));
        String slug =
                u.http().get("/api/services/" + id).get("service").get("slug").asText();
        return new Svc(id, slug + ".apps.localhost");
    }

    static Map<String, Object> bundle(String code) {
        return Map.of("bundle", Base64.getEncoder().encodeToString(code.getBytes(StandardCharsets.UTF_8)));
    }

    String get(Svc s, String path) throws Exception {
        RawHttp.Response r = HostHttp.get(server.port, s.host(), path);
        assertEquals(200, r.status(), HostHttp.text(r));
        return HostHttp.text(r);
    }

    String createCounter(User u, String name) {
        Http.Reply r = u.http()
                .post(
                        "/api/resources",
                        Map.of("name", name, "type", "durableObject", "config", Map.of("class_name", "Counter")));
        assertEquals(201, r.status(), r.body());
        return r.get("resource").get("id").asText();
    }

    Http.Reply bind(User u, Svc s, String resourceId) {
        return u.http()
                .patch(
                        "/api/services/" + s.id() + "/bindings",
                        Map.of("bindings", List.of(Map.of("name", "COUNTER", "resource_id", resourceId))));
    }

    /** The workerd processes of the server whose configuration names {@code resourceId} (the namespace's unique key). */
    List<ProcessHandle> workerdOf(String resourceId) {
        return server.process
                .toHandle()
                .descendants()
                .filter(p -> p.info().command().map(c -> c.endsWith("/workerd")).orElse(false))
                .filter(p -> p.info()
                        .arguments()
                        .map(a -> List.of(a).stream().anyMatch(arg -> {
                            try {
                                return arg.endsWith("config.capnp")
                                        && Files.readString(Path.of(arg)).contains(resourceId);
                            } catch (Exception e) {
                                return false;
                            }
                        }))
                        .orElse(false))
                .toList();
    }

    @Test
    void countersPerObjectNameSurviveANewDeploymentAndKillMinus9AndAMissingClassIsRefused() throws Exception {
        User u = server.newUser();
        Svc s = service(u, "counter");
        String res = createCounter(u, "counters");
        assertEquals(200, bind(u, s, res).status());
        assertEquals(
                201,
                u.http()
                        .post("/api/services/" + s.id() + "/deployments", bundle(COUNTER.replace("VERSION", "one")))
                        .status());

        assertEquals("1", get(s, "/?name=a"));
        assertEquals("2", get(s, "/?name=a"));
        assertEquals("3", get(s, "/rpc?name=a"), "RPC on the stub reaches the same object");
        assertEquals("1", get(s, "/?name=b"), "each name is its own object");
        assertEquals("2", get(s, "/?name=b"));

        // a new deployment (a new workerd process) keeps the counts
        assertEquals(
                201,
                u.http()
                        .post("/api/services/" + s.id() + "/deployments", bundle(COUNTER.replace("VERSION", "two")))
                        .status());
        assertEquals("two", get(s, "/version"));
        assertEquals("4", get(s, "/?name=a"));
        assertEquals("3", get(s, "/?name=b"));

        // kill -9 of the workerd child: restarted, the counts kept
        List<ProcessHandle> workerd = workerdOf(res);
        assertFalse(workerd.isEmpty(), "no workerd process runs the namespace");
        workerd.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle p : workerd) {
            p.onExit().get(5, TimeUnit.SECONDS);
        }
        String after = null;
        for (long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(15); after == null && System.nanoTime() < end; ) {
            RawHttp.Response r = HostHttp.get(server.port, s.host(), "/?name=a");
            if (r.status() == 200) {
                after = HostHttp.text(r);
            } else {
                Thread.sleep(50);
            }
        }
        assertEquals("5", after);

        // code without the class is refused at deploy time with workerd's text; the current deployment keeps serving
        Http.Reply refused = u.http().post("/api/services/" + s.id() + "/deployments", bundle(NO_CLASS));
        assertEquals(400, refused.status(), refused.body());
        assertTrue(refused.body().contains("no such Durable Object class is exported"), refused.body());
        assertEquals("two", get(s, "/version"));
        assertEquals("6", get(s, "/?name=a"));

        // a class_name that is not a JavaScript identifier: 400 with the spec body
        Http.Reply bad = u.http()
                .post(
                        "/api/resources",
                        Map.of("name", "bad-do", "type", "durableObject", "config", Map.of("class_name", "2 Counter")));
        assertEquals(400, bad.status(), bad.body());
        assertTrue(bad.json().path("error").path("code").isTextual(), bad.body());
        Http.Reply none = u.http().post("/api/resources", Map.of("name", "bad-do2", "type", "durableObject"));
        assertEquals(400, none.status(), none.body());
    }

    @Test
    void aDurableObjectIsBoundToOneServiceAndItsStorageGoesWithTheResource() throws Exception {
        User u = server.newUser();
        Svc a = service(u, "do-a");
        Svc b = service(u, "do-b");
        String res = createCounter(u, "shared-counter");
        assertEquals(200, bind(u, a, res).status());
        assertEquals(
                201,
                u.http()
                        .post("/api/services/" + a.id() + "/deployments", bundle(COUNTER.replace("VERSION", "a")))
                        .status());
        assertEquals("1", get(a, "/?name=x"));
        Path storage = server.data.resolve("resources").resolve(res);
        try (var files = Files.list(storage)) {
            assertTrue(
                    files.anyMatch(f -> f.getFileName().toString().endsWith(".sqlite")),
                    "the objects are kept in the resource's directory");
        }

        // a second service: 409, by either route
        Http.Reply second = bind(u, b, res);
        assertEquals(409, second.status(), second.body());
        assertEquals("CONFLICT", second.json().path("error").path("code").asText(), second.body());
        assertTrue(second.body().contains("one service at a time"), second.body());
        Http.Reply viaResource = u.http().post("/api/resources/" + res + "/bind", Map.of("service_id", b.id()));
        assertEquals(409, viaResource.status(), viaResource.body());
        assertEquals("1", get(a, "/?name=y"), "the first service keeps its binding");
        // binding it again to the same service is fine
        assertEquals(200, bind(u, a, res).status());

        // another Principal cannot bind it at all (404, as a missing one)
        User stranger = server.newUser();
        Svc theirs = service(stranger, "do-stranger");
        assertEquals(404, bind(stranger, theirs, res).status());
        assertEquals(
                404,
                stranger.http()
                        .post("/api/resources/" + res + "/bind", Map.of("service_id", theirs.id()))
                        .status());

        // unbound from the first, the second may have it
        assertEquals(
                200,
                u.http()
                        .patch("/api/services/" + a.id() + "/bindings", Map.of("bindings", List.of()))
                        .status());
        assertEquals(200, bind(u, b, res).status());
        assertEquals(
                200,
                u.http()
                        .patch("/api/services/" + b.id() + "/bindings", Map.of("bindings", List.of()))
                        .status());

        // deleting the resource deletes its objects' storage
        assertEquals(200, u.http().delete("/api/resources/" + res).status());
        assertFalse(Files.exists(storage), "the objects' storage is gone with the resource");
    }
}
