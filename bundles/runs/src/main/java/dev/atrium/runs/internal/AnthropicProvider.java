package dev.atrium.runs.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.runs.api.ModelProvider;
import dev.atrium.streams.api.EventStreams;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Anthropic Messages ({@code POST <base>/v1/messages}, {@code stream: true}): {@code content_block_start} opens a
 * text or {@code tool_use} block, {@code content_block_delta} carries {@code text_delta} or {@code input_json_delta},
 * {@code message_delta} the stop reason. Tool results go back as {@code tool_result} blocks of a user turn.
 */
@Component(service = ModelProvider.class)
public class AnthropicProvider implements ModelProvider {

    private static final ObjectMapper JSON = JsonMappers.create();
    /** The largest event a provider's stream may send: one chunk of an answer, never the whole answer. */
    static final int MAX_EVENT_BYTES = 16 * 1024 * 1024;

    private final RunsSettings settings;
    private final EventStreams eventStreams;
    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Activate
    public AnthropicProvider(@Reference RunsSettings settings, @Reference EventStreams eventStreams) {
        this.settings = settings;
        this.eventStreams = eventStreams;
    }

    @Override
    public String name() {
        return "anthropic";
    }

    static ObjectNode body(Request request) throws IOException {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", request.model());
        body.put("max_tokens", request.maxTokens());
        body.put("stream", true);
        if (request.system() != null) {
            body.put("system", request.system());
        }
        ArrayNode messages = body.putArray("messages");
        ObjectNode pendingResults = null;
        for (Message m : request.messages()) {
            if (m.role().equals("tool")) {
                if (pendingResults == null) {
                    pendingResults = messages.addObject().put("role", "user");
                    pendingResults.putArray("content");
                }
                ((ArrayNode) pendingResults.get("content"))
                        .addObject()
                        .put("type", "tool_result")
                        .put("tool_use_id", m.toolCallId())
                        .put("content", m.text());
                continue;
            }
            pendingResults = null;
            ObjectNode o = messages.addObject().put("role", m.role().equals("assistant") ? "assistant" : "user");
            ArrayNode content = o.putArray("content");
            if (m.text() != null && !m.text().isEmpty()) {
                content.addObject().put("type", "text").put("text", m.text());
            }
            for (ToolCall c : m.toolCalls()) {
                content.addObject()
                        .put("type", "tool_use")
                        .put("id", c.id())
                        .put("name", c.name())
                        .set("input", JSON.readTree(c.arguments()));
            }
        }
        if (!request.tools().isEmpty()) {
            ArrayNode tools = body.putArray("tools");
            for (Tool t : request.tools()) {
                tools.addObject()
                        .put("name", t.name())
                        .put("description", t.description())
                        .set("input_schema", JSON.readTree(t.parametersSchema()));
            }
        }
        return body;
    }

    @Override
    public Reply complete(Request request, Listener listener) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(settings.anthropicBaseUrl + "/v1/messages"))
                .timeout(Duration.ofMinutes(5))
                .header("Content-Type", "application/json")
                .header("Accept", "text/event-stream")
                .header("anthropic-version", "2023-06-01")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body(request))));
        if (!settings.anthropicApiKey.isEmpty()) {
            b.header("x-api-key", settings.anthropicApiKey);
        }
        HttpResponse<InputStream> r = client.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        if (r.statusCode() / 100 != 2) {
            try (InputStream in = r.body()) {
                throw new IOException(ProviderErrors.describe(
                        "anthropic", r.statusCode(), ProviderErrors.read(in), settings.anthropicApiKey));
            }
        }
        StringBuilder text = new StringBuilder();
        TreeMap<Integer, String[]> blocks = new TreeMap<>(); // index -> type, id, name, json
        String[] stop = {null};
        long[] tokens = {0, 0}; // input, output
        try (InputStream in = r.body()) {
            eventStreams.reader(in, MAX_EVENT_BYTES).forEach(ev -> {
                String event = ev.name();
                String data = ev.data();
                JsonNode e = JSON.readTree(data);
                String type = e.path("type").asText(event == null ? "" : event);
                switch (type) {
                    case "content_block_start" -> {
                        JsonNode cb = e.path("content_block");
                        blocks.put(e.path("index").asInt(), new String[] {
                            cb.path("type").asText(),
                            cb.path("id").asText(null),
                            cb.path("name").asText(null),
                            ""
                        });
                        if (cb.path("type").asText().equals("text")
                                && !cb.path("text").asText("").isEmpty()) {
                            text.append(cb.path("text").asText());
                            listener.text(cb.path("text").asText());
                        }
                    }
                    case "content_block_delta" -> {
                        JsonNode d = e.path("delta");
                        String[] block = blocks.get(e.path("index").asInt());
                        if (d.path("type").asText().equals("text_delta")) {
                            String t = d.path("text").asText("");
                            if (!t.isEmpty()) {
                                text.append(t);
                                listener.text(t);
                            }
                        } else if (d.path("type").asText().equals("input_json_delta") && block != null) {
                            block[3] += d.path("partial_json").asText("");
                        }
                    }
                    case "message_start" -> {
                        JsonNode u = e.path("message").path("usage");
                        tokens[0] = u.path("input_tokens").asLong(0)
                                + u.path("cache_creation_input_tokens").asLong(0)
                                + u.path("cache_read_input_tokens").asLong(0);
                        tokens[1] = u.path("output_tokens").asLong(0);
                    }
                    case "message_delta" -> {
                        // the output count here is cumulative for the message
                        if (e.path("usage").path("output_tokens").canConvertToLong()) {
                            tokens[1] = e.path("usage").path("output_tokens").asLong();
                        }
                        if (e.path("delta").path("stop_reason").isTextual()) {
                            stop[0] = e.path("delta").path("stop_reason").asText();
                        }
                    }
                    case "error" ->
                        throw new IOException(ProviderErrors.describeStreamError(
                                "anthropic", e.path("error").path("message").asText(), settings.anthropicApiKey));
                    case "message_stop" -> {
                        return false;
                    }
                    default -> {}
                }
                return true;
            });
        }
        List<ToolCall> calls = new ArrayList<>();
        for (String[] block : blocks.values()) {
            if (block[0].equals("tool_use")) {
                calls.add(new ToolCall(block[1], block[2], block[3].isEmpty() ? "{}" : block[3]));
            }
        }
        return new Reply(text.toString(), calls, stop[0], new Usage(tokens[0], tokens[1]));
    }
}
