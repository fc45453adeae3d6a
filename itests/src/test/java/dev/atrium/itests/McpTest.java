package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * MCP servers against the real reference server ({@code @modelcontextprotocol/server-everything}, Node, on loopback, in
 * both HTTP transports), and a run whose scripted model calls one of its tools. One Atrium server of its own, its model
 * providers pointed at {@link FakeModelServer}.
 */
@Timeout(180)
class McpTest {

    static FakeModelServer fake;
    static TestDatabase db;
    static AtriumServer server;
    static EverythingServer streamable;
    static EverythingServer sse;
    static OAuthMcpServer locked;

    @BeforeAll
    static void start() throws Exception {
        streamable = EverythingServer.start("streamableHttp");
        sse = EverythingServer.start("sse");
        locked = new OAuthMcpServer();
        fake = new FakeModelServer();
        db = TestDatabase.create();
        Map<String, String> env = Map.of(
                "ATRIUM_OPENAI_BASE_URL",
                fake.openAiBase(),
                "ATRIUM_OPENAI_API_KEY",
                "sk-test-openai",
                "ATRIUM_RUNS_HEARTBEAT_MS",
                "300",
                "ATRIUM_RUNS_POLL_MS",
                "200",
                "ATRIUM_MCP_TIMEOUT_S",
                "10");
        server = AtriumServer.launch(Files.createTempDirectory("atrium-mcp-"), db, env);
    }

    @AfterAll
    static void stop() throws Throwable {
        if (server != null) {
            server.close();
        }
        for (AutoCloseable c : new AutoCloseable[] {fake, streamable, sse, locked}) {
            if (c != null) {
                c.close();
            }
        }
    }

    static Http.Reply register(User u, String space, String name, String url, String transport) {
        Map<String, Object> body = new HashMap<>(Map.of("space_id", space, "name", name, "url", url));
        if (transport != null) {
            body.put("transport", transport);
        }
        return u.http().post("/api/mcp/servers", body);
    }

    static void assertError(Http.Reply r, int status, String messagePart) {
        assertEquals(status, r.status(), r.body());
        JsonNode error = r.json().path("error");
        assertTrue(
                error.path("code").isTextual() && error.path("message").asText().contains(messagePart), r.body());
    }

    @Test
    void serversAreRegisteredListedUpdatedAndDeletedInTheirWorkspace() {
        User u = server.newUser();
        String space = u.defaultSpaceId();
        Http.Reply created = register(u, space, "everything", streamable.streamableUrl(), null);
        assertEquals(201, created.status(), created.body());
        JsonNode s = created.get("server");
        assertEquals(
                Set.of(
                        "id",
                        "space_id",
                        "name",
                        "url",
                        "transport",
                        "enabled",
                        "tool_count",
                        "tools_listed_at",
                        "authorized",
                        "managed_by",
                        "created_at",
                        "updated_at"),
                WorkspacesTest.fields(s));
        assertTrue(s.path("managed_by").isNull(), "the owner's own server has no manager");
        assertEquals("streamable_http", s.path("transport").asText());
        assertTrue(s.path("enabled").asBoolean());
        assertTrue(s.path("tool_count").isNull());
        String id = s.path("id").asText();

        JsonNode list = u.http().get("/api/mcp/servers?space_id=" + space).json();
        assertEquals(1, list.path("total").asInt());
        assertEquals(id, list.path("servers").get(0).path("id").asText());

        JsonNode updated = u.http()
                .patch("/api/mcp/servers/" + id, Map.of("enabled", false, "name", "renamed"))
                .get("server");
        assertFalse(updated.path("enabled").asBoolean());
        assertEquals("renamed", updated.path("name").asText());
        assertEquals(streamable.streamableUrl(), updated.path("url").asText());

        assertError(register(u, space, "renamed", sse.sseUrl(), "sse"), 409, "already registered");
        assertEquals(201, register(u, space, "other", sse.sseUrl(), "sse").status());
        assertError(u.http().patch("/api/mcp/servers/" + id, Map.of("name", "other")), 409, "already registered");

        // another workspace of the same owner has its own list
        String second = u.http()
                .post("/api/spaces", Map.of("name", "second"))
                .get("space")
                .get("id")
                .asText();
        assertEquals(
                0,
                u.http()
                        .get("/api/mcp/servers?space_id=" + second)
                        .json()
                        .path("total")
                        .asInt());

        assertEquals(200, u.http().delete("/api/mcp/servers/" + id).status());
        assertEquals(404, u.http().get("/api/mcp/servers/" + id + "/tools").status());
        assertEquals(404, u.http().delete("/api/mcp/servers/" + id).status());
        assertEquals(
                1,
                u.http()
                        .get("/api/mcp/servers?space_id=" + space)
                        .json()
                        .path("total")
                        .asInt());
    }

