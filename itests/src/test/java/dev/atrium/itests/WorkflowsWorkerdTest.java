package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * workflow resources end to end with the real workerd and PostgreSQL: the code's {@code env.FLOW} is Cloudflare's
 * Workflow binding, its exported {@code WorkflowEntrypoint} class runs in Atrium's engine, steps are stored, retried,
 * replayed after the workerd child is killed, and sleeps suspend the instance. Steps count their runs in a kv resource
 * the test reads through the resources API.
 */
@SharedServer
class WorkflowsWorkerdTest {

    static final String WORKER = """
            import { WorkflowEntrypoint } from "cloudflare:workers";
            export class Flow extends WorkflowEntrypoint {
              async run(event, step) {
                const id = event.instanceId;
                const p = event.payload ?? {};
                const bump = async (k) => {
                  const n = Number((await this.env.KV.get(id + "." + k)) ?? "0") + 1;
                  await this.env.KV.put(id + "." + k, String(n));
                  return n;
                };
                const first = await step.do("first", async () => { await bump("first"); return { doubled: (p.x ?? 0) * 2 }; });
                if (p.mode === "flaky") {
                  const v = await step.do("flaky", { retries: { limit: 3, delay: 100, backoff: "constant" } }, async () => {
                    const n = await bump("flaky");
                    if (n < 3) throw new Error("flaky attempt " + n);
                    return "ok after " + n;
                  });
                  const used = await step.do("use", async () => { await bump("use"); return v + "!"; });
                  return { first, v, used };
                }
                if (p.mode === "doomed") {
                  await step.do("doomed", { retries: { limit: 2, delay: 50, backoff: "linear" } }, async () => {
                    await bump("doomed");
                    throw new Error("always broken");
                  });
                  return { unreachable: true };
                }
                if (p.mode === "sleep") {
                  const before = await step.do("before", async () => Date.now());
                  await step.sleep("nap", "1 second");
                  const after = await step.do("after", async () => { await bump("after"); return Date.now(); });
                  return { slept: after - before };
                }
                if (p.mode === "hang") {
                  const v = await step.do("wait-for-go", async () => {
                    await bump("hang");
                    for (;;) {
                      if ((await this.env.KV.get("go." + id)) === "yes") return "went";
                      await new Promise((r) => setTimeout(r, 100));
                    }
                  });
                  return { first, v };
                }
                return { first };
              }
            }
            export default {
              async fetch(request, env) {
                const url = new URL(request.url);
                const q = url.searchParams;
                try {
                  if (url.pathname === "/create") {
                    const i = await env.FLOW.create({ id: q.get("id") ?? undefined, params: JSON.parse(q.get("params") ?? "{}") });
                    return Response.json({ id: i.id });
                  }
                  if (url.pathname === "/status") return Response.json(await (await env.FLOW.get(q.get("id"))).status());
                } catch (e) {
                  return new Response("error " + e.message);
                }
                return new Response("workflows here");
              }
            };
            """;

    private AtriumServer server;

    @BeforeEach
    void needsWorkerd(AtriumServer server) throws Exception {
        this.server = server;
        Assumptions.assumeTrue(
                ServicesWorkerdTest.workerdPresent(server), "the workerd deployment provider is not in the runtime");
    }

    record Flow(User user, String service, String host, String deployment, String kv, String workflow) {}

    Flow deployFlow(String name) throws Exception {
        User u = server.newUser();
        String id = ServicesTest.createService(u, ServicesTest.unique(name));
        String slug =
                u.http().get("/api/services/" + id).get("service").get("slug").asText();
        String kv = u.http()
                .post("/api/resources", Map.of("name", "counts", "type", "kv"))
                .get("resource")
                .get("id")
                .asText();
        Http.Reply wf = u.http()
                .post(
                        "/api/resources",
                        Map.of("name", "flow", "type", "workflow", "config", Map.of("class_name", "Flow")));
        assertEquals(201, wf.status(), wf.body());
        Http.Reply bound = u.http()
                .patch(
                        "/api/services/" + id + "/bindings",
                        Map.of(
                                "bindings",
                                List.of(
                                        Map.of("name", "KV", "resource_id", kv),
                                        Map.of("name", "FLOW", "resource_name", "flow"))));
        assertEquals(200, bound.status(), bound.body());
        Http.Reply d = u.http()
                .post(
                        "/api/services/" + id + "/deployments",
                        Map.of("bundle", Base64.getEncoder().encodeToString(WORKER.getBytes(StandardCharsets.UTF_8))));
        assertEquals(201, d.status(), d.body());
        return new Flow(
                u,
                id,
                slug + ".apps.localhost",
                d.get("deployment").get("id").asText(),
                kv,
                wf.get("resource").get("id").asText());
    }

