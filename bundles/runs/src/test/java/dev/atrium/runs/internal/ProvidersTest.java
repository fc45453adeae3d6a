package dev.atrium.runs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.runs.api.ModelProvider.Message;
import dev.atrium.runs.api.ModelProvider.Request;
import dev.atrium.runs.api.ModelProvider.Tool;
import dev.atrium.runs.api.ModelProvider.ToolCall;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ProvidersTest {

    static final Request CONVERSATION = new Request(
            "m",
            "be brief",
            List.of(
                    Message.user("hi"),
                    Message.assistant(
                            "",
                            List.of(
                                    new ToolCall("c1", "memory_search", "{\"query\":\"x\"}"),
                                    new ToolCall("c2", "http_fetch", "{\"url\":\"https://example.org\"}"))),
                    Message.tool("c1", "[]"),
                    Message.tool("c2", "status: 200")),
            List.of(new Tool("memory_search", "search", "{\"type\":\"object\"}")),
            100);

    @Test
    void openAiRequestsCarryToolCallsAndToolResultsAsChatMessages() {
        JsonNode body = OpenAiProvider.body(CONVERSATION);
        assertEquals("system", body.path("messages").get(0).path("role").asText());
        JsonNode assistant = body.path("messages").get(2);
        assertEquals(2, assistant.path("tool_calls").size());
        assertEquals(
                "function", assistant.path("tool_calls").get(0).path("type").asText());
        assertEquals("tool", body.path("messages").get(3).path("role").asText());
        assertEquals("c2", body.path("messages").get(4).path("tool_call_id").asText());
        assertEquals(
                "memory_search",
                body.path("tools").get(0).path("function").path("name").asText());
        assertEquals(
                "object",
                body.path("tools")
                        .get(0)
                        .path("function")
                        .path("parameters")
                        .path("type")
                        .asText());
    }

    @Test
    void anthropicRequestsMergeConsecutiveToolResultsIntoOneUserTurn() throws Exception {
        JsonNode body = AnthropicProvider.body(CONVERSATION);
        assertEquals("be brief", body.path("system").asText());
        JsonNode messages = body.path("messages");
        assertEquals(3, messages.size());
        assertEquals(
                "tool_use", messages.get(1).path("content").get(0).path("type").asText());
        assertEquals(
                "x",
                messages.get(1)
                        .path("content")
                        .get(0)
                        .path("input")
                        .path("query")
                        .asText());
        JsonNode results = messages.get(2);
        assertEquals("user", results.path("role").asText());
        assertEquals(2, results.path("content").size());
        assertEquals("c2", results.path("content").get(1).path("tool_use_id").asText());
        assertEquals(
                "object",
                body.path("tools").get(0).path("input_schema").path("type").asText());
    }

    @Test
    void restrictedEgressDropsOnlyTheEgressGrant() {
        Set<String> restricted = ToolExecutor.grants("restricted_egress");
        assertFalse(restricted.contains("egress.http"));
        assertEquals(ToolExecutor.ALL_GRANTS.size() - 1, restricted.size());
        assertEquals(ToolExecutor.ALL_GRANTS, ToolExecutor.grants("standard"));
    }
}
