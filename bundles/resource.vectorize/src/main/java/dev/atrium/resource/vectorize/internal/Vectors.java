package dev.atrium.resource.vectorize.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.VectorFacet.Vector;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What both indexes share: the checks on input, the three metrics and their scores, the byte form of a vector and the
 * canonical form of a metadata value that equality filters compare.
 *
 * <p>Scores (higher is nearer, the same on both indexes): {@code cosine} the cosine similarity in [-1, 1],
 * {@code dot} the dot product, {@code euclidean} {@code 1 / (1 + d²)} with d the L2 distance (in (0, 1]).
 */
final class Vectors {

    static final ObjectMapper JSON = JsonMappers.create();
    static final int MAX_ID_LENGTH = 64;
    static final int MAX_METADATA_BYTES = 10_240;
    static final int MAX_FILTER_FIELDS = 16;

    enum Metric {
        COSINE,
        DOT,
        EUCLIDEAN;

        static Metric of(Object wire) {
            return valueOf(String.valueOf(wire).toUpperCase(java.util.Locale.ROOT));
        }

        /** The score of {@code stored} for {@code query}; {@code queryNorm} is |query| (used by cosine only). */
        double score(float[] query, double queryNorm, float[] stored) {
            switch (this) {
                case DOT -> {
                    double dot = 0;
                    for (int i = 0; i < query.length; i++) {
                        dot += query[i] * stored[i];
                    }
                    return dot;
                }
                case COSINE -> {
                    double dot = 0;
                    double norm = 0;
                    for (int i = 0; i < query.length; i++) {
                        dot += query[i] * stored[i];
                        norm += stored[i] * stored[i];
                    }
                    return norm == 0 ? 0 : dot / (queryNorm * Math.sqrt(norm));
                }
                default -> {
                    double d2 = 0;
                    for (int i = 0; i < query.length; i++) {
                        double d = query[i] - stored[i];
                        d2 += d * d;
                    }
                    return 1 / (1 + d2);
                }
            }
        }
    }

    private Vectors() {}

    static double norm(float[] v) {
        double n = 0;
        for (float f : v) {
            n += f * f;
        }
        return Math.sqrt(n);
    }

    /** Checks one vector to be stored: its id, its dimension, finite values, a non-zero vector for cosine, its metadata's size. */
    static void check(Vector v, int dimensions, Metric metric) throws ResourceException {
        if (v == null
                || v.id() == null
                || v.id().isEmpty()
                || v.id().length() > MAX_ID_LENGTH
                || v.id().indexOf('\0') >= 0) {
            throw ResourceException.badInput("every vector needs an id of 1 to " + MAX_ID_LENGTH + " characters");
        }
        checkValues(v.values(), dimensions, metric, "vector '" + v.id() + "'");
        if (v.metadata() != null) {
            for (String key : v.metadata().keySet()) {
                if (key == null || key.isEmpty() || key.length() > 128) {
                    throw ResourceException.badInput("vector '" + v.id() + "': metadata keys are 1 to 128 characters");
                }
            }
            if (metadataJson(v.metadata()).getBytes(java.nio.charset.StandardCharsets.UTF_8).length
                    > MAX_METADATA_BYTES) {
                throw new ResourceException(
                        ResourceException.Kind.TOO_LARGE,
                        "vector '" + v.id() + "': metadata is larger than " + MAX_METADATA_BYTES + " bytes as JSON");
            }
        }
    }

    static void checkValues(float[] values, int dimensions, Metric metric, String what) throws ResourceException {
        if (values == null || values.length != dimensions) {
            throw ResourceException.badInput(
                    what + " has " + (values == null ? 0 : values.length) + " values; this index takes " + dimensions);
        }
        for (float f : values) {
            if (!Float.isFinite(f)) {
                throw ResourceException.badInput(what + " has a value that is not a finite number");
            }
        }
        if (metric == Metric.COSINE && norm(values) == 0) {
            throw ResourceException.badInput(what + " is all zeros, which has no direction for the cosine metric");
        }
    }

    /** Refuses duplicate ids in one batch (which one would win is not defined). */
    static void distinct(Collection<Vector> vectors) throws ResourceException {
        Set<String> seen = new HashSet<>();
        for (Vector v : vectors) {
            if (!seen.add(v.id())) {
                throw ResourceException.badInput("vector id '" + v.id() + "' appears twice in one upsert");
            }
        }
    }

    /** Checks a filter: at most {@value #MAX_FILTER_FIELDS} top-level fields, each a string, number, boolean or null. */
    static Map<String, Object> checkFilter(Map<String, Object> filter) throws ResourceException {
        if (filter == null) {
            return Map.of();
        }
        if (filter.size() > MAX_FILTER_FIELDS) {
            throw ResourceException.badInput("a filter has at most " + MAX_FILTER_FIELDS + " fields");
        }
        for (Map.Entry<String, Object> e : filter.entrySet()) {
            Object v = e.getValue();
            if (!(v == null || v instanceof String || v instanceof Number || v instanceof Boolean)) {
                throw ResourceException.badInput(
                        "filter." + e.getKey() + " must be a string, number, boolean or null (equality only)");
            }
        }
        return filter;
    }

    /**
     * The canonical text of a scalar metadata value, so that equal JSON values compare equal ({@code 1} and
     * {@code 1.0} both become {@code n:1}); null for a value that is not a scalar (objects and arrays are stored,
     * not filterable).
     */
    static String canonical(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof String s) {
            return "s:" + s;
        }
        if (v instanceof Boolean b) {
            return "b:" + b;
        }
        if (v instanceof Number n) {
            try {
                BigDecimal d = new BigDecimal(n.toString()).stripTrailingZeros();
                return "n:" + d.toPlainString();
            } catch (NumberFormatException e) {
                return "n:" + n;
            }
        }
        return null;
    }

    static String metadataJson(Map<String, Object> metadata) throws ResourceException {
        try {
            return JSON.writeValueAsString(metadata == null ? Map.of() : metadata);
        } catch (JsonProcessingException e) {
            throw ResourceException.badInput("metadata is not JSON: " + e.getOriginalMessage());
        }
    }

    static Map<String, Object> parseMetadata(String json) {
        try {
            return JSON.readValue(json, new TypeReference<Map<String, Object>>() {});
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored metadata is not a JSON object", e);
        }
    }

    static byte[] toBytes(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(v);
        return b.array();
    }

    static float[] fromBytes(byte[] bytes) {
        float[] v = new float[bytes.length / 4];
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(v);
        return v;
    }

    static List<String> ids(Collection<Vector> vectors) {
        return vectors.stream().map(Vector::id).toList();
    }
}