    @Test
    void badInputIsA400SayingWhatIsWrongAndChangesNothing() {
        User u = server.newUser();
        String space = u.defaultSpaceId();
        assertError(
                u.http().post("/api/mcp/servers", Map.of("name", "x", "url", streamable.streamableUrl())),
                400,
                "space_id");
        assertError(u.http().get("/api/mcp/servers"), 400, "space_id");
        assertError(register(u, space, "Bad Name!", streamable.streamableUrl(), null), 400, "name");
        assertError(register(u, space, "ok", "ftp://127.0.0.1/mcp", null), 400, "http");
        assertError(register(u, space, "ok", "/relative", null), 400, "http");
        assertError(register(u, space, "ok", "http://user:pw@127.0.0.1:1/mcp", null), 400, "credentials");
        assertError(register(u, space, "ok", streamable.streamableUrl(), "websocket"), 400, "transport");
        // the egress guard: a private address is refused at registration
        assertEquals(400, register(u, space, "ok", "http://10.1.2.3/mcp", null).status());
        assertEquals(
                400,
                register(u, space, "ok", "http://169.254.169.254/latest", null).status());
        assertEquals(
                0,
                u.http()
                        .get("/api/mcp/servers?space_id=" + space)
                        .json()
                        .path("total")
                        .asInt());

        String id = register(u, space, "ok", streamable.streamableUrl(), null)
                .get("server")
                .path("id")
                .asText();
        assertError(u.http().patch("/api/mcp/servers/" + id, Map.of()), 400, "nothing to change");
        assertError(u.http().patch("/api/mcp/servers/" + id, Map.of("enabled", "yes")), 400, "enabled");
        assertError(u.http().patch("/api/mcp/servers/" + id, Map.of("url", "http://10.0.0.1/")), 400, "");
        JsonNode kept = u.http()
                .get("/api/mcp/servers?space_id=" + space)
                .json()
                .path("servers")
                .get(0);
        assertEquals(streamable.streamableUrl(), kept.path("url").asText());
        assertTrue(kept.path("enabled").asBoolean());
    }

    @Test
    void aStrangerGetsTheSame404AsForAMissingServer() {
        User a = server.newUser();
        User b = server.newUser();
        String id = register(a, a.defaultSpaceId(), "mine", streamable.streamableUrl(), null)
                .get("server")
                .path("id")
                .asText();
        String missing = SweepFixtures.missingLike(id);
        for (String target : List.of(id, missing)) {
            Http.Reply tools = b.http().get("/api/mcp/servers/" + target + "/tools");
            assertError(tools, 404, "MCP server not found");
            assertError(
                    b.http().patch("/api/mcp/servers/" + target, Map.of("enabled", false)),
                    404,
                    "MCP server not found");
            assertError(b.http().delete("/api/mcp/servers/" + target), 404, "MCP server not found");
        }
        Http.Reply foreignList = b.http().get("/api/mcp/servers?space_id=" + a.defaultSpaceId());
        Http.Reply missingList =
                b.http().get("/api/mcp/servers?space_id=" + SweepFixtures.missingLike(a.defaultSpaceId()));
        assertEquals(404, foreignList.status(), foreignList.body());
        assertEquals(missingList.status(), foreignList.status());
        assertEquals(
                404,
                register(b, a.defaultSpaceId(), "theirs", streamable.streamableUrl(), null)
                        .status());
        assertTrue(a.http()
                .get("/api/mcp/servers?space_id=" + a.defaultSpaceId())
                .json()
                .path("servers")
                .get(0)
                .path("enabled")
                .asBoolean());
    }

