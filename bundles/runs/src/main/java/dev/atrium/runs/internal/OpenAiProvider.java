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
 * OpenAI-compatible chat completions ({@code POST <base>/chat/completions}, {@code stream: true}): text arrives in
 * {@code choices[0].delta.content}, tool calls in {@code delta.tool_calls} fragments keyed by index.
 */
@Component(service = ModelProvider.class)
public class OpenAiProvider implements ModelProvider {

    private static final ObjectMapper JSON = JsonMappers.create();
    /** The largest event a provider's stream may send: one chunk of an answer, never the whole answer. */
    static final int MAX_EVENT_BYTES = 16 * 1024 * 1024;

    private final RunsSettings settings;
    private final EventStreams eventStreams;
    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Activate
    public OpenAiProvider(@Reference RunsSettings settings, @Reference EventStreams eventStreams) {
        this.settings = settings;
        this.eventStreams = eventStreams;
    }

    @Override
    public String name() {
        return "openai";
    }

    static ObjectNode body(Request request) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", request.model());
        body.put("stream", true);
        // the last chunk then carries the turn's token counts, for metering
        body.putObject("stream_options").put("include_usage", true);
        body.put("max_tokens", request.maxTokens());
        ArrayNode messages = body.putArray("messages");
        if (request.system() != null) {
            messages.addObject().put("role", "system").put("content", request.system());
        }
        for (Message m : request.messages()) {
            ObjectNode o = messages.addObject();
            switch (m.role()) {
                case "tool" ->
                    o.put("role", "tool").put("tool_call_id", m.toolCallId()).put("content", m.text());
                case "assistant" -> {
                    o.put("role", "assistant");
                    if (m.text() == null || m.text().isEmpty()) {
                        o.putNull("content");
                    } else {
                        o.put("content", m.text());
                    }
                    if (!m.toolCalls().isEmpty()) {
                        ArrayNode calls = o.putArray("tool_calls");
                        for (ToolCall c : m.toolCalls()) {
                            ObjectNode call =
                                    calls.addObject().put("id", c.id()).put("type", "function");
                            call.putObject("function").put("name", c.name()).put("arguments", c.arguments());
                        }
                    }
                }
                default -> o.put("role", "user").put("content", m.text());
            }
        }
        if (!request.tools().isEmpty()) {
            ArrayNode tools = body.putArray("tools");
            for (Tool t : request.tools()) {
                ObjectNode f = tools.addObject().put("type", "function").putObject("function");
                f.put("name", t.name()).put("description", t.description());
                try {
                    f.set("parameters", JSON.readTree(t.parametersSchema()));
                } catch (IOException e) {
                    throw new IllegalArgumentException("tool " + t.name() + " has an invalid schema", e);
                }
            }
        }
        return body;
    }

    @Override
    public Reply complete(Request request, Listener listener) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(settings.openaiBaseUrl + "/chat/completions"))
                .timeout(Duration.ofMinutes(5))
                .header("Content-Type", "application/json")
                .header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body(request))));
        if (!settings.openaiApiKey.isEmpty()) {
            b.header("Authorization", "Bearer " + settings.openaiApiKey);
        }
        HttpResponse<InputStream> r = client.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        if (r.statusCode() / 100 != 2) {
            try (InputStream in = r.body()) {
                throw new IOException(ProviderErrors.describe(
                        "openai", r.statusCode(), ProviderErrors.read(in), settings.openaiApiKey));
            }
        }
        StringBuilder text = new StringBuilder();
        TreeMap<Integer, String[]> calls = new TreeMap<>(); // index -> id, name, arguments
        String[] finish = {null};
        long[] tokens = {0, 0}; // prompt, completion
        try (InputStream in = r.body()) {
            eventStreams.reader(in, MAX_EVENT_BYTES).forEach(ev -> {
                String data = ev.data();
                if (data.equals("[DONE]")) {
                    return false;
                }
                JsonNode chunk = JSON.readTree(data);
                if (chunk.has("error")) {
                    throw new IOException(ProviderErrors.describeStreamError(
                            "openai", chunk.path("error").path("message").asText(), settings.openaiApiKey));
                }
                JsonNode usage = chunk.path("usage");
                if (usage.isObject()) {
                    tokens[0] = usage.path("prompt_tokens").asLong(0);
                    tokens[1] = usage.path("completion_tokens").asLong(0);
                }
                JsonNode choice = chunk.path("choices").path(0);
                JsonNode delta = choice.path("delta");
                String content = delta.path("content").isTextual()
                        ? delta.path("content").asText()
                        : null;
                if (content != null && !content.isEmpty()) {
                    text.append(content);
                    listener.text(content);
                }
                for (JsonNode tc : delta.path("tool_calls")) {
                    String[] c = calls.computeIfAbsent(
                            tc.path("index").asInt(calls.size()), k -> new String[] {null, null, ""});
                    if (tc.path("id").isTextual()) {
                        c[0] = tc.path("id").asText();
                    }
                    JsonNode f = tc.path("function");
                    if (f.path("name").isTextual()) {
                        c[1] = f.path("name").asText();
                    }
                    if (f.path("arguments").isTextual()) {
                        c[2] += f.path("arguments").asText();
                    }
                }
                if (choice.path("finish_reason").isTextual()) {
                    finish[0] = choice.path("finish_reason").asText();
                }
                return true;
            });
        }
        List<ToolCall> out = new ArrayList<>();
        for (var e : calls.entrySet()) {
            String[] c = e.getValue();
            out.add(new ToolCall(c[0] == null ? "call_" + e.getKey() : c[0], c[1], c[2].isEmpty() ? "{}" : c[2]));
        }
        return new Reply(text.toString(), out, finish[0], new Usage(tokens[0], tokens[1]));
    }
}
