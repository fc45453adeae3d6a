package dev.atrium.kernel.api;

import com.fasterxml.jackson.databind.JsonNode;
import java.sql.SQLException;
import java.util.Iterator;
import java.util.Map;

/**
 * PostgreSQL text and jsonb cannot hold U+0000. Input carrying it is refused with 400 naming the field (never a 500);
 * text the server produces itself (model and tool output) has it replaced instead.
 */
public final class NulText {

    private NulText() {}

    /** 400 when any string or field name in {@code body} contains U+0000. */
    public static void reject(JsonNode body) {
        String where = find(body, "body");
        if (where != null) {
            throw ApiException.badRequest(where + " must not contain NUL (U+0000) characters");
        }
    }

    /** 400 when {@code value} (a path or query parameter) contains U+0000. */
    public static void reject(String name, String value) {
        if (value != null && value.indexOf('\0') >= 0) {
            throw ApiException.badRequest(name + " must not contain NUL (U+0000) characters");
        }
    }

    private static String find(JsonNode n, String path) {
        if (n == null) {
            return null;
        }
        if (n.isTextual()) {
            return n.textValue().indexOf('\0') >= 0 ? path : null;
        }
        if (n.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String name = e.getKey().indexOf('\0') >= 0 ? "a field name" : e.getKey();
                if (e.getKey().indexOf('\0') >= 0) {
                    return name;
                }
                String found = find(e.getValue(), name);
                if (found != null) {
                    return found;
                }
            }
        } else if (n.isArray()) {
            for (JsonNode item : n) {
                String found = find(item, path);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    /** Replaces U+0000 with U+FFFD. */
    public static String clean(String s) {
        return s == null || s.indexOf('\0') < 0 ? s : s.replace('\0', '\uFFFD');
    }

    /**
     * A database failure as the exception to throw.
     *
     * @deprecated the policy is {@link Sql#translate}, which this now is: PostgreSQL's refusal of U+0000 is 400 there too
     */
    @Deprecated
    @SuppressWarnings("InlineMeSuggester") // Error Prone's @InlineMe is not a dependency of the API
    public static RuntimeException failure(SQLException e) {
        return Sql.translate(e);
    }
}
