package dev.atrium.itests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * A scripted model API on loopback speaking the real streaming wire protocols: OpenAI chat completions
 * ({@code POST /v1/chat/completions}, SSE {@code data:} chunks ending in {@code [DONE]}) and Anthropic Messages
 * ({@code POST /v1/messages}, named SSE events). Scripts are keyed by model name, so each test owns its model;
 * every request body is recorded for assertions.
 */
final class FakeModelServer implements AutoCloseable {

    /** One scripted turn: given the request body, the SSE frames to stream (already formatted). */
    interface Turn extends Function<JsonNode, List<String>> {}

    private final HttpServer server;
    private final Map<String, List<Turn>> scripts = new ConcurrentHashMap<>();
    private final Map<String, List<JsonNode>> received = new ConcurrentHashMap<>();
    final List<String> apiKeys = new CopyOnWriteArrayList<>();

    FakeModelServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext(
                "/v1/chat/completions", ex -> handle(ex, ex.getRequestHeaders().getFirst("Authorization")));
        server.createContext(
                "/v1/messages", ex -> handle(ex, ex.getRequestHeaders().getFirst("x-api-key")));
        server.start();
    }

    String openAiBase() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    }

    String anthropicBase() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    void script(String model, Turn... turns) {
        scripts.put(model, new CopyOnWriteArrayList<>(List.of(turns)));
        received.put(model, new CopyOnWriteArrayList<>());
    }

    List<JsonNode> received(String model) {
        return received.getOrDefault(model, List.of());
    }

    private void handle(HttpExchange ex, String key) throws IOException {
        try (ex) {
            JsonNode body = Http.JSON.readTree(ex.getRequestBody().readAllBytes());
            apiKeys.add(String.valueOf(key));
            String model = body.path("model").asText();
            List<Turn> script = scripts.get(model);
            if (script == null || script.isEmpty()) {
                byte[] err = "{\"error\":{\"message\":\"no script left\"}}".getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(500, err.length);
                ex.getResponseBody().write(err);
                return;
            }
            received.get(model).add(body);
            List<String> frames = script.remove(0).apply(body);
            ex.getResponseHeaders().set("Content-Type", "text/event-stream");
            ex.sendResponseHeaders(200, 0);
            OutputStream out = ex.getResponseBody();
            for (String f : frames) {
                if (f.startsWith("SLEEP:")) {
                    try {
                        Thread.sleep(Long.parseLong(f.substring(6)));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    continue;
                }
                out.write(f.getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
        }
    }

    // ---- OpenAI chat-completions chunks

    static String openAiChunk(ObjectNode delta, String finish) {
        ObjectNode chunk = Http.JSON
                .createObjectNode()
                .put("id", "chatcmpl-1")
                .put("object", "chat.completion.chunk")
                .put("model", "m");
        ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
        choice.set("delta", delta);
        if (finish == null) {
            choice.putNull("finish_reason");
        } else {
            choice.put("finish_reason", finish);
        }
        return "data: " + chunk + "\n\n";
    }

    /** Streams {@code parts} as content deltas and stops. */
    static List<String> openAiText(String... parts) {
        List<String> frames = new ArrayList<>();
        frames.add(openAiChunk(
                Http.JSON.createObjectNode().put("role", "assistant").put("content", ""), null));
        for (String p : parts) {
            frames.add(openAiChunk(Http.JSON.createObjectNode().put("content", p), null));
        }
        frames.add(openAiChunk(Http.JSON.createObjectNode(), "stop"));
        frames.add("data: [DONE]\n\n");
        return frames;
    }

    /** A tool call whose arguments arrive in two fragments, as OpenAI streams them. */
    static List<String> openAiToolCall(String id, String name, String arguments) {
        List<String> frames = new ArrayList<>();
        ObjectNode first = Http.JSON.createObjectNode().put("role", "assistant");
        first.putNull("content");
        ArrayNode calls = first.putArray("tool_calls");
        ObjectNode call = calls.addObject().put("index", 0).put("id", id).put("type", "function");
        call.putObject("function").put("name", name).put("arguments", "");
        frames.add(openAiChunk(first, null));
        int half = arguments.length() / 2;
        for (String part : List.of(arguments.substring(0, half), arguments.substring(half))) {
            ObjectNode d = Http.JSON.createObjectNode();
            d.putArray("tool_calls")
                    .addObject()
                    .put("index", 0)
                    .putObject("function")
                    .put("arguments", part);
            frames.add(openAiChunk(d, null));
        }
        frames.add(openAiChunk(Http.JSON.createObjectNode(), "tool_calls"));
        frames.add("data: [DONE]\n\n");
        return frames;
    }

    // ---- Anthropic Messages events

    static String anthropicEvent(String type, ObjectNode data) {
        data.put("type", type);
        return "event: " + type + "\ndata: " + data + "\n\n";
    }

    private static ObjectNode obj() {
        return Http.JSON.createObjectNode();
    }

    private static String start() {
        ObjectNode m = obj();
        m.putObject("message")
                .put("id", "msg_1")
                .put("type", "message")
                .put("role", "assistant")
                .put("model", "m")
                .putArray("content");
        return anthropicEvent("message_start", m);
    }

    /** Text in {@code parts}, then optionally a tool_use block with its input JSON in two fragments. */
    static List<String> anthropic(List<String> parts, String toolId, String toolName, String input) {
        List<String> frames = new ArrayList<>();
        frames.add(start());
        frames.add(anthropicEvent("ping", obj()));
        int index = 0;
        if (!parts.isEmpty()) {
            ObjectNode s = obj().put("index", index);
            s.putObject("content_block").put("type", "text").put("text", "");
            frames.add(anthropicEvent("content_block_start", s));
            for (String p : parts) {
                ObjectNode d = obj().put("index", index);
                d.putObject("delta").put("type", "text_delta").put("text", p);
                frames.add(anthropicEvent("content_block_delta", d));
            }
            frames.add(anthropicEvent("content_block_stop", obj().put("index", index)));
            index++;
        }
        if (toolName != null) {
            ObjectNode s = obj().put("index", index);
            s.putObject("content_block")
                    .put("type", "tool_use")
                    .put("id", toolId)
                    .put("name", toolName)
                    .putObject("input");
            frames.add(anthropicEvent("content_block_start", s));
            int half = input.length() / 2;
            for (String part : List.of(input.substring(0, half), input.substring(half))) {
                ObjectNode d = obj().put("index", index);
                d.putObject("delta").put("type", "input_json_delta").put("partial_json", part);
                frames.add(anthropicEvent("content_block_delta", d));
            }
            frames.add(anthropicEvent("content_block_stop", obj().put("index", index)));
        }
        ObjectNode md = obj();
        md.putObject("delta")
                .put("stop_reason", toolName != null ? "tool_use" : "end_turn")
                .putNull("stop_sequence");
        md.putObject("usage").put("output_tokens", 10);
        frames.add(anthropicEvent("message_delta", md));
        frames.add(anthropicEvent("message_stop", obj()));
        return frames;
    }

    /** {@code frames} with a pause of {@code millis} before each one (the server sleeps; nothing is sent). */
    static List<String> paced(long millis, List<String> frames) {
        List<String> out = new ArrayList<>();
        for (String f : frames) {
            out.add("SLEEP:" + millis);
            out.add(f);
        }
        return out;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
