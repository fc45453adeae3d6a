package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * vectorize and analyticsEngine resources used the way the spec makes them usable at run time: through agent tools
 * ({@code vectorize_upsert}, {@code vectorize_query}, {@code analytics_write}) a run holding the grants calls, against
 * a scripted model server (AgentRunsTest's server and fakes).
 */
@Timeout(180)
class ResourceToolsTest {

    @BeforeAll
    static void start() throws Exception {
        AgentRunsTest.start();
    }

    @AfterAll
    static void stop() throws Throwable {
        AgentRunsTest.stop();
    }

    private static List<JsonNode> results(User u, String runId) {
        return AgentRunsTest.events(u.http(), runId).stream()
                .filter(e -> e.path("type").asText().equals("tool.result"))
                .toList();
    }

    @Test
    void aRunUpsertsAndQueriesItsWorkspacesVectorIndexAndWritesAnalyticsPoints() throws Exception {
        String model = AgentRunsTest.model();
        User u = AgentRunsTest.user("openai", model);
        String index = u.http()
                .post(
                        "/api/resources",
                        Map.of("name", "docs", "type", "vectorize", "config", Map.of("dimensions", 3, "index", "hnsw")))
                .get("resource")
                .get("id")
                .asText();
        assertEquals(
                201,
                u.http()
                        .post("/api/resources", Map.of("name", "events", "type", "analyticsEngine"))
                        .status());
        AgentRunsTest.fake.script(
                model,
                body -> FakeModelServer.openAiToolCall(
                        "call_1",
                        "vectorize_upsert",
                        "{\"index\":\"docs\",\"vectors\":["
                                + "{\"id\":\"a\",\"values\":[1,0,0],\"metadata\":{\"lang\":\"en\"}},{\"id\":\"b\",\"values\":[0,1,0],\"metadata\":{\"lang\":\"fr\"}}]}"),
                body -> FakeModelServer.openAiToolCall(
                        "call_2", "vectorize_query", "{\"index\":\"docs\",\"vector\":[0.9,0.1,0],\"top_k\":1}"),
                body -> FakeModelServer.openAiToolCall(
                        "call_3",
                        "vectorize_query",
                        "{\"index\":\"docs\",\"vector\":[1,0,0],\"filter\":{\"lang\":\"fr\"}}"),
                body -> FakeModelServer.openAiToolCall(
                        "call_4",
                        "analytics_write",
                        "{\"dataset\":\"events\",\"points\":["
                                + "{\"indexes\":[\"u1\"],\"blobs\":[\"/home\"],\"doubles\":[12.5]}]}"),
                body -> FakeModelServer.openAiToolCall(
                        "call_5",
                        "vectorize_upsert",
                        "{\"index\":\"docs\",\"vectors\":[{\"id\":\"c\",\"values\":[1,0]}]}"),
                body -> FakeModelServer.openAiToolCall(
                        "call_6", "vectorize_query", "{\"index\":\"nope\",\"vector\":[1,0,0]}"),
                body -> FakeModelServer.openAiText("Done."));
        String runId = AgentRunsTest.run(u, AgentRunsTest.thread(u), "Index these and log a view");
        JsonNode run = AgentRunsTest.awaitFinished(u.http(), runId);
        assertEquals("completed", run.path("status").asText(), run.toString());
        assertTrue(AgentRunsTest.toolNames(AgentRunsTest.fake.received(model).get(0), false)
                .containsAll(List.of("vectorize_upsert", "vectorize_query", "analytics_write")));

        List<JsonNode> results = results(u, runId);
        assertEquals(6, results.size(), results.toString());
        for (int i = 0; i < 4; i++) {
            assertFalse(
                    results.get(i).path("data").path("is_error").asBoolean(),
                    results.get(i).toString());
        }
        String all = results.toString();
        assertTrue(all.contains("upserted") && all.contains("written"), all);
        assertTrue(
                results.get(1).toString().contains("\\\"id\\\":\\\"a\\\"")
                        || results.get(1).toString().contains("\"id\":\"a\""),
                results.get(1).toString());
        assertTrue(results.get(2).toString().contains("fr"), "the filter keeps only lang=fr: " + results.get(2));
        assertTrue(
                results.get(4).path("data").path("is_error").asBoolean(),
                "a vector of the wrong dimension is refused: " + results.get(4));
        assertTrue(
                results.get(4).toString().contains("this index takes 3"),
                results.get(4).toString());
        assertTrue(
                results.get(5).path("data").path("is_error").asBoolean(),
                results.get(5).toString());

        assertEquals(
                2,
                u.http()
                        .get("/api/resources/" + index + "/connection")
                        .get("connection")
                        .get("connection")
                        .get("vectors")
                        .asInt());
    }
}
