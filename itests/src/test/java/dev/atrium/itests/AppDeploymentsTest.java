package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The app platform end to end (issue 37): an app repository with {@code app.yml}, a workflow that builds its worker in
 * a real container, and a kv resource, deployed through {@code /api/spaces/:id/app-deployments}; the worker answers on
 * its hostname through Atrium's Host routing (workerd), a second commit rolls out as a canary whose shares are
 * counted, promote, rollback, abort under load, and the approvals an OAuth client needs.
 */
@SharedServer
class AppDeploymentsTest {

    @TempDir
    Path tmp;

    static final String WORKER = """
            export default {
              async fetch(request, env) {
                const url = new URL(request.url);
                const q = url.searchParams;
                if (url.pathname === "/kv/put") { await env.NOTES.put(q.get("k"), q.get("v")); return new Response("ok"); }
                if (url.pathname === "/kv/get") return new Response((await env.NOTES.get(q.get("k"))) ?? "null");
                if (url.pathname.endsWith("/who")) return new Response(env.WHO ?? "none");
                if (url.pathname === "/env") return Response.json({ greeting: env.GREETING ?? null, client: env.OAUTH_CLIENT_ID ?? null, secret: env.OAUTH_CLIENT_SECRET ? "set" : null });
                if ("VERSION" === "broken") return new Response("boom", { status: 500 });
                return new Response("version VERSION");
              }
            };
            """;

    static final String WORKFLOW = """
            name: build
            on: workflow_dispatch
            jobs:
              build:
                runs-on: busybox
                steps:
                  - uses: actions/checkout@v4
                  - run: mkdir -p dist && sed "s/VERSION/$(cat VERSION)/" worker.js > dist/worker.js
                  - uses: actions/upload-artifact@v4
                    with:
                      name: worker
                      path: dist/worker.js
            """;

    static String manifest(String version, String oauth) {
        return """
                apiVersion: atrium.dev/v1alpha1
                kind: App
                metadata:
                  name: notes
                spec:
                  version: "VERSION"
                OAUTH  resources:
                    notes:
                      type: kv
                  workers:
                    web:
                      build:
                        fromWorkflow:
                          path: .atrium/workflows/build.yml
                          job: build
                          artifact: worker
                          artifactPath: worker.js
                      env:
                        GREETING: hello
                      bindings:
                        NOTES: notes
                      routes:
                        - name: main
                          target: web
                          path: /
                  mcp:
                    - name: notes-tools
                      target: web
                      path: /mcp
                  fileHandlers:
                    - name: notes-viewer
                      target: web
                      path: /open
                      mimeTypes:
                        - text/markdown
                      extensions:
                        - .md
                """.replace("VERSION", version).replace("OAUTH", oauth);
    }

    static String oauth(String redirect) {
        return """
                  oauth:
                    clientName: Notes
                    redirectUris:
                      - REDIRECT
                    scopes:
                      - openid
                    autoEnv: true
                """.replace("REDIRECT", redirect);
    }

    static JsonNode json(String text) throws Exception {
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(text);
    }

    record App(User owner, String repoId, Path work, GitClient git) {}

    App repository(User owner, String name, String version, String oauth) throws Exception {
        return repository(owner, name, version, oauth, "private");
    }

    App repository(User owner, String name, String version, String oauth, String visibility) throws Exception {
        Http.Reply r = owner.http()
                .post(
                        "/api/spaces/" + owner.defaultSpaceId() + "/repos",
                        Map.of("name", name, "visibility", visibility));
        assertEquals(201, r.status(), r.body());
        GitClient git = new GitClient(tmp.resolve("home"), owner.http().token());
        Path work = git.newWorkingCopy(
                tmp.resolve("work-" + name),
                "app.yml",
                manifest(version, oauth),
                ".atrium/workflows/build.yml",
                WORKFLOW,
                "worker.js",
                WORKER,
                "VERSION",
                "one\n");
        git.ok(
                work,
                "remote",
                "add",
                "origin",
                r.get("repository").get("clone_url").asText());
        git.ok(work, "push", "-q", "origin", "main");
        return new App(owner, r.get("repository").get("id").asText(), work, git);
    }

