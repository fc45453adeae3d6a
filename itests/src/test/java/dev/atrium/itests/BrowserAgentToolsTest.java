package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The browser agent tools (issue 38, part 2) in a run whose scripted model calls them (AgentRunsTest's server and
 * fakes): {@code browser_goto} starts a session of the run's requester and opens a page, {@code browser_extract} with
 * the session id it answered reads it; a {@code restricted_egress} workspace's runs are not offered them. The page is a
 * {@code data:} URL: the egress policy on real addresses is BrowserSessionsTest's.
 */
@Timeout(180)
class BrowserAgentToolsTest {

    @BeforeAll
    static void start() throws Exception {
        AgentRunsTest.start();
    }

    @AfterAll
    static void stop() throws Throwable {
        AgentRunsTest.stop();
    }

    /** The session id in the newest tool result the model was sent. */
    private static String sessionIdIn(JsonNode request) {
        String id = null;
        for (JsonNode m : request.path("messages")) {
            if (m.path("role").asText().equals("tool")
                    && m.path("content").asText().contains("session_id")) {
                try {
                    id = Http.JSON
                            .readTree(m.path("content").asText())
                            .path("session_id")
                            .asText();
                } catch (java.io.IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return id;
    }

    @Test
    void aRunOpensAPageInABrowserSessionAndReadsIt() throws Exception {
        String model = AgentRunsTest.model();
        User u = AgentRunsTest.user("openai", model);
        String page = "data:text/html,<title>Agent page</title><p id=\\\"x\\\">Hello agent</p>";
        AgentRunsTest.fake.script(
                model,
                body -> FakeModelServer.openAiToolCall("call_1", "browser_goto", "{\"url\":\"" + page + "\"}"),
                body -> FakeModelServer.openAiToolCall(
                        "call_2",
                        "browser_extract",
                        "{\"session_id\":\"" + sessionIdIn(body) + "\",\"kind\":\"text\",\"selector\":\"#x\"}"),
                body -> FakeModelServer.openAiToolCall(
                        "call_3", "browser_extract", "{\"session_id\":\"bs_00000000000000000000\"}"),
                body -> FakeModelServer.openAiToolCall(
                        "call_4",
                        "browser_screenshot",
                        "{\"session_id\":\"" + sessionIdIn(body) + "\",\"path\":\"shots/agent.png\"}"),
                body -> FakeModelServer.openAiText("Done."));
        String runId = AgentRunsTest.run(u, AgentRunsTest.thread(u), "Read the page");
        JsonNode run = AgentRunsTest.awaitFinished(u.http(), runId);
        assertEquals("completed", run.path("status").asText(), run.toString());
        assertTrue(AgentRunsTest.toolNames(AgentRunsTest.fake.received(model).get(0), false)
                .containsAll(List.of("browser_goto", "browser_extract", "browser_screenshot")));

        List<JsonNode> results = AgentRunsTest.events(u.http(), runId).stream()
                .filter(e -> e.path("type").asText().equals("tool.result"))
                .toList();
        assertEquals(4, results.size(), results.toString());
        assertFalse(
                results.get(0).path("data").path("is_error").asBoolean(),
                results.get(0).toString());
        assertTrue(
                results.get(0).toString().contains("Agent page"), results.get(0).toString());
        assertFalse(
                results.get(1).path("data").path("is_error").asBoolean(),
                results.get(1).toString());
        assertTrue(
                results.get(1).toString().contains("Hello agent"),
                results.get(1).toString());
        assertTrue(
                results.get(2).path("data").path("is_error").asBoolean(),
                results.get(2).toString());
        // the screenshot is a PNG in the workspace's storage
        assertFalse(
                results.get(3).path("data").path("is_error").asBoolean(),
                results.get(3).toString());
        JsonNode saved =
                Http.JSON.readTree(results.get(3).path("data").path("result").asText());
        assertEquals("shots/agent.png", saved.path("path").asText(), saved.toString());
        java.net.http.HttpResponse<byte[]> png = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(AgentRunsTest.server.base()
                                        + "/api/spaces/" + u.defaultSpaceId() + "/storage/"
                                        + saved.path("file_id").asText() + "/content"))
                                .header("Authorization", "Bearer " + AgentRunsTest.token(u))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, png.statusCode());
        assertEquals(saved.path("size").asLong(), png.body().length);
        assertEquals("\u0089PNG", new String(png.body(), 0, 4, java.nio.charset.StandardCharsets.ISO_8859_1), "a PNG");

        String session = sessionIdIn(AgentRunsTest.fake.received(model).get(1));
        JsonNode info = u.http().get("/api/browser-sessions/" + session).json();
        assertEquals(
                u.defaultSpaceId(),
                info.path("browser_session").path("space_id").asText(),
                info.toString());
        assertEquals(200, u.http().delete("/api/browser-sessions/" + session).status());
    }

    @Test
    void aRestrictedEgressWorkspacesRunsAreNotOfferedTheBrowser() throws Exception {
        String model = AgentRunsTest.model();
        User u = AgentRunsTest.user(AgentRunsTest.server, "openai", model, "restricted_egress");
        AgentRunsTest.fake.script(model, body -> FakeModelServer.openAiText("Done."));
        String runId = AgentRunsTest.run(u, AgentRunsTest.thread(u), "Browse");
        assertEquals(
                "completed",
                AgentRunsTest.awaitFinished(u.http(), runId).path("status").asText());
        List<String> offered =
                AgentRunsTest.toolNames(AgentRunsTest.fake.received(model).get(0), false);
        assertFalse(offered.contains("browser_goto"), offered.toString());
        assertFalse(offered.contains("browser_extract"), offered.toString());
    }
}