    String get(Flow f, String path) throws Exception {
        RawHttp.Response r = HostHttp.get(server.port, f.host(), path);
        assertEquals(200, r.status(), HostHttp.text(r));
        return HostHttp.text(r);
    }

    String create(Flow f, String id, String params) throws Exception {
        String out =
                get(f, "/create?id=" + id + "&params=" + java.net.URLEncoder.encode(params, StandardCharsets.UTF_8));
        assertEquals(id, Http.JSON.readTree(out).path("id").asText(), out);
        return id;
    }

    JsonNode status(Flow f, String id) throws Exception {
        return Http.JSON.readTree(get(f, "/status?id=" + id));
    }

    /** Polls the instance's status through the worker until it is {@code expected}. */
    JsonNode await(Flow f, String id, String expected, long millis) throws Exception {
        JsonNode s = null;
        long deadline = System.currentTimeMillis() + millis;
        while (System.currentTimeMillis() < deadline) {
            RawHttp.Response r = HostHttp.get(server.port, f.host(), "/status?id=" + id);
            if (r.status() != 200) {
                // 502 while a killed workerd child is restarted
                Thread.sleep(100);
                continue;
            }
            s = Http.JSON.readTree(HostHttp.text(r));
            if (expected.equals(s.path("status").asText())) {
                return s;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("instance " + id + " is not " + expected + ": " + s);
    }

    String count(Flow f, String key) {
        Http.Reply r = f.user().http().get("/api/resources/" + f.kv() + "/kv/entries/" + key);
        return r.status() == 404 ? "0" : r.body();
    }

    @Test
    void anInstanceCreatedByTheWorkerRunsItsStepsAndItsOutputIsItsStatus() throws Exception {
        Flow f = deployFlow("wf-basic");
        create(f, "basic-1", "{\"x\":21}");
        JsonNode done = await(f, "basic-1", "complete", 30_000);
        assertEquals(42, done.path("output").path("first").path("doubled").asInt(), done.toString());
        assertEquals("1", count(f, "basic-1.first"));
        // the same id again is Cloudflare's instance.already_exists; a missing one is instance.not_found
        String dup = get(f, "/create?id=basic-1");
        assertTrue(dup.startsWith("error ") && dup.contains("already_exists"), dup);
        String missing = get(f, "/status?id=nope");
        assertTrue(missing.startsWith("error ") && missing.contains("not_found"), missing);
        // a generated id when none is given
        String generated =
                Http.JSON.readTree(get(f, "/create?params=%7B%7D")).path("id").asText();
        assertEquals(36, generated.length(), generated);
        await(f, generated, "complete", 30_000);
    }

    @Test
    void aStepThatFailsTwiceIsRetriedAndItsResultIsUsedOnce() throws Exception {
        Flow f = deployFlow("wf-flaky");
        create(f, "flaky-1", "{\"x\":1,\"mode\":\"flaky\"}");
        JsonNode done = await(f, "flaky-1", "complete", 30_000);
        assertEquals("ok after 3", done.path("output").path("v").asText(), done.toString());
        assertEquals("ok after 3!", done.path("output").path("used").asText(), done.toString());
        assertEquals("3", count(f, "flaky-1.flaky"), "two failed attempts and one that succeeded");
        assertEquals("1", count(f, "flaky-1.first"), "a completed step is not run again by the retries");
        assertEquals("1", count(f, "flaky-1.use"));
    }

    @Test
    void aStepFailingBeyondItsRetryLimitLeavesTheInstanceErroredWithItsMessage() throws Exception {
        Flow f = deployFlow("wf-doomed");
        create(f, "doomed-1", "{\"mode\":\"doomed\"}");
        JsonNode errored = await(f, "doomed-1", "errored", 30_000);
        assertEquals("always broken", errored.path("error").path("message").asText(), errored.toString());
        assertEquals("3", count(f, "doomed-1.doomed"), "the first attempt and its 2 retries");
    }

    @Test
    void aOneSecondSleepSuspendsTheInstanceAndResumesIt() throws Exception {
        Flow f = deployFlow("wf-sleep");
        create(f, "sleep-1", "{\"mode\":\"sleep\"}");
        await(f, "sleep-1", "waiting", 10_000);
        JsonNode done = await(f, "sleep-1", "complete", 30_000);
        long slept = done.path("output").path("slept").asLong();
        assertTrue(slept >= 1000 && slept < 10_000, done.toString());
        assertEquals("1", count(f, "sleep-1.after"));
    }

    @Test
    void aCompletedStepIsNotRunAgainAfterTheWorkerdChildIsKilledMidInstance() throws Exception {
        Flow f = deployFlow("wf-crash");
        create(f, "crash-1", "{\"x\":5,\"mode\":\"hang\"}");
        long deadline = System.currentTimeMillis() + 30_000;
        while (!"1".equals(count(f, "crash-1.hang")) && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        assertEquals("1", count(f, "crash-1.hang"), "the step that waits has started");
        assertEquals("running", status(f, "crash-1").path("status").asText());
        // kill -9 the workerd child that runs this deployment (found by its configuration, which names the deployment)
        List<ProcessHandle> victims = server.process
                .toHandle()
                .descendants()
                .filter(p -> p.info().command().orElse("").endsWith("/workerd"))
                .filter(p -> {
                    String[] args = p.info().arguments().orElse(new String[0]);
                    for (String a : args) {
                        try {
                            if (a.endsWith("config.capnp")
                                    && Files.readString(Path.of(a)).contains(f.deployment())) {
                                return true;
                            }
                        } catch (java.io.IOException e) {
                            return false;
                        }
                    }
                    return false;
                })
                .toList();
        assertEquals(1, victims.size(), "one workerd runs the deployment");
        victims.get(0).destroyForcibly();
        // the step is released and runs again in the restarted child; let it finish this time
        assertEquals(
                200,
                f.user()
                        .http()
                        .send(
                                "PUT",
                                "/api/resources/" + f.kv() + "/kv/entries/go.crash-1",
                                "yes",
                                "application/octet-stream")
                        .status());
        JsonNode done = await(f, "crash-1", "complete", 60_000);
        assertEquals("went", done.path("output").path("v").asText(), done.toString());
        assertEquals(10, done.path("output").path("first").path("doubled").asInt(), done.toString());
        assertEquals("1", count(f, "crash-1.first"), "the completed step was replayed, not run again");
        assertEquals("2", count(f, "crash-1.hang"), "the interrupted step ran again");
    }

    @Test
    void anotherPrincipalCannotBindTheWorkflowAndAClassNameMustBeAnIdentifier() throws Exception {
        User owner = server.newUser();
        User stranger = server.newUser();
        String wf = owner.http()
                .post(
                        "/api/resources",
                        Map.of("name", "mine", "type", "workflow", "config", Map.of("class_name", "Flow")))
                .get("resource")
                .get("id")
                .asText();
        String service = ServicesTest.createService(stranger, ServicesTest.unique("wf-stranger"));
        Http.Reply refused = stranger.http()
                .patch(
                        "/api/services/" + service + "/bindings",
                        Map.of("bindings", List.of(Map.of("name", "FLOW", "resource_id", wf))));
        assertEquals(404, refused.status(), refused.body());
        for (Object bad : List.of("not-an-identifier", "1Flow", "", 42)) {
            Http.Reply r = owner.http()
                    .post(
                            "/api/resources",
                            Map.of("name", "bad", "type", "workflow", "config", Map.of("class_name", bad)));
            assertEquals(400, r.status(), bad + ": " + r.body());
        }
        Http.Reply missing = owner.http().post("/api/resources", Map.of("name", "bad", "type", "workflow"));
        assertEquals(400, missing.status(), missing.body());
    }
}
