package dev.atrium.search.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.JsonMappers;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * An OpenAI-compatible embeddings client ({@code POST <base>/embeddings}, the base as the chat providers take it, e.g.
 * {@code https://api.openai.com/v1}): texts in, one vector each, in order.
 */
final class Embeddings {

    private static final ObjectMapper JSON = JsonMappers.create();
    /** Characters of a text sent; longer ones are cut (models take a few thousand tokens). */
    static final int MAX_CHARS = 8000;

    private final URI endpoint;
    private final String apiKey;
    private final String model;
    private final HttpClient http;

    Embeddings(URI base, String apiKey, String model) {
        this.endpoint = base.resolve("embeddings");
        this.apiKey = apiKey;
        this.model = model;
        this.http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    String model() {
        return model;
    }

    /**
     * @throws IOException when the endpoint cannot be reached, answers an error or an answer of another shape (the
     *                     message says which)
     */
    List<float[]> embed(List<String> texts) throws IOException, InterruptedException {
        if (texts.isEmpty()) {
            return List.of();
        }
        ObjectNode body = JSON.createObjectNode().put("model", model);
        var input = body.putArray("input");
        for (String t : texts) {
            input.add(t.length() > MAX_CHARS ? t.substring(0, MAX_CHARS) : t);
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(endpoint)
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)));
        if (!apiKey.isBlank()) {
            request.header("Authorization", "Bearer " + apiKey);
        }
        HttpResponse<byte[]> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        if (answer.statusCode() != 200) {
            throw new IOException("the embeddings API answered " + answer.statusCode());
        }
        JsonNode data = JSON.readTree(answer.body()).path("data");
        if (!data.isArray() || data.size() != texts.size()) {
            throw new IOException(
                    "the embeddings API answered " + data.size() + " vectors for " + texts.size() + " texts");
        }
        float[][] out = new float[texts.size()][];
        for (JsonNode d : data) {
            int index = d.path("index").asInt(-1);
            JsonNode values = d.path("embedding");
            if (index < 0 || index >= out.length || !values.isArray() || values.isEmpty()) {
                throw new IOException("the embeddings API answered a vector without index or values");
            }
            float[] v = new float[values.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = (float) values.get(i).asDouble();
            }
            out[index] = v;
        }
        List<float[]> vectors = new ArrayList<>(out.length);
        for (float[] v : out) {
            if (v == null) {
                throw new IOException("the embeddings API left a text without a vector");
            }
            vectors.add(v);
        }
        return vectors;
    }
}
