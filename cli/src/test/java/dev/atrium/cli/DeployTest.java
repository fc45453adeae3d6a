package dev.atrium.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code atrium deploy …} and {@code atrium install …} against a loopback server speaking the app-deployment API. */
class DeployTest {

    private static final String BASE = "/api/spaces/alice/app-deployments";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final Main main = new Main(
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    private final List<FakeServer> servers = new ArrayList<>();

    DeployTest() {
        main.pollMillis = 5;
    }

    @AfterEach
    void stop() {
        servers.forEach(FakeServer::close);
    }

    private FakeServer server() throws Exception {
        FakeServer s = new FakeServer();
        servers.add(s);
        return s;
    }

    private int run(FakeServer s, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--url", s.url(), "--token", "tok-alice"));
        return main.run(all.toArray(String[]::new));
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    static String record(String id, String status, String... hostnames) {
        StringBuilder hosts = new StringBuilder();
        for (String h : hostnames) {
            hosts.append(hosts.length() == 0 ? "" : ",").append('"').append(h).append('"');
        }
        return """
                {"id":"%s","group":{"id":"g1","name":"hello"},"status":"%s","manifest_version":"1.2.0",
                 "hostnames":[%s],"rollback_of_app_deployment_id":null,
                 "snapshot":{"state":"ready","rollback_ready":true,"format":1},
                 "source":{"kind":"git_ref","repository_url":null,"ref":"main","ref_type":"branch",
                           "commit_sha":"0123456789abcdef0123456789abcdef01234567","resolved_repo_id":"r1"},
                 "created_at":"2026-12-01T10:00:00Z","updated_at":"2026-12-01T10:00:01Z"}""".formatted(id, status, hosts);
    }

    static String created(String record) {
        return "{\"app_deployment\":" + record
                + ",\"apply_result\":{\"applied\":[\"worker web\",\"route hello.apps.localhost\"],\"skipped\":[\"kv cache\"]}}";
    }

    static String rollout(String state, int step, int weight) {
        return """
                {"rollout":{"state":"%s","strategy":"canary","step":%d,
                 "steps":[{"weight":10,"hold_seconds":30},{"weight":50,"hold_seconds":30}],
                 "weight":%d,"updated_at":"2026-12-01T10:00:02Z"}}""".formatted(state, step, weight);
    }

    // ------------------------------------------------------------------ deploy

    @Test
    void aCanaryDeployPrintsEachStepAsItHappensAndEndsWithTheHostnames() throws Exception {
        FakeServer s = server().on("POST " + BASE, 201, created(record("ad1", "rolling_out")))
                .on(
                        "GET " + BASE + "/ad1/rollout",
                        200,
                        rollout("progressing", 0, 10),
                        rollout("progressing", 0, 10),
                        rollout("progressing", 1, 50),
                        rollout("completed", 1, 100))
                .on(
                        "GET " + BASE,
                        200,
                        "{\"app_deployments\":[" + record("ad1", "active", "hello.apps.localhost") + "]}");

        int status = run(
                s,
                "deploy",
                "--space",
                "alice",
                "--repo",
                "r1",
                "--ref",
                "main",
                "--canary",
                "--steps",
                "10:30,50:30",
                "--env",
                "GREETING=hi=there",
                "--env",
                "MODE=prod",
                "--approve",
                "oauth",
                "--group",
                "hello");

        assertEquals(0, status, err());
        String o = out();
        assertTrue(
                o.contains(
                        "app deployment ad1 of group hello: rolling_out, version 1.2.0, branch main at 0123456789ab"),
                o);
        assertTrue(o.contains("applied: worker web, route hello.apps.localhost\nunchanged: kv cache\n"), o);
        // one line per change, in order: the repeated 10% answer prints nothing
        String progress = "canary 10% (step 1/2, holding 30 s)\ncanary 50% (step 2/2, holding 30 s)\n"
                + "completed: the new version takes all requests\nserving at hello.apps.localhost\n";
        assertTrue(o.endsWith(progress), o);
        assertEquals("Bearer tok-alice", s.only("POST", BASE).authorization());
        JsonNode body = JSON.readTree(s.only("POST", BASE).body());
        assertEquals(JSON.readTree("""
                        {"group_name":"hello",
                         "source":{"kind":"git_ref","repository_id":"r1","ref":"main","ref_type":"branch"},
                         "env":{"GREETING":"hi=there","MODE":"prod"},
                         "strategy":"canary",
                         "canary":{"steps":[{"weight":10,"hold_seconds":30},{"weight":50,"hold_seconds":30}]},
                         "approve":["oauth"]}"""), body);
    }

    @Test
    void aRepositoryUrlAndACommitAreSentAsSuchAndADirectDeployOmitsTheStrategy() throws Exception {
        String sha = "89abcdef0123456789abcdef0123456789abcdef";
        FakeServer s = server().on("POST " + BASE, 201, created(record("ad2", "rolling_out")))
                .on(
                        "GET " + BASE + "/ad2/rollout",
                        200,
                        "{\"rollout\":{\"state\":\"completed\",\"strategy\":\"direct\",\"step\":0,\"steps\":[],\"weight\":100}}")
                .on("GET " + BASE, 200, "{\"app_deployments\":[]}");
        assertEquals(
                0,
                run(s, "deploy", "--space", "alice", "--repo", "https://git.example.org/bob/hello.git", "--ref", sha),
                err());
        JsonNode body = JSON.readTree(s.only("POST", BASE).body());
        assertEquals(
                "https://git.example.org/bob/hello.git",
                body.at("/source/repository_url").asText());
        assertTrue(body.at("/source/repository_id").isMissingNode());
        assertEquals("commit", body.at("/source/ref_type").asText());
        assertFalse(
                body.has("strategy") || body.has("env") || body.has("approve") || body.has("group_name"),
                body.toString());
        // the hostnames of the create's record when the list no longer has it
        assertTrue(out().endsWith("completed: the new version takes all requests\nno hostnames\n"), out());
    }

    @Test
    void aFailedOrAbortedRolloutExitsOneWithTheServersReason() throws Exception {
        FakeServer s = server().on("POST " + BASE, 201, created(record("ad3", "rolling_out")))
                .on(
                        "GET " + BASE + "/ad3/rollout",
                        200,
                        rollout("progressing", 0, 10),
                        "{\"rollout\":{\"state\":\"aborted\",\"strategy\":\"canary\",\"step\":0,\"steps\":[{\"weight\":10}],"
                                + "\"weight\":0,\"message\":\"error rate 12% over 5%\"}}")
                .on("GET " + BASE, 200, "{\"app_deployments\":[]}");
        assertEquals(1, run(s, "deploy", "--space", "alice", "--repo", "r1", "--ref", "main", "--canary"));
        assertTrue(out().contains("aborted: the old version takes all requests again: error rate 12% over 5%"), out());
        assertTrue(err().contains("atrium: the rollout of ad3 aborted: error rate 12% over 5%"), err());
        assertEquals(
                "canary",
                JSON.readTree(s.only("POST", BASE).body()).path("strategy").asText());
    }

    @Test
    void noWaitReturnsAfterTheCreateWithoutAskingForTheRollout() throws Exception {
        FakeServer s = server().on("POST " + BASE, 201, created(record("ad4", "rolling_out")));
        assertEquals(
                0,
                run(s, "deploy", "--space", "alice", "--repo", "r1", "--ref", "v1", "--ref-type", "tag", "--no-wait"));
        assertTrue(out().contains("follow it with: atrium deploy status --space alice"), out());
        assertEquals(1, s.requests.size());
    }

    @Test
    void anApprovalRequiredRefusalSaysWhatToPass() throws Exception {
        FakeServer s = server().on(
                        "POST " + BASE,
                        409,
                        "{\"error\":{\"code\":\"APPROVAL_REQUIRED\",\"message\":\"the OAuth client's redirect URIs change\"}}");
        assertEquals(1, run(s, "deploy", "--space", "alice", "--repo", "r1", "--ref", "main"));
        assertTrue(err().contains("the OAuth client's redirect URIs change (HTTP 409)"), err());
        assertTrue(err().contains("run it again with --approve oauth\n"), err());

        FakeServer t = server().on(
                        "POST " + BASE,
                        409,
                        "{\"error\":{\"code\":\"APPROVAL_REQUIRED\",\"message\":\"the source's provenance changes\"}}");
        assertEquals(1, run(t, "deploy", "--space", "alice", "--repo", "r1", "--ref", "main"));
        assertTrue(err().contains("run it again with --approve source\n"), err());
    }

    @Test
    void anotherRefusalIsReportedAsTheServerSaidIt() throws Exception {
        FakeServer s = server().on(
                        "POST " + BASE, 404, "{\"error\":{\"code\":\"NOT_FOUND\",\"message\":\"no repository r9\"}}");
        assertEquals(1, run(s, "deploy", "--space", "alice", "--repo", "r9", "--ref", "main"));
        assertTrue(err().contains("no repository r9 (HTTP 404)") && !err().contains("--approve"), err());
    }

    // ------------------------------------------------------------------ usage

    @Test
    void badUsageExitsTwoBeforeAnyRequest() throws Exception {
        FakeServer s = server();
        String[][] bad = {
            {"deploy", "--repo", "r1", "--ref", "main"},
            {"deploy", "--space", "alice", "--ref", "main"},
            {"deploy", "--space", "alice", "--repo", "r1"},
            {"deploy", "--space", "alice", "--repo", "r1", "--ref", "main", "--ref-type", "sha"},
            {"deploy", "--space", "alice", "--repo", "r1", "--ref", "main", "--steps", "10:30,150:30"},
            {"deploy", "--space", "alice", "--repo", "r1", "--ref", "main", "--steps", "10:-1"},
            {"deploy", "--space", "alice", "--repo", "r1", "--ref", "main", "--steps", "ten"},
            {"deploy", "--space", "alice", "--repo", "r1", "--ref", "main", "--env", "=x"},
            {"deploy", "--space", "alice", "--repo", "r1", "--ref", "main", "--env", "NOVALUE"},
            {"deploy", "--space", "alice", "--repo", "r1", "--ref", "main", "--approve", "everything"},
            {"deploy", "status"},
            {"deploy", "status", "extra", "--space", "alice"},
            {"deploy", "rollback", "--space", "alice"},
            {"deploy", "launch", "--space", "alice"},
            {"deploy", "validate", "a.yml", "b.yml"},
            {"install", "--space", "alice"},
            {"install", "hello", "--space", "alice"},
            {"install", "store/a/b/c", "--space", "alice"},
            {"install", "store/hello@", "--space", "alice"},
            {"install", "demo/hello", "--space", "alice", "--ref", "v1"},
            {"install", "demo/hello"},
        };
        for (String[] args : bad) {
            err.reset();
            assertEquals(2, run(s, args), String.join(" ", args));
            assertTrue(err().startsWith("atrium: "), err());
        }
        assertEquals(List.of(), s.requests);
    }

    @Test
    void helpAfterTheDeployCommandsPrintsTheUsageWithThem() {
        for (String[] args : new String[][] {{"deploy", "--help"}, {"deploy", "status", "-h"}, {"install", "--help"}}) {
            out.reset();
            assertEquals(0, main.run(args));
            String usage = out();
            assertTrue(
                    usage.contains("atrium deploy --space ID --repo REPO_ID|URL --ref REF")
                            && usage.contains("atrium deploy validate [FILE]")
                            && usage.contains("atrium deploy status --space ID")
                            && usage.contains("atrium deploy rollback APP_DEPLOYMENT_ID --space ID")
                            && usage.contains("atrium install STORE/[OWNER/]REPO[@TAG] --space ID"),
                    usage);
        }
        assertEquals("", err());
    }

    @Test
    void aRefNamesItsTypeUnlessTold() throws Exception {
        assertEquals(List.of("v1.2", "tag"), List.of(Deploy.refAndType("refs/tags/v1.2", null)));
        assertEquals(List.of("main", "branch"), List.of(Deploy.refAndType("refs/heads/main", null)));
        assertEquals(List.of("main", "branch"), List.of(Deploy.refAndType("main", null)));
        assertEquals(List.of("v1.2", "tag"), List.of(Deploy.refAndType("v1.2", "tag")));
        String sha = "0123456789abcdef0123456789abcdef01234567";
        assertEquals(List.of(sha, "commit"), List.of(Deploy.refAndType(sha, null)));
        assertEquals(List.of("abc1234", "commit"), List.of(Deploy.refAndType("abc1234", "commit")));
    }

    @Test
    void aStepWithoutSecondsIsHeldUntilPromoted() throws Exception {
        assertEquals(
                JSON.readTree("[{\"weight\":5,\"hold_seconds\":0},{\"weight\":50}]"),
                JSON.valueToTree(Deploy.steps("5:0, 50")));
        JsonNode r = JSON.readTree(
                "{\"state\":\"progressing\",\"strategy\":\"canary\",\"step\":1,\"steps\":[{\"weight\":5},{\"weight\":50}],\"weight\":50}");
        assertEquals("canary 50% (step 2/2, until promoted)", Deploy.progress(r));
        assertEquals(
                "paused at 50% (step 2/2)",
                Deploy.progress(JSON.readTree("{\"state\":\"paused\",\"step\":1,\"steps\":[{},{}],\"weight\":50}")));
    }

    // ------------------------------------------------------------------ status, rollback

    @Test
    void statusListsTheAppDeploymentsAsATable() throws Exception {
        String rolledBack = record("ad5", "active", "hello.apps.localhost", "hello.example.org")
                .replace("\"rollback_of_app_deployment_id\":null", "\"rollback_of_app_deployment_id\":\"ad1\"");
        FakeServer s = server().on(
                        "GET " + BASE,
                        200,
                        "{\"app_deployments\":[" + rolledBack + "," + record("ad1", "superseded") + "]}");
        assertEquals(0, run(s, "deploy", "status", "--space", "alice"), err());
        assertEquals("""
                ID   GROUP  STATUS                    VERSION  HOSTNAMES                               CREATED
                ad5  hello  active (rollback of ad1)  1.2.0    hello.apps.localhost,hello.example.org  2026-12-01T10:00:00Z
                ad1  hello  superseded                1.2.0    -                                       2026-12-01T10:00:00Z
                """, out());

        FakeServer empty = server().on("GET " + BASE, 200, "{\"app_deployments\":[]}");
        out.reset();
        assertEquals(0, run(empty, "deploy", "status", "--space", "alice"));
        assertEquals("no app deployments in alice\n", out());
    }

    @Test
    void rollbackCreatesTheNewDeploymentAndFollowsItsRollout() throws Exception {
        FakeServer s = server().on("POST " + BASE + "/ad1/rollback", 201, created(record("ad6", "rolling_out")))
                .on(
                        "GET " + BASE + "/ad6/rollout",
                        200,
                        "{\"rollout\":{\"state\":\"progressing\",\"strategy\":\"direct\",\"step\":0,\"steps\":[],\"weight\":0}}",
                        "{\"rollout\":{\"state\":\"completed\",\"strategy\":\"direct\",\"step\":0,\"steps\":[],\"weight\":100}}")
                .on(
                        "GET " + BASE,
                        200,
                        "{\"app_deployments\":[" + record("ad6", "active", "hello.apps.localhost") + "]}");
        assertEquals(0, run(s, "deploy", "rollback", "ad1", "--space", "alice", "--approve", "oauth"), err());
        assertTrue(out().startsWith("rollback of ad1\napp deployment ad6 of group hello: rolling_out"), out());
        assertTrue(
                out().endsWith("rolling out (direct)\ncompleted: the new version takes all requests\n"
                        + "serving at hello.apps.localhost\n"),
                out());
        assertEquals(
                "{\"approve\":[\"oauth\"]}",
                s.only("POST", BASE + "/ad1/rollback").body());
    }

    @Test
    void rollbackOfAGoneGroupExitsOne() throws Exception {
        FakeServer s = server().on(
                        "POST " + BASE + "/ad1/rollback",
                        409,
                        "{\"error\":{\"code\":\"CONFLICT\",\"message\":\"the group hello was uninstalled\"}}");
        assertEquals(1, run(s, "deploy", "rollback", "ad1", "--space", "alice"));
        assertTrue(err().contains("the group hello was uninstalled"), err());
    }

    // ------------------------------------------------------------------ validate (local)

    @Test
    void validatePrintsEachProblemWithTheFileAndExitsOneWhenInvalid(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("app.yml");
        Files.writeString(file, "kind: Sandwich\n");
        // the parser's problems: the exact ones are the parser's tests' business; here the wiring
        assertEquals(1, main.run(new String[] {"deploy", "validate", file.toString()}));
        assertTrue(out().startsWith(file + ":"), out());
        assertTrue(err().contains("is not a valid app manifest"), err());
        assertEquals(2, main.run(new String[] {
            "deploy", "validate", dir.resolve("none.yml").toString()
        }));
    }

    @Test
    void aProblemLineHasTheFileLineAndPath() {
        assertEquals(
                "app.yml:12: spec.workers.web: unknown workflow",
                Deploy.problemLine(
                        "app.yml",
                        new dev.atrium.apps.internal.manifest.ManifestProblem(
                                "spec.workers.web", 12, "unknown workflow")));
        assertEquals(
                "app.yml: empty file",
                Deploy.problemLine(
                        "app.yml", new dev.atrium.apps.internal.manifest.ManifestProblem("", 0, "empty file")));
    }

    // ------------------------------------------------------------------ install

    private static final String REGISTRY = "/api/spaces/alice/store-registry";

    private FakeServer store(FakeServer s, String repositories) {
        return s.on("GET " + REGISTRY, 200, """
                        {"stores":[
                          {"id":"e1","actor_url":"https://other.example/ap/stores/demo","domain":"other.example",
                           "store_slug":"demo","name":"Demo","is_active":false},
                          {"id":"e2","actor_url":"https://apps.example/ap/stores/demo","domain":"apps.example",
                           "store_slug":"demo","name":"Demo apps","is_active":true}]}""")
                .on("GET " + REGISTRY + "/e2/repositories/search?limit=100&q=hello", 200, repositories);
    }

    /** A smart-HTTP ref advertisement: pkt-lines, a flush after the service line and at the end. */
    static String advertisement(String... refs) {
        StringBuilder b = new StringBuilder(pkt("# service=git-upload-pack\n")).append("0000");
        for (int i = 0; i < refs.length; i++) {
            b.append(pkt("0123456789abcdef0123456789abcdef01234567 " + refs[i]
                    + (i == 0 ? "\0multi_ack side-band-64k" : "") + "\n"));
        }
        return b.append("0000").toString();
    }

    private static String pkt(String s) {
        return String.format("%04x", s.getBytes(StandardCharsets.UTF_8).length + 4) + s;
    }

    @Test
    void installResolvesTheStoresRepositoryAndItsNewestVersionTagThenCreates() throws Exception {
        FakeServer s = server();
        String clone = s.url() + "/git/bob/hello.git";
        store(s, """
                {"repositories":[
                  {"id":"x1","owner":"bob","name":"hello","clone_url":"%s"},
                  {"id":"x2","owner":"bob","name":"hello-world","clone_url":"%s-world"}],"total":2}""".formatted(clone, clone));
        s.answer(
                "GET /git/bob/hello.git/info/refs?service=git-upload-pack",
                new FakeServer.Answer(
                        200,
                        "application/x-git-upload-pack-advertisement",
                        advertisement(
                                "HEAD",
                                "refs/heads/main",
                                "refs/tags/nightly",
                                "refs/tags/v1.9.0",
                                "refs/tags/v1.10.0-rc.1",
                                "refs/tags/v1.10.0",
                                "refs/tags/v1.10.0^{}")));
        s.on("POST " + BASE, 201, created(record("ad7", "active", "hello.apps.localhost")));

        assertEquals(0, run(s, "install", "demo/hello", "--space", "alice", "--no-wait", "--group", "hello"), err());

        assertTrue(out().startsWith("installing bob/hello@v1.10.0 from demo@apps.example (" + clone + ")\n"), out());
        JsonNode body = JSON.readTree(s.only("POST", BASE).body());
        assertEquals(
                JSON.readTree("{\"kind\":\"git_ref\",\"repository_url\":\"" + clone
                        + "\",\"ref\":\"v1.10.0\",\"ref_type\":\"tag\"}"),
                body.path("source"));
        assertEquals("hello", body.path("group_name").asText());
        // the user's token goes to this server only, never to the repository's host
        assertNull(s.only("GET", "/git/bob/hello.git/info/refs?service=git-upload-pack")
                .authorization());
        assertEquals("Bearer tok-alice", s.only("GET", REGISTRY).authorization());
    }

    @Test
    void installWithATagAndAnOwnerAsksNoRefs() throws Exception {
        FakeServer s = server();
        store(s, """
                {"repositories":[
                  {"id":"x1","owner":"bob","name":"hello","clone_url":"https://apps.example/git/bob/hello.git"},
                  {"id":"x3","owner":"carol","name":"hello","clone_url":"https://apps.example/git/carol/hello.git"}]}""");
        s.on("POST " + BASE, 201, created(record("ad8", "active")));
        assertEquals(2, run(s, "install", "demo@apps.example/hello@v2", "--space", "alice", "--no-wait"));
        assertTrue(err().contains("bob/hello, carol/hello: name one as demo@apps.example/OWNER/hello"), err());

        assertEquals(0, run(s, "install", "apps.example/carol/hello@v2", "--space", "alice", "--no-wait"), err());
        JsonNode body = JSON.readTree(s.only("POST", BASE).body());
        assertEquals(
                "https://apps.example/git/carol/hello.git",
                body.at("/source/repository_url").asText());
        assertEquals("v2", body.at("/source/ref").asText());
        assertTrue(s.requests.stream().noneMatch(r -> r.path().contains("info/refs")));
    }

    @Test
    void installOfAnUnknownStoreOrRepositoryOrOneWithoutVersionTagsExitsOne() throws Exception {
        FakeServer s = server();
        String clone = s.url() + "/git/bob/hello.git";
        store(
                s,
                "{\"repositories\":[{\"id\":\"x1\",\"owner\":\"bob\",\"name\":\"hello\",\"clone_url\":\"" + clone
                        + "\"}]}");
        s.on("GET " + REGISTRY + "/e2/repositories/search?limit=100&q=nothing", 200, "{\"repositories\":[]}");
        s.answer(
                "GET /git/bob/hello.git/info/refs?service=git-upload-pack",
                new FakeServer.Answer(
                        200,
                        "application/x-git-upload-pack-advertisement",
                        advertisement("refs/heads/main", "refs/tags/nightly")));

        assertEquals(1, run(s, "install", "elsewhere/hello", "--space", "alice"));
        assertTrue(err().contains("no store elsewhere (it has demo@other.example, demo@apps.example)"), err());
        assertEquals(1, run(s, "install", "demo/nothing", "--space", "alice"));
        assertTrue(err().contains("the store demo@apps.example lists no repository nothing"), err());
        assertEquals(1, run(s, "install", "demo/hello", "--space", "alice"));
        assertTrue(err().contains("has no version tag (v1.2.3 or 1.2.3); its tags: nightly: name one"), err());
        assertTrue(s.requests.stream().noneMatch(r -> r.method().equals("POST")));
    }

    @Test
    void storeRefsParseAndVersionsOrder() throws Exception {
        assertEquals(new StoreRef("demo", null, "hello", null), StoreRef.parse("demo/hello"));
        assertEquals(
                new StoreRef("demo@apps.example", "bob", "hello", "v1"),
                StoreRef.parse("demo@apps.example/bob/hello@v1"));
        assertEquals(
                List.of("1.0", "v1.2.0-beta", "v1.2.0-rc.1", "v1.2.0", "v1.10"),
                List.of("v1.10", "v1.2.0", "1.0", "v1.2.0-rc.1", "v1.2.0-beta").stream()
                        .sorted(StoreRef::compareVersions)
                        .toList());
        assertEquals(
                List.of("v1", "v2"),
                StoreRef.tags("abc\trefs/heads/main\nabc\trefs/tags/v1\nabc\trefs/tags/v2^{}\n"
                        .getBytes(StandardCharsets.UTF_8)));
    }
}