    @Test
    void theToolsOfTheRealReferenceServerAreListedLiveOverStreamableHttpAndOverSse() {
        User u = server.newUser();
        String space = u.defaultSpaceId();
        for (String[] t : List.of(
                new String[] {"everything", streamable.streamableUrl(), "streamable_http"},
                new String[] {"everything-sse", sse.sseUrl(), "sse"})) {
            String id = register(u, space, t[0], t[1], t[2])
                    .get("server")
                    .path("id")
                    .asText();
            Http.Reply tools = u.http().get("/api/mcp/servers/" + id + "/tools");
            assertEquals(200, tools.status(), tools.body());
            List<String> names = new ArrayList<>();
            tools.json().path("tools").forEach(x -> names.add(x.path("name").asText()));
            assertTrue(names.containsAll(List.of("echo", "get-sum")), t[2] + ": " + names);
            JsonNode sum = null;
            for (JsonNode x : tools.json().path("tools")) {
                if (x.path("name").asText().equals("get-sum")) {
                    sum = x;
                }
            }
            assertEquals("object", sum.path("input_schema").path("type").asText(), sum.toString());
            assertTrue(sum.path("input_schema").path("properties").has("a"), sum.toString());
            JsonNode listed =
                    u.http().get("/api/mcp/servers?space_id=" + space).json().path("servers");
            for (JsonNode s : listed) {
                if (s.path("id").asText().equals(id)) {
                    assertEquals(names.size(), s.path("tool_count").asInt());
                    assertFalse(s.path("tools_listed_at").isNull());
                }
            }
        }
    }

    @Test
    void aServerThatCannotBeReachedIsA502WithTheSpecBody() throws Exception {
        User u = server.newUser();
        int closed;
        closed = AtriumServer.freePort();
        String id = register(u, u.defaultSpaceId(), "gone", "http://127.0.0.1:" + closed + "/mcp", null)
                .get("server")
                .path("id")
                .asText();
        assertError(u.http().get("/api/mcp/servers/" + id + "/tools"), 502, "cannot be reached");
        // a URL that answers, but not MCP
        String notMcp = register(u, u.defaultSpaceId(), "not-mcp", server.base() + "/api/nothing-here", null)
                .get("server")
                .path("id")
                .asText();
        Http.Reply r = u.http().get("/api/mcp/servers/" + notMcp + "/tools");
        assertEquals(502, r.status(), r.body());
        assertTrue(r.json().path("error").path("code").isTextual(), r.body());
    }

    @Test
    void aRunCallsAToolOfItsWorkspacesMcpServerAndGetsTheRealResult() throws Exception {
        String model = AgentRunsTest.model();
        User u = AgentRunsTest.user(server, "openai", model, null);
        assertEquals(
                201,
                register(u, u.defaultSpaceId(), "everything", streamable.streamableUrl(), null)
                        .status());
        assertEquals(
                201,
                register(u, u.defaultSpaceId(), "old-sse", sse.sseUrl(), "sse").status());
        fake.script(
                model,
                body -> FakeModelServer.openAiToolCall("call_sum", "mcp_everything_get_sum", "{\"a\":2,\"b\":40}"),
                body -> FakeModelServer.openAiToolCall(
                        "call_echo", "mcp_old_sse_echo", "{\"message\":\"over the old transport\"}"),
                body -> FakeModelServer.openAiText("the sum is 42"));
        String threadId = AgentRunsTest.thread(u);
        String runId = AgentRunsTest.run(u, threadId, "add 2 and 40");
        JsonNode run = AgentRunsTest.awaitFinished(u.http(), runId);
        assertEquals("completed", run.path("status").asText(), run.toString());

        List<String> offered = AgentRunsTest.toolNames(fake.received(model).get(0), false);
        assertTrue(
                offered.containsAll(
                        List.of("mcp_everything_get_sum", "mcp_everything_echo", "mcp_old_sse_echo", "memory_search")),
                offered.toString());
        List<JsonNode> results = AgentRunsTest.events(u.http(), runId).stream()
                .filter(e -> e.path("type").asText().equals("tool.result"))
                .toList();
        assertEquals(2, results.size(), results.toString());
        assertFalse(
                results.get(0).path("data").path("is_error").asBoolean(),
                results.get(0).toString());
        assertEquals(
                "The sum of 2 and 40 is 42.",
                results.get(0).path("data").path("result").asText());
        assertFalse(
                results.get(1).path("data").path("is_error").asBoolean(),
                results.get(1).toString());
        assertTrue(
                results.get(1).path("data").path("result").asText().contains("over the old transport"),
                results.get(1).toString());
    }

