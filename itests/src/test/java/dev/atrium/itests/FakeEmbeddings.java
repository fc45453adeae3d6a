package dev.atrium.itests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An OpenAI-compatible embeddings API on loopback ({@code POST /v1/embeddings}) whose vectors come from the text
 * deterministically and carry meaning the way the tests need: words of one concept group (car, automobile, vehicle)
 * share a dimension, other words are hashed into the rest with a small weight, and words with digits (identifiers)
 * add nothing, as real embeddings capture identifiers poorly. Every text embedded is counted.
 */
final class FakeEmbeddings implements AutoCloseable {

    static final int DIMENSIONS = 64;
    private static final List<List<String>> CONCEPTS = List.of(
            List.of("car", "cars", "automobile", "automobiles", "vehicle", "vehicles", "sedan", "truck"),
            List.of("repair", "repairs", "maintenance", "mechanic", "fix", "fixing", "servicing", "garage"),
            List.of("deploy", "deploys", "deployment", "release", "releases", "ship", "rollout"),
            List.of("database", "postgres", "postgresql", "sql", "db"),
            List.of("backup", "backups", "snapshot", "snapshots", "restore"),
            List.of("cat", "cats", "kitten", "feline"),
            List.of("food", "meal", "lunch", "dinner", "eat", "recipe"),
            List.of("sort", "sorts", "sorting", "sorted", "order", "ordering"),
            List.of("list", "lists", "array", "arrays", "items"),
            List.of("parse", "parses", "parsing", "parser", "json"));

    private final HttpServer server;
    private final Map<String, AtomicInteger> texts = new ConcurrentHashMap<>();
    final AtomicLong requests = new AtomicLong();
    volatile long delayMillis;
    volatile boolean failing;

    FakeEmbeddings() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/v1/embeddings", this::handle);
        server.start();
    }

    /** The base URL as ATRIUM_EMBEDDINGS_BASE_URL takes it. */
    String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    }

    /** How many times a text containing {@code part} was embedded. */
    int embedded(String part) {
        return texts.entrySet().stream()
                .filter(e -> e.getKey().contains(part))
                .mapToInt(e -> e.getValue().get())
                .sum();
    }

    long textsEmbedded() {
        return texts.values().stream().mapToLong(AtomicInteger::get).sum();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            requests.incrementAndGet();
            JsonNode body = Http.JSON.readTree(ex.getRequestBody().readAllBytes());
            if (delayMillis > 0) {
                Thread.sleep(delayMillis);
            }
            if (failing) {
                byte[] err = "{\"error\":{\"message\":\"down\"}}".getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(503, err.length);
                ex.getResponseBody().write(err);
                return;
            }
            ObjectNode answer = Http.JSON
                    .createObjectNode()
                    .put("object", "list")
                    .put("model", body.path("model").asText());
            ArrayNode data = answer.putArray("data");
            int i = 0;
            for (JsonNode input : body.path("input")) {
                texts.computeIfAbsent(input.asText(), t -> new AtomicInteger()).incrementAndGet();
                ObjectNode d = data.addObject().put("object", "embedding").put("index", i++);
                ArrayNode values = d.putArray("embedding");
                for (float f : vector(input.asText())) {
                    values.add(f);
                }
            }
            byte[] bytes = Http.JSON.writeValueAsBytes(answer);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(200, bytes.length);
            ex.getResponseBody().write(bytes);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static float[] vector(String text) {
        float[] v = new float[DIMENSIONS];
        for (String word : text.toLowerCase(Locale.ROOT).split("[^a-z0-9]+")) {
            if (word.isEmpty() || word.chars().anyMatch(Character::isDigit)) {
                continue;
            }
            boolean concept = false;
            for (int c = 0; c < CONCEPTS.size(); c++) {
                if (CONCEPTS.get(c).contains(word)) {
                    v[c] += 1;
                    concept = true;
                }
            }
            if (!concept) {
                v[16 + Math.floorMod(word.hashCode(), DIMENSIONS - 16)] += 0.3f;
            }
        }
        double n = 0;
        for (float f : v) {
            n += f * f;
        }
        if (n == 0) {
            v[15] = 1; // a text of identifiers only still has a direction
            return v;
        }
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) (v[i] / Math.sqrt(n));
        }
        return v;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
