package dev.atrium.kernel.api;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code limit} and {@code offset} of a list request, the same on every list: limit defaults to 20 and
 * may not exceed 100, offset defaults to 0.
 */
public record PageRequest(int limit, int offset) {

    public static final int DEFAULT_LIMIT = 20;
    public static final int MAX_LIMIT = 100;

    /** Parses raw query values; 400 {@code BAD_REQUEST} naming the parameter when one is not acceptable. */
    public static PageRequest of(String limit, String offset) {
        int l = parse("limit", limit, DEFAULT_LIMIT);
        int o = parse("offset", offset, 0);
        if (l < 1 || l > MAX_LIMIT) {
            throw ApiException.badRequest("limit must be between 1 and " + MAX_LIMIT);
        }
        if (o < 0) {
            throw ApiException.badRequest("offset must not be negative");
        }
        return new PageRequest(l, o);
    }

    /** The list body every list answers with: {@code {<name>: items, total, limit, offset}}. */
    public Map<String, Object> body(String name, List<?> items, long total) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(name, items);
        m.put("total", total);
        m.put("limit", limit);
        m.put("offset", offset);
        return m;
    }

    private static int parse(String name, String value, int dflt) {
        if (value == null || value.isBlank()) {
            return dflt;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name + " must be an integer");
        }
    }
}