    @Test
    void aDisabledServerAndARestrictedEgressWorkspaceOfferNoMcpTools() throws Exception {
        String model = AgentRunsTest.model();
        User u = AgentRunsTest.user(server, "openai", model, null);
        String id = register(u, u.defaultSpaceId(), "everything", streamable.streamableUrl(), null)
                .get("server")
                .path("id")
                .asText();
        assertEquals(
                200,
                u.http()
                        .patch("/api/mcp/servers/" + id, Map.of("enabled", false))
                        .status());
        fake.script(
                model,
                body -> FakeModelServer.openAiToolCall("call_sum", "mcp_everything_get_sum", "{\"a\":1,\"b\":1}"),
                body -> FakeModelServer.openAiText("no tool"));
        String runId = AgentRunsTest.run(u, AgentRunsTest.thread(u), "add");
        assertEquals(
                "completed",
                AgentRunsTest.awaitFinished(u.http(), runId).path("status").asText());
        assertFalse(AgentRunsTest.toolNames(fake.received(model).get(0), false).stream()
                .anyMatch(n -> n.startsWith("mcp_")));
        JsonNode result = AgentRunsTest.events(u.http(), runId).stream()
                .filter(e -> e.path("type").asText().equals("tool.result"))
                .findFirst()
                .orElseThrow();
        assertTrue(result.path("data").path("is_error").asBoolean(), result.toString());

        String restrictedModel = AgentRunsTest.model();
        User r = AgentRunsTest.user(server, "openai", restrictedModel, "restricted_egress");
        assertEquals(
                201,
                register(r, r.defaultSpaceId(), "everything", streamable.streamableUrl(), null)
                        .status());
        fake.script(restrictedModel, body -> FakeModelServer.openAiText("nothing to call"));
        String restrictedRun = AgentRunsTest.run(r, AgentRunsTest.thread(r), "hello");
        assertEquals(
                "completed",
                AgentRunsTest.awaitFinished(r.http(), restrictedRun)
                        .path("status")
                        .asText());
        assertFalse(AgentRunsTest.toolNames(fake.received(restrictedModel).get(0), false).stream()
                .anyMatch(n -> n.startsWith("mcp_")));
    }

    /** The path and query of an absolute URL, for a request to the Atrium server. */
    static String local(String url) {
        java.net.URI u = java.net.URI.create(url);
        return u.getRawPath() + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
    }

