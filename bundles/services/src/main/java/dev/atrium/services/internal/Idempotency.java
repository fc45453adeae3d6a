package dev.atrium.services.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonMappers;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code Idempotency-Key} of a deployment create: the key with the same body gives the first deployment again (200),
 * with a different body 409. The body is compared by the SHA-256 of its canonical JSON (object keys sorted), so field
 * order and whitespace do not matter; the path (which service) is part of the key's scope.
 */
final class Idempotency {

    static final int MAX_KEY = 200;
    private static final ObjectMapper JSON = JsonMappers.create();

    enum Outcome {
        NEW,
        REPLAY,
        CONFLICT
    }

    private Idempotency() {}

    static String key(String header) {
        if (header == null) {
            return null;
        }
        String k = header.trim();
        if (k.isEmpty() || k.length() > MAX_KEY || !k.chars().allMatch(c -> c >= 0x21 && c <= 0x7e)) {
            throw ApiException.badRequest("Idempotency-Key must be 1 to " + MAX_KEY + " visible ASCII characters");
        }
        return k;
    }

    static String hash(JsonNode body) {
        try {
            byte[] canonical = JSON.writeValueAsBytes(canonical(body));
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canonical));
        } catch (NoSuchAlgorithmException | com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static Outcome decide(String storedHash, String requestHash) {
        if (storedHash == null) {
            return Outcome.NEW;
        }
        return storedHash.equals(requestHash) ? Outcome.REPLAY : Outcome.CONFLICT;
    }

    private static Object canonical(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (node.isObject()) {
            Map<String, Object> sorted = new TreeMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = ((ObjectNode) node).fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                sorted.put(e.getKey(), canonical(e.getValue()));
            }
            return sorted;
        }
        if (node.isArray()) {
            java.util.List<Object> out = new java.util.ArrayList<>();
            node.forEach(n -> out.add(canonical(n)));
            return out;
        }
        if (node.isTextual()) {
            return node.textValue();
        }
        return node;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