    void commit(App app, String workerVersion, String manifest) throws Exception {
        Files.writeString(app.work().resolve("VERSION"), workerVersion + "\n");
        Files.writeString(app.work().resolve("app.yml"), manifest);
        app.git().ok(app.work(), "commit", "-q", "-am", "version " + workerVersion);
        app.git().ok(app.work(), "push", "-q", "origin", "main");
    }

    static String deployments(User u) {
        return "/api/spaces/" + u.defaultSpaceId() + "/app-deployments";
    }

    static Http.Reply deploy(App app, Map<String, Object> extra) {
        Map<String, Object> body = new java.util.HashMap<>(extra);
        body.put(
                "source",
                Map.of("kind", "git_ref", "repository_id", app.repoId(), "ref", "main", "ref_type", "branch"));
        return app.owner().http().post(deployments(app.owner()), body);
    }

    static String text(AtriumServer server, String host, String path) throws Exception {
        RawHttp.Response r = HostHttp.get(server.port, host, path);
        assertEquals(200, r.status(), HostHttp.text(r));
        return HostHttp.text(r);
    }

    /** How many of {@code n} requests the version {@code v} answered; every one must succeed. */
    static int share(AtriumServer server, String host, String v, int n) throws Exception {
        int hits = 0;
        for (int i = 0; i < n; i++) {
            String t = text(server, host, "/");
            assertTrue(t.startsWith("version "), t);
            if (t.equals("version " + v)) {
                hits++;
            }
        }
        return hits;
    }