    /** The authorization server's redirect back to Atrium for {@code authorizationUrl}. */
    static String approve(String authorizationUrl) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(authorizationUrl))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(302, r.statusCode(), r.body());
        return r.headers().firstValue("Location").orElseThrow();
    }

    @Test
    void aServerDemandingOAuthIsConnectedThroughTheWholeFlowAndAReplayedOrForeignStateIsRefused() throws Exception {
        String model = AgentRunsTest.model();
        User a = AgentRunsTest.user(server, "openai", model, null);
        User b = server.newUser();
        String id = register(a, a.defaultSpaceId(), "locked", locked.mcpUrl(), null)
                .get("server")
                .path("id")
                .asText();
        assertError(a.http().get("/api/mcp/servers/" + id + "/tools"), 409, "requires authorization");

        int registrations = locked.registrations.get();
        Http.Reply started = a.http().post("/api/mcp/servers/" + id + "/authorize", null);
        assertEquals(200, started.status(), started.body());
        String authorizationUrl = started.json().path("authorization_url").asText();
        assertTrue(authorizationUrl.startsWith(locked.issuer() + "/authorize?"), authorizationUrl);
        assertTrue(authorizationUrl.contains("code_challenge_method=S256"), authorizationUrl);
        assertEquals(registrations + 1, locked.registrations.get(), "a client was registered dynamically");
        assertError(b.http().post("/api/mcp/servers/" + id + "/authorize", null), 404, "MCP server not found");

        String callback = local(approve(authorizationUrl));
        assertTrue(callback.startsWith("/api/mcp/oauth/callback?"), callback);
        assertEquals(locked.mcpUrl(), locked.lastResource, "the resource indicator names the MCP server");
        // a state that was never issued, and another Principal signed in with A's state: refused, A's state kept
        assertError(
                server.anonymous().get("/api/mcp/oauth/callback?code=x&state=" + SweepFixtures.random(43)),
                400,
                "unknown");
        assertError(server.anonymous().get("/api/mcp/oauth/callback?code=x"), 400, "state");
        assertError(b.http().get(callback), 400, "someone else");
        // a request that is not signed in is sent to sign in first and the state waits for it
        Http.Reply anonymous = server.anonymous().get(callback);
        assertEquals(302, anonymous.status(), anonymous.body());
        assertEquals(
                "/auth/login?return_to="
                        + java.net.URLEncoder.encode(callback, java.nio.charset.StandardCharsets.UTF_8),
                anonymous.raw().headers().firstValue("Location").orElse(null));
        Http.Reply done = a.http().get(callback);
        assertEquals(200, done.status(), done.body());
        assertEquals(id, done.json().path("server_id").asText());
        assertError(a.http().get(callback), 400, "already used");
        assertError(server.anonymous().get(callback), 400, "already used");

        Http.Reply tools = a.http().get("/api/mcp/servers/" + id + "/tools");
        assertEquals(200, tools.status(), tools.body());
        assertEquals("whoami", tools.json().path("tools").get(0).path("name").asText());
        assertTrue(a.http()
                .get("/api/mcp/servers?space_id=" + a.defaultSpaceId())
                .json()
                .path("servers")
                .get(0)
                .path("authorized")
                .asBoolean());

        // the tokens are stored sealed: no issued token appears in the table
        try (var c = db.connect();
                var st = c.createStatement();
                var rs = st.executeQuery(
                        "SELECT access_token, refresh_token FROM mcp_oauth WHERE server_id = '" + id + "'")) {
            assertTrue(rs.next());
            String stored = rs.getString(1) + rs.getString(2);
            assertTrue(rs.getString(1).startsWith("v1:"), stored);
            for (String token : locked.accessTokens()) {
                assertFalse(stored.contains(token), "an access token is stored in the clear");
            }
            assertFalse(stored.contains("at-") || stored.contains("rt-"), stored);
        }

        // an authorization left too long expires
        String late = local(approve(a.http()
                .post("/api/mcp/servers/" + id + "/authorize", null)
                .json()
                .path("authorization_url")
                .asText()));
        try (var c = db.connect();
                var st = c.createStatement()) {
            st.executeUpdate(
                    "UPDATE mcp_oauth_states SET expires_at = now() - interval '1 second' WHERE used_at IS NULL");
        }
        assertError(server.anonymous().get(late), 400, "expired");
        assertError(a.http().get(late), 400, "expired");

        // the access token stops working: the next use refreshes it, and a run calls the tool
        locked.expireAccessTokens();
        fake.script(
                model,
                body -> FakeModelServer.openAiToolCall("call_who", "mcp_locked_whoami", "{}"),
                body -> FakeModelServer.openAiText("done"));
        String runId = AgentRunsTest.run(a, AgentRunsTest.thread(a), "who am I?");
        assertEquals(
                "completed",
                AgentRunsTest.awaitFinished(a.http(), runId).path("status").asText());
        JsonNode result = AgentRunsTest.events(a.http(), runId).stream()
                .filter(e -> e.path("type").asText().equals("tool.result"))
                .findFirst()
                .orElseThrow();
        assertEquals(
                "you hold a valid token", result.path("data").path("result").asText(), result.toString());
        assertTrue(locked.refreshes.get() >= 1, "the expired token was refreshed");
    }

    /**
     * Someone who began an authorization can hand its link to anybody: the MCP server is connected only once a browser
     * signed in as the Principal who began comes back with the state. The owner's other browser, without a session,
     * signs in on the way and finishes; a browser signed in as someone else does not.
     */
    @Test
    void theCallbackCompletesOnlyInABrowserSignedInAsThePrincipalWhoBegan() throws Exception {
        LocalUser ownerAccount = signedInLocalUser("mcpown");
        Browser owner = ownerAccount.browser();
        Map<String, String> csrf = Map.of("X-CSRF-Token", owner.csrf());
        String space = Http.JSON
                .readTree(owner.get("/api/spaces").body())
                .path("spaces")
                .get(0)
                .path("id")
                .asText();
        java.net.http.HttpResponse<String> registered = owner.send(
                "POST",
                "/api/mcp/servers",
                "application/json",
                Http.JSON.writeValueAsString(Map.of("space_id", space, "name", "locked", "url", locked.mcpUrl())),
                csrf);
        assertEquals(201, registered.statusCode(), registered.body());
        String id =
                Http.JSON.readTree(registered.body()).path("server").path("id").asText();
        java.net.http.HttpResponse<String> started =
                owner.send("POST", "/api/mcp/servers/" + id + "/authorize", "application/json", "{}", csrf);
        assertEquals(200, started.statusCode(), started.body());
        String callback = local(approve(
                Http.JSON.readTree(started.body()).path("authorization_url").asText()));

        Browser stranger = signedInLocalUser("mcpoth").browser();
        java.net.http.HttpResponse<String> refused = stranger.get(callback);
        assertEquals(400, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("someone else"), refused.body());

        Browser phone = new Browser(server.base());
        java.net.http.HttpResponse<String> toLogin = phone.get(callback);
        assertEquals(302, toLogin.statusCode(), toLogin.body());
        String login = toLogin.headers().firstValue("Location").orElseThrow();
        assertTrue(login.startsWith("/auth/login?"), login);
        assertEquals(200, phone.get(login).statusCode());
        String returnTo = java.net.URLDecoder.decode(
                login.substring(login.indexOf("return_to=") + 10), java.nio.charset.StandardCharsets.UTF_8);
        java.net.http.HttpResponse<String> signedIn = phone.send(
                "POST",
                "/auth/login/local",
                "application/x-www-form-urlencoded",
                "username=" + ownerAccount.username() + "&password=" + ownerAccount.password() + "&return_to="
                        + java.net.URLEncoder.encode(returnTo, java.nio.charset.StandardCharsets.UTF_8),
                Map.of());
        assertEquals(302, signedIn.statusCode(), signedIn.body());
        assertEquals(
                callback,
                signedIn.headers().firstValue("Location").orElseThrow(),
                "the sign-in returns to the callback");
        java.net.http.HttpResponse<String> done = phone.get(callback);
        assertEquals(200, done.statusCode(), done.body());
        assertEquals(id, Http.JSON.readTree(done.body()).path("server_id").asText());
        assertTrue(Http.JSON
                .readTree(owner.get("/api/mcp/servers?space_id=" + space).body())
                .path("servers")
                .get(0)
                .path("authorized")
                .asBoolean());
    }

    private record LocalUser(String username, String password, Browser browser) {}

    private LocalUser signedInLocalUser(String prefix) {
        String name = prefix + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        Http.Reply created = server.operator().post("/admin/identity/local-users", Map.of("username", name));
        assertEquals(201, created.status(), created.body());
        String password = created.json().path("password").asText();
        Browser b = new Browser(server.base());
        b.get("/auth/login?provider=local");
        assertEquals(
                302,
                b.send(
                                "POST",
                                "/auth/login/local",
                                "application/x-www-form-urlencoded",
                                "username=" + name + "&password=" + password,
                                Map.of())
                        .statusCode());
        return new LocalUser(name, password, b);
    }
}
