package dev.atrium.services.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.ApiException;
import java.io.IOException;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A service's runtime settings ({@code PATCH /api/services/:id/settings}): {@code compatibility_date} (YYYY-MM-DD),
 * {@code compatibility_flags} (strings), {@code limits} ({@code cpu_ms}, {@code memory_mb}: positive integers) and
 * {@code mcp_server} (a boolean or an object). A PATCH sets the fields it names; {@code null} resets one to the default.
 */
final class Settings {

    static final long MIN_MEMORY_MB = 16;
    static final Set<String> KEYS = Set.of("compatibility_date", "compatibility_flags", "limits", "mcp_server");
    static final Set<String> LIMITS = Set.of("cpu_ms", "memory_mb");
    private static final Pattern DATE = Pattern.compile("\\d{4}-\\d{2}-\\d{2}");
    private static final Pattern FLAG = Pattern.compile("[A-Za-z0-9_.-]{1,100}");

    private Settings() {}

    static ObjectNode parse(String json) {
        try {
            JsonNode n = Deployer.JSON.readTree(json == null ? "{}" : json);
            return n instanceof ObjectNode o ? o : JsonNodeFactory.instance.objectNode();
        } catch (IOException e) {
            return JsonNodeFactory.instance.objectNode();
        }
    }

    /** {@code current} with {@code patch} applied; 400 naming the first field that is wrong. */
    static ObjectNode merge(ObjectNode current, JsonNode patch) {
        if (patch == null || !patch.isObject()) {
            throw ApiException.badRequest("the body must be a JSON object");
        }
        ObjectNode out = current.deepCopy();
        for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String key = e.getKey();
            JsonNode v = e.getValue();
            if (!KEYS.contains(key)) {
                throw ApiException.badRequest("unknown setting '" + key + "'; settings are "
                        + String.join(", ", KEYS.stream().sorted().toList()));
            }
            if (v.isNull()) {
                out.remove(key);
                continue;
            }
            switch (key) {
                case "compatibility_date" -> out.put(key, date(v));
                case "compatibility_flags" -> out.set(key, flags(v));
                case "limits" -> out.set(key, limits(v));
                default -> {
                    if (!v.isBoolean() && !v.isObject()) {
                        throw ApiException.badRequest("mcp_server must be a boolean or an object");
                    }
                    out.set(key, v);
                }
            }
        }
        return out;
    }

    private static String date(JsonNode v) {
        if (!v.isTextual() || !DATE.matcher(v.textValue()).matches()) {
            throw ApiException.badRequest("compatibility_date must be a date YYYY-MM-DD");
        }
        try {
            LocalDate.parse(v.textValue());
        } catch (DateTimeParseException e) {
            throw ApiException.badRequest("compatibility_date must be a date YYYY-MM-DD");
        }
        return v.textValue();
    }

    private static JsonNode flags(JsonNode v) {
        if (!v.isArray() || v.size() > 100) {
            throw ApiException.badRequest("compatibility_flags must be an array of at most 100 strings");
        }
        for (JsonNode f : v) {
            if (!f.isTextual() || !FLAG.matcher(f.textValue()).matches()) {
                throw ApiException.badRequest(
                        "each compatibility flag must be a string of 1 to 100 letters, digits, '_', '.' or '-'");
            }
        }
        return v;
    }

    private static JsonNode limits(JsonNode v) {
        if (!v.isObject()) {
            throw ApiException.badRequest("limits must be an object with cpu_ms and/or memory_mb");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!LIMITS.contains(e.getKey())) {
                throw ApiException.badRequest("unknown limit '" + e.getKey() + "'; limits are cpu_ms and memory_mb");
            }
            JsonNode n = e.getValue();
            if (!n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() < 1 || n.longValue() > 1_000_000) {
                throw ApiException.badRequest("limits." + e.getKey() + " must be a whole number between 1 and 1000000");
            }
            if (e.getKey().equals("memory_mb") && n.longValue() < MIN_MEMORY_MB) {
                // each isolate's heap limit: below this not even a hello worker's isolate starts
                throw ApiException.badRequest("limits.memory_mb must be at least " + MIN_MEMORY_MB);
            }
        }
        return v;
    }
}
