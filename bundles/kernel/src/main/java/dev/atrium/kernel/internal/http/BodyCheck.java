package dev.atrium.kernel.internal.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * What the envelope checks in a text body (JSON, form or plain text) before any route reads it, so no capability
 * can forget it: strict UTF-8, no U+0000 (PostgreSQL text cannot hold it) and no lone surrogate (it cannot be
 * encoded back to UTF-8, and JDBC would store it as '?'), also when JSON writes them as {@code \u0000} or
 * {@code \ud800}. A body that is not well-formed JSON is left to the route, which says what is wrong with it.
 */
final class BodyCheck {

    private static final JsonFactory JSON = new JsonFactory();

    private BodyCheck() {}

    /** The kind of body the envelope reads and checks, by Content-Type. */
    enum Kind {
        JSON,
        FORM,
        TEXT,
        OTHER;

        static Kind of(String contentType) {
            if (contentType == null || contentType.isBlank()) {
                return TEXT;
            }
            String type = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
            if (type.equals("application/json") || type.endsWith("+json")) {
                return JSON;
            }
            if (type.equals("application/x-www-form-urlencoded")) {
                return FORM;
            }
            if (type.startsWith("text/")) {
                return TEXT;
            }
            return OTHER;
        }
    }

    /**
     * Why the Content-Type's charset is refused, or null. Only UTF-8 (and its subset US-ASCII) is read; anything
     * else, unknown names included, would be decoded wrongly or fail inside a route.
     */
    static String charsetProblem(String contentType) {
        if (contentType == null) {
            return null;
        }
        String[] parts = contentType.split(";");
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].trim();
            int eq = p.indexOf('=');
            if (eq < 0) {
                if (p.isEmpty()) {
                    continue;
                }
                return "the Content-Type parameter '" + p + "' has no value";
            }
            if (!p.substring(0, eq).trim().equalsIgnoreCase("charset")) {
                continue;
            }
            String charset = p.substring(eq + 1).trim();
            if (charset.length() >= 2 && charset.startsWith("\"") && charset.endsWith("\"")) {
                charset = charset.substring(1, charset.length() - 1);
            }
            String c = charset.toLowerCase(Locale.ROOT);
            if (!c.equals("utf-8") && !c.equals("utf8") && !c.equals("us-ascii")) {
                return "charset " + charset + " is not supported: send UTF-8";
            }
        }
        return null;
    }

    /** Why the body is refused, or null. */
    static String problem(byte[] body, Kind kind) {
        if (kind == Kind.FORM) {
            return formProblem(new String(body, StandardCharsets.ISO_8859_1), "the form body");
        }
        String text = UriCheck.utf8(body);
        if (text == null) {
            return "the body is not valid UTF-8";
        }
        String problem = textProblem(text, "the body");
        if (problem != null) {
            return problem;
        }
        if (kind == Kind.JSON || looksLikeJson(text)) {
            return jsonProblem(body);
        }
        return null;
    }

    private static boolean looksLikeJson(String text) {
        String t = text.stripLeading();
        return t.startsWith("{") || t.startsWith("[") || t.startsWith("\"");
    }

    /** Every string and field name of a JSON document; null also when it is not well-formed (the route says why). */
    static String jsonProblem(byte[] body) {
        try (JsonParser p = JSON.createParser(body)) {
            for (JsonToken t; (t = p.nextToken()) != null; ) {
                if (t == JsonToken.FIELD_NAME || t == JsonToken.VALUE_STRING) {
                    String problem = textProblem(
                            p.getText(),
                            t == JsonToken.FIELD_NAME
                                    ? "a field name"
                                    : p.currentName() == null ? "a string" : "field " + p.currentName());
                    if (problem != null) {
                        return problem;
                    }
                }
            }
        } catch (IOException | RuntimeException malformed) {
            return null;
        }
        return null;
    }

    /** {@code application/x-www-form-urlencoded} text: every name and value must decode to UTF-8 without NUL. */
    static String formProblem(String form, String what) {
        for (int i = 0; i < form.length(); i++) {
            char c = form.charAt(i);
            if (c > 0x7e || c < 0x20) {
                return what + " must be percent-encoded ASCII";
            }
            if (c == '%'
                    && (i + 2 >= form.length()
                            || UriCheck.hex(form.charAt(i + 1)) < 0
                            || UriCheck.hex(form.charAt(i + 2)) < 0)) {
                return what + " holds a malformed percent-escape";
            }
        }
        for (String pair : form.split("&")) {
            for (String part : pair.split("=", -1)) {
                String decoded = UriCheck.utf8(UriCheck.percentDecode(part.replace('+', ' ')));
                if (decoded == null) {
                    return what + " is not valid UTF-8 once decoded";
                }
                String problem = textProblem(decoded, what);
                if (problem != null) {
                    return problem;
                }
            }
        }
        return null;
    }

    /** U+0000 or a surrogate that is not half of a pair. */
    static String textProblem(String s, String where) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == 0) {
                return where + " must not contain NUL (U+0000) characters";
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                return where + " must not contain a lone surrogate (U+"
                        + Integer.toHexString(c).toUpperCase(Locale.ROOT) + ")";
            }
            if (Character.isLowSurrogate(c)) {
                return where + " must not contain a lone surrogate (U+"
                        + Integer.toHexString(c).toUpperCase(Locale.ROOT) + ")";
            }
        }
        return null;
    }
}