    @Test
    void anAppDeploysFromItsRepositoryRollsOutACanaryAndRollsBackKeepingItsData(AtriumServer server) throws Exception {
        User owner = server.newUser();
        App app = repository(owner, "notes-app", "1", "");

        // atrium deploy validate reads the checkout's app.yml without a server; atrium deploy deploys it
        Commands.Result valid = Commands.atriumIn(app.work(), Map.of(), "deploy", "validate");
        assertEquals(0, valid.exit(), valid.stdout() + valid.stderr());
        assertTrue(valid.stdout().contains("valid: notes 1"), valid.stdout());
        Commands.Result cli = Commands.atrium(
                "deploy",
                "--space",
                owner.defaultSpaceId(),
                "--repo",
                app.repoId(),
                "--ref",
                "main",
                "--url",
                server.base(),
                "--token",
                owner.http().token());
        assertEquals(0, cli.exit(), cli.stdout() + cli.stderr());
        assertTrue(cli.stdout().contains("serving at"), cli.stdout());
        Http.Reply first = owner.http().get(deployments(owner));
        assertEquals(1, first.get("app_deployments").size(), first.body());
        JsonNode record = first.get("app_deployments").get(0);
        assertEquals("applied", record.get("status").asText(), first.body());
        assertEquals("1", record.get("manifest_version").asText());
        assertEquals("notes", record.get("group").get("name").asText());
        assertEquals("available", record.get("snapshot").get("state").asText());
        assertTrue(record.get("snapshot").get("rollback_ready").asBoolean());
        assertEquals(app.repoId(), record.get("source").get("resolved_repo_id").asText());
        assertEquals(40, record.get("source").get("commit_sha").asText().length());
        assertTrue(cli.stdout().contains(record.get("hostnames").get(0).asText()), cli.stdout());
        String host = record.get("hostnames").get(0).asText();
        assertEquals("version one", text(server, host, "/"));
        assertEquals("ok", text(server, host, "/kv/put?k=kept&v=42"));
        assertTrue(text(server, host, "/env").contains("\"greeting\":\"hello\""));

        // its MCP endpoint is one of the workspace's MCP servers, managed by the group: the owner may disable it, only
        // a deploy changes or removes it; its file handler is among the workspace's, and only that workspace's
        String groupId = record.get("group").get("id").asText();
        JsonNode servers = owner.http()
                .get("/api/mcp/servers?space_id=" + owner.defaultSpaceId())
                .get("servers");
        assertEquals(1, servers.size(), servers.toString());
        JsonNode tools = servers.get(0);
        assertEquals("notes-tools", tools.get("name").asText());
        assertEquals("https://" + host + "/mcp", tools.get("url").asText());
        assertEquals("app-group:" + groupId, tools.get("managed_by").asText());
        String toolsUrl = "/api/mcp/servers/" + tools.get("id").asText();
        Http.Reply renamed = owner.http().patch(toolsUrl, Map.of("url", "https://elsewhere.example/mcp"));
        assertEquals(409, renamed.status(), renamed.body());
        assertTrue(renamed.body().contains("managed by app-group:" + groupId), renamed.body());
        assertEquals(409, owner.http().delete(toolsUrl).status());
        assertEquals(
                false,
                owner.http()
                        .patch(toolsUrl, Map.of("enabled", false))
                        .get("server")
                        .get("enabled")
                        .asBoolean());
        JsonNode viewer = null;
        for (JsonNode h : owner.http()
                .get("/api/spaces/" + owner.defaultSpaceId() + "/storage/file-handlers")
                .get("handlers")) {
            if (h.get("kind").asText().equals("app")) {
                assertNull(viewer, "one app handler");
                viewer = h;
            }
        }
        assertNotNull(viewer, "the app's file handler is listed");
        assertEquals("notes-viewer", viewer.get("name").asText());
        assertEquals("https://" + host + "/open", viewer.get("url").asText());
        assertEquals(List.of("md"), List.of(viewer.get("extensions").get(0).asText()));
        assertEquals("text/markdown", viewer.get("mime_types").get(0).asText());
        String appId = null;
        for (JsonNode a : owner.http().get("/api/apps").get("apps")) {
            if (!a.get("builtin").asBoolean()) {
                appId = a.get("id").asText();
            }
        }
        assertEquals(appId, viewer.get("app_id").asText());
        User stranger = server.newUser();
        assertEquals(
                0,
                stranger
                        .http()
                        .get("/api/spaces/" + stranger.defaultSpaceId() + "/storage/file-handlers")
                        .get("handlers")
                        .findValues("app_id")
                        .stream()
                        .filter(JsonNode::isTextual)
                        .count());
        assertEquals(404, stranger.http().get(toolsUrl + "/tools").status());

        // an unchanged second deploy changes nothing
        Http.Reply same = deploy(app, Map.of());
        assertEquals(201, same.status(), same.body());
        assertEquals(0, same.get("apply_result").get("applied").size(), same.body());

        commit(app, "two", manifest("2", ""));
        Http.Reply canary = deploy(
                app,
                Map.of(
                        "strategy",
                        "canary",
                        "canary",
                        Map.of("steps", List.of(Map.of("weight", 10), Map.of("weight", 50)))));
        assertEquals(201, canary.status(), canary.body());
        String canaryId = canary.get("app_deployment").get("id").asText();
        assertEquals("rolling_out", canary.get("app_deployment").get("status").asText());
        String rollout = deployments(owner) + "/" + canaryId + "/rollout";
        JsonNode state = owner.http().get(rollout).get("rollout");
        assertEquals("progressing", state.get("state").asText(), state.toString());
        assertEquals(10, state.get("weight").asInt());
        int at10 = share(server, host, "two", 200);
        assertTrue(at10 >= 4 && at10 <= 45, "version two answered " + at10 + " of 200 at 10 %");

        JsonNode promoted = owner.http().post(rollout + "/promote", Map.of()).get("rollout");
        assertEquals(50, promoted.get("weight").asInt(), promoted.toString());
        int at50 = share(server, host, "two", 200);
        assertTrue(at50 >= 60 && at50 <= 140, "version two answered " + at50 + " of 200 at 50 %");

        JsonNode done = owner.http().post(rollout + "/promote", Map.of()).get("rollout");
        assertEquals("completed", done.get("state").asText(), done.toString());
        assertEquals(200, share(server, host, "two", 50) * 4);
        assertEquals(
                "applied",
                owner.http()
                        .get(deployments(owner) + "/" + canaryId)
                        .get("app_deployment")
                        .get("status")
                        .asText());
        assertEquals(409, owner.http().post(rollout + "/pause", Map.of()).status());

        Commands.Result back = Commands.atrium(
                "deploy",
                "rollback",
                record.get("id").asText(),
                "--space",
                owner.defaultSpaceId(),
                "--url",
                server.base(),
                "--token",
                owner.http().token());
        assertEquals(0, back.exit(), back.stdout() + back.stderr());
        JsonNode newest =
                owner.http().get(deployments(owner)).get("app_deployments").get(0);
        assertEquals(
                record.get("id").asText(),
                newest.get("rollback_of_app_deployment_id").asText());
        Commands.Result status = Commands.atrium(
                "deploy",
                "status",
                "--space",
                owner.defaultSpaceId(),
                "--url",
                server.base(),
                "--token",
                owner.http().token());
        assertEquals(0, status.exit(), status.stderr());
        assertTrue(status.stdout().contains(newest.get("id").asText()), status.stdout());
        assertEquals("version one", text(server, host, "/"));
        assertEquals("42", text(server, host, "/kv/get?k=kept"), "rollback keeps the kv data");

        // abort mid-canary: every request keeps succeeding, and the old version takes them all
        commit(app, "three", manifest("3", ""));
        Http.Reply third =
                deploy(app, Map.of("strategy", "canary", "canary", Map.of("steps", List.of(Map.of("weight", 50)))));
        assertEquals(201, third.status(), third.body());
        String thirdRollout =
                deployments(owner) + "/" + third.get("app_deployment").get("id").asText() + "/rollout";
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger ok = new AtomicInteger();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        List<Thread> clients = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        RawHttp.Response r = HostHttp.get(server.port, host, "/");
                        String t2 = HostHttp.text(r);
                        if (r.status() != 200 || !t2.startsWith("version ")) {
                            failures.add(r.status() + " " + t2);
                        } else {
                            ok.incrementAndGet();
                        }
                    } catch (Exception e) {
                        failures.add(e.toString());
                    }
                }
            });
            t.start();
            clients.add(t);
        }
        Thread.sleep(400);
        JsonNode aborted = owner.http().post(thirdRollout + "/abort", Map.of()).get("rollout");
        Thread.sleep(600);
        stop.set(true);
        for (Thread t : clients) {
            t.join();
        }
        assertEquals("aborted", aborted.get("state").asText(), aborted.toString());
        assertEquals(List.of(), List.copyOf(failures));
        assertTrue(ok.get() > 50, "only " + ok.get() + " requests");
        assertEquals(0, share(server, host, "three", 40), "after abort the old version takes every request");

        // a canary that answers with server errors is aborted by its error gate, without anyone pressing abort
        commit(app, "broken", manifest("4", ""));
        Http.Reply broken = deploy(
                app,
                Map.of(
                        "strategy",
                        "canary",
                        "canary",
                        Map.of("steps", List.of(Map.of("weight", 50)), "max_error_percent", 10)));
        assertEquals(201, broken.status(), broken.body());
        String brokenRollout = deployments(owner) + "/"
                + broken.get("app_deployment").get("id").asText() + "/rollout";
        JsonNode gated = null;
        long until = System.nanoTime() + 20_000_000_000L;
        int errors = 0;
        while (System.nanoTime() < until) {
            for (int i = 0; i < 10; i++) {
                if (HostHttp.get(server.port, host, "/").status() == 500) {
                    errors++;
                }
            }
            gated = owner.http().get(brokenRollout).get("rollout");
            if (gated.get("state").asText().equals("aborted")) {
                break;
            }
        }
        assertEquals("aborted", gated.get("state").asText(), gated.toString());
        assertTrue(errors > 0 && gated.get("message").asText().contains("server error"), gated.toString());
        assertEquals(0, share(server, host, "broken", 40), "after the gate the old version takes every request");
        assertEquals(
                "aborted",
                owner.http()
                        .get(deployments(owner) + "/"
                                + broken.get("app_deployment").get("id").asText())
                        .get("app_deployment")
                        .get("status")
                        .asText());

        // uninstall drains the group; its history cannot bring it back
        String group = record.get("group").get("id").asText();
        Http.Reply un = owner.http()
                .post("/api/spaces/" + owner.defaultSpaceId() + "/groups/uninstall", Map.of("group_name", "notes"));
        assertEquals(200, un.status(), un.body());
        assertEquals(
                404,
                owner.http()
                        .get("/api/spaces/" + owner.defaultSpaceId() + "/groups/" + group)
                        .status());
        assertEquals(0, owner.http().get("/api/resources").get("resources").size());
        assertEquals(
                0,
                owner.http()
                        .get("/api/mcp/servers?space_id=" + owner.defaultSpaceId())
                        .get("servers")
                        .size());
        assertEquals(
                0,
                owner
                        .http()
                        .get("/api/spaces/" + owner.defaultSpaceId() + "/storage/file-handlers")
                        .get("handlers")
                        .findValues("app_id")
                        .stream()
                        .filter(JsonNode::isTextual)
                        .count());
        assertNotEquals(200, HostHttp.get(server.port, host, "/").status());
        Http.Reply gone =
                owner.http().post(deployments(owner) + "/" + record.get("id").asText() + "/rollback", Map.of());
        assertEquals(409, gone.status(), gone.body());
        assertTrue(gone.body().contains("never brings a group back"), gone.body());
        assertEquals(
                404,
                owner.http()
                        .get("/api/spaces/" + owner.defaultSpaceId() + "/groups/" + group)
                        .status());
    }

    @Test
    void aRemoteSourceIsImportedOnceAndFetchedAgainOnEveryLaterDeploy(AtriumServer server) throws Exception {
        User owner = server.newUser();
        App app = repository(owner, "remote-app", "1", "", "public");
        // the same repository under another origin is a remote one (loopback egress is allowed on the test server)
        String remote = "http://localhost:" + server.port + "/git/" + owner.username() + "/remote-app.git";
        Map<String, Object> source =
                Map.of("kind", "git_ref", "repository_url", remote, "ref", "main", "ref_type", "branch");
        Http.Reply first = owner.http().post(deployments(owner), Map.of("source", source));
        assertEquals(201, first.status(), first.body());
        JsonNode record = first.get("app_deployment");
        String imported = record.get("source").get("resolved_repo_id").asText();
        assertNotEquals(app.repoId(), imported, "a remote source is imported into the workspace");
        assertEquals(remote, record.get("source").get("repository_url").asText());
        String host = record.get("hostnames").get(0).asText();
        assertEquals("version one", text(server, host, "/"));

        commit(app, "two", manifest("2", ""));
        Http.Reply second = owner.http().post(deployments(owner), Map.of("source", source));
        assertEquals(201, second.status(), second.body());
        assertEquals(
                imported,
                second.get("app_deployment")
                        .get("source")
                        .get("resolved_repo_id")
                        .asText(),
                "the import is reused");
        assertEquals("2", second.get("app_deployment").get("manifest_version").asText(), second.body());
        assertEquals("version two", text(server, host, "/"), "the later deploy fetched the remote's new commit");

        // under this server's own origin, the URL names the repository itself: a branch it lacks is its 404, and
        // nothing is imported (a remote would be, before its branch is looked for)
        int repos = owner.http()
                .get("/api/spaces/" + owner.defaultSpaceId() + "/repos")
                .get("repositories")
                .size();
        String local = server.base() + "/git/" + owner.username() + "/remote-app.git";
        Http.Reply own = owner.http()
                .post(
                        deployments(owner),
                        Map.of(
                                "source",
                                Map.of("kind", "git_ref", "repository_url", local, "ref", "no-such-branch"),
                                "approve",
                                List.of("source")));
        assertEquals(404, own.status(), own.body());
        assertTrue(own.body().contains("no branch no-such-branch"), own.body());
        assertEquals(
                repos,
                owner.http()
                        .get("/api/spaces/" + owner.defaultSpaceId() + "/repos")
                        .get("repositories")
                        .size());
    }

    /**
     * An OCI image archive made by a workflow job with busybox's own tools: a layer holding the static busybox and a
     * page, its config (busybox httpd on the port the manifest gives as PORT), manifest and index, their digests.
     */
    static final String BUILD_IMAGE = """
            set -e
            arch=amd64; [ "$(uname -m)" = aarch64 ] && arch=arm64
            rm -rf img && mkdir -p img/root/bin img/root/www img/blobs/sha256 dist
            cp /bin/busybox img/root/bin/busybox
            echo "container $(cat VERSION)" > img/root/www/index.html
            (cd img/root && tar -cf ../layer.tar bin www)
            blob() { d=$(sha256sum "$1" | cut -d' ' -f1); mv "$1" "img/blobs/sha256/$d"; echo "$d"; }
            size() { wc -c < "$1" | tr -d ' '; }
            ls=$(size img/layer.tar); ld=$(blob img/layer.tar)
            printf '{"architecture":"%s","os":"linux","config":{"Cmd":["/bin/busybox","sh","-c","exec /bin/busybox httpd -f -p $PORT -h /www"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$arch" "$ld" > img/config.json
            cs=$(size img/config.json); cd=$(blob img/config.json)
            printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' "$cd" "$cs" "$ld" "$ls" > img/manifest.json
            ms=$(size img/manifest.json); md=$(blob img/manifest.json)
            printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s}]}' "$md" "$ms" > img/index.json
            printf '{"imageLayoutVersion":"1.0.0"}' > img/oci-layout
            (cd img && tar -cf ../dist/image.tar oci-layout index.json blobs)
            """;

    static final String IMAGE_WORKFLOW = """
            name: image
            on: workflow_dispatch
            jobs:
              image:
                runs-on: busybox
                steps:
                  - uses: actions/checkout@v4
                  - run: sh build-image.sh
                  - uses: actions/upload-artifact@v4
                    with:
                      name: image
                      path: dist/image.tar
            """;

    static final String CONTAINER_APP = """
            apiVersion: atrium.dev/v1alpha1
            kind: App
            metadata:
              name: boxed
            spec:
              version: "1"
              containers:
                web:
                  image:
                    fromWorkflow: {path: .atrium/workflows/image.yml, job: image, artifact: image, artifactPath: image.tar}
                  port: 8081
                  healthPath: /index.html
                  memoryMb: 64
            """;

    @Test
    void aContainerAWorkflowBuiltServesOnItsHostnameAndIsReplacedByTheNextCommit(AtriumServer server) throws Exception {
        User owner = server.newUser();
        App app = repository(owner, "boxed-app", "1", "");
        Files.writeString(app.work().resolve("app.yml"), CONTAINER_APP);
        Files.writeString(app.work().resolve("build-image.sh"), BUILD_IMAGE);
        Files.createDirectories(app.work().resolve(".atrium/workflows"));
        Files.writeString(app.work().resolve(".atrium/workflows/image.yml"), IMAGE_WORKFLOW);
        app.git().ok(app.work(), "add", "-A");
        app.git().ok(app.work(), "commit", "-q", "-m", "a container");
        app.git().ok(app.work(), "push", "-q", "origin", "main");
        Http.Reply created = deploy(app, Map.of());
        assertEquals(201, created.status(), created.body());
        String host = created.get("app_deployment").get("hostnames").get(0).asText();
        assertEquals("container one\n", text(server, host, "/index.html"));
        String serviceId = null;
        for (JsonNode svc : owner.http()
                .get("/api/services?space_id=" + owner.defaultSpaceId())
                .get("services")) {
            if (svc.get("name").asText().equals("boxed-web")) {
                serviceId = svc.get("id").asText();
            }
        }
        assertNotNull(serviceId);
        JsonNode settings =
                owner.http().get("/api/services/" + serviceId + "/settings").get("settings");
        assertEquals(64, settings.get("limits").get("memory_mb").asInt(), settings.toString());
        JsonNode env = owner.http().get("/api/services/" + serviceId + "/env").json();
        assertTrue(env.toString().contains("\"PORT\"") && env.toString().contains("8081"), env.toString());

        commit(app, "two", CONTAINER_APP.replace("version: \"1\"", "version: \"2\""));
        Http.Reply next = deploy(app, Map.of());
        assertEquals(201, next.status(), next.body());
        assertEquals("container two\n", text(server, host, "/index.html"));
    }

    /** Two workers built by the same workflow; the front's routes send {@code /api} to the other. */
    static final String ROUTED = """
            apiVersion: atrium.dev/v1alpha1
            kind: App
            metadata:
              name: routed
            spec:
              version: "1"
              workers:
                web:
                  build:
                    fromWorkflow: {path: .atrium/workflows/build.yml, job: build, artifact: worker, artifactPath: worker.js}
                  env: {WHO: web}
                  routes:
                    - {name: main, target: web, path: /}
                    - {name: api, target: api, path: /api}
                api:
                  build:
                    fromWorkflow: {path: .atrium/workflows/build.yml, job: build, artifact: worker, artifactPath: worker.js}
                  env: {WHO: api}
            """;

    @Test
    void routesSendPathsOfAServicesHostnameToTheirTargets(AtriumServer server) throws Exception {
        User owner = server.newUser();
        App app = repository(owner, "routed-app", "1", "");
        Files.writeString(app.work().resolve("app.yml"), ROUTED);
        app.git().ok(app.work(), "commit", "-q", "-am", "two workers");
        app.git().ok(app.work(), "push", "-q", "origin", "main");
        Http.Reply created = deploy(app, Map.of());
        assertEquals(201, created.status(), created.body());
        List<String> hosts = new ArrayList<>();
        created.get("app_deployment").get("hostnames").forEach(h -> hosts.add(h.asText()));
        String web = hosts.stream()
                .filter(h -> h.startsWith("routed-web."))
                .findFirst()
                .orElseThrow();
        String api = hosts.stream()
                .filter(h -> h.startsWith("routed-api."))
                .findFirst()
                .orElseThrow();
        assertEquals("web", text(server, web, "/who"));
        assertEquals("api", text(server, web, "/api/who"), "the route under web sends /api to api");
        assertEquals("api", text(server, web, "/api/v1/who"));
        assertEquals("web", text(server, web, "/apix/who"), "a prefix matches whole segments");
        assertEquals("api", text(server, api, "/who"), "api keeps its own hostname");

        // without the route, /api is web's again; the routes are replaced, not added to
        Files.writeString(
                app.work().resolve("app.yml"), ROUTED.replace("        - {name: api, target: api, path: /api}\n", ""));
        app.git().ok(app.work(), "commit", "-q", "-am", "no api route");
        app.git().ok(app.work(), "push", "-q", "origin", "main");
        assertEquals(201, deploy(app, Map.of()).status());
        assertEquals("web", text(server, web, "/api/who"));
    }

    @Test
    void anOAuthClientNeedsApprovalAndItsCredentialsReachTheWorker(AtriumServer server) throws Exception {
        User owner = server.newUser();
        App app = repository(owner, "oauth-app", "1", oauth("https://notes.example/callback"));
        Http.Reply refused = deploy(app, Map.of());
        assertEquals(409, refused.status(), refused.body());
        assertEquals("APPROVAL_REQUIRED", refused.get("error").get("code").asText());
        assertTrue(refused.body().contains("oauth"), refused.body());

        Http.Reply ok = deploy(app, Map.of("approve", List.of("oauth")));
        assertEquals(201, ok.status(), ok.body());
        String host = ok.get("app_deployment").get("hostnames").get(0).asText();
        JsonNode env = json(text(server, host, "/env"));
        String clientId = env.get("client").asText();
        assertEquals("set", env.get("secret").asText());
        assertTrue(owner.http().get("/api/me/oauth/clients").body().contains(clientId));

        JsonNode apps = owner.http().get("/api/apps").get("apps");
        JsonNode mine = null;
        for (JsonNode a : apps) {
            if ("notes".equals(a.get("name").asText()) && !a.get("builtin").asBoolean()) {
                mine = a;
            }
        }
        assertTrue(mine != null && clientId.equals(mine.get("client_id").asText()), apps.toString());
        assertEquals("running", mine.get("health").asText());

        // the same client, unchanged: no approval; new redirect URIs: approval again
        assertEquals(201, deploy(app, Map.of()).status());
        commit(app, "one", manifest("1", oauth("https://notes.example/other")));
        Http.Reply changed = deploy(app, Map.of());
        assertEquals(409, changed.status(), changed.body());
        assertEquals(201, deploy(app, Map.of("approve", List.of("oauth"))).status());
        assertEquals(clientId, json(text(server, host, "/env")).get("client").asText(), "the client is kept");

        Http.Reply key = owner.http().post("/api/apps/" + mine.get("id").asText() + "/client-key", Map.of());
        assertEquals(200, key.status(), key.body());
        assertEquals(clientId, key.get("client_id").asText());
        assertFalse(key.get("client_secret").asText().isEmpty());
        assertEquals(403, owner.http().delete("/api/apps/app_builtin_account").status());
    }

    @Test
    void anotherPrincipalsRepositoryOrDeploymentIsMissing(AtriumServer server) throws Exception {
        User owner = server.newUser();
        User stranger = server.newUser();
        App app = repository(owner, "private-app", "1", "");
        Http.Reply theirs = stranger.http()
                .post(
                        deployments(stranger),
                        Map.of("source", Map.of("kind", "git_ref", "repository_id", app.repoId(), "ref", "main")));
        Http.Reply missing = stranger.http()
                .post(
                        deployments(stranger),
                        Map.of(
                                "source",
                                Map.of("kind", "git_ref", "repository_id", "repo_missing0000000", "ref", "main")));
        assertEquals(404, theirs.status(), theirs.body());
        assertEquals(missing.status(), theirs.status());
        assertEquals(
                missing.get("error").get("message").asText(),
                theirs.get("error").get("message").asText());

        // the owner's own MCP server of the manifest's name is not taken over: 409 until it is renamed
        Http.Reply own = owner.http()
                .post(
                        "/api/mcp/servers",
                        Map.of(
                                "space_id",
                                owner.defaultSpaceId(),
                                "name",
                                "notes-tools",
                                "url",
                                "http://127.0.0.1:9/mcp"));
        assertEquals(201, own.status(), own.body());
        Http.Reply taken = deploy(app, Map.of());
        assertEquals(409, taken.status(), taken.body());
        assertTrue(taken.body().contains("notes-tools") && taken.body().contains("its owner registered"), taken.body());
        assertEquals(
                200,
                owner.http()
                        .patch("/api/mcp/servers/" + own.get("server").get("id").asText(), Map.of("name", "my-tools"))
                        .status());
        assertEquals(201, deploy(app, Map.of()).status());
        JsonNode servers = owner.http()
                .get("/api/mcp/servers?space_id=" + owner.defaultSpaceId())
                .get("servers");
        assertEquals(2, servers.size(), servers.toString());
        assertTrue(servers.get(0).get("managed_by").isNull(), servers.toString());
        assertEquals("notes-tools", servers.get(1).get("name").asText(), servers.toString());

        Http.Reply bad = owner.http().post(deployments(owner), Map.of("source", Map.of("ref", "main")));
        assertEquals(400, bad.status(), bad.body());
        Files.writeString(
                app.work().resolve("app.yml"),
                "kind: Thing\nspec:\n  workers:\n    web:\n      routes: [{name: a, target: nowhere, path: /}]\n");
        app.git().ok(app.work(), "commit", "-q", "-am", "broken manifest");
        app.git().ok(app.work(), "push", "-q", "origin", "main");
        Http.Reply invalid = deploy(app, Map.of());
        assertEquals(422, invalid.status(), invalid.body());
        assertEquals("INVALID_MANIFEST", invalid.get("error").get("code").asText());
        assertTrue(invalid.body().contains("kind") && invalid.body().contains("line "), invalid.body());
    }
}
