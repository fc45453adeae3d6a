package dev.atrium.browser.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One {@code POST /api/browser-sessions/:id/action} body, checked: what to do ({@code kind}), on which element (a CSS
 * {@code selector}, or an ARIA {@code role} with an optional accessible {@code name}), with what ({@code text},
 * {@code value}, {@code key}), and how long to wait for the element ({@code timeout_ms}).
 */
record BrowserAction(String kind, Target target, String text, String value, Key key, int timeoutMs) {

    static final Set<String> KINDS = Set.of("click", "type", "press", "select", "scroll", "wait_for");
    static final Set<String> FIELDS = Set.of("kind", "selector", "role", "name", "text", "value", "key", "timeout_ms");
    static final int DEFAULT_TIMEOUT_MS = 5_000;
    static final int MAX_TIMEOUT_MS = 60_000;
    static final int MAX_SELECTOR = 1_000;
    static final int MAX_NAME = 500;
    static final int MAX_TEXT = 100_000;
    private static final Pattern ROLE = Pattern.compile("[a-z]{1,40}");

    /** The element an action or an extraction is about: a CSS selector, or a role and perhaps a name. */
    record Target(String selector, String role, String name) {
        /** What the page's locator script takes. */
        Map<String, Object> toJson() {
            Map<String, Object> spec = new LinkedHashMap<>();
            if (selector != null) {
                spec.put("selector", selector);
            } else {
                spec.put("role", role);
                spec.put("name", name);
            }
            return spec;
        }

        String describe() {
            return selector != null
                    ? "selector " + selector
                    : "role " + role + (name == null ? "" : " named \"" + name + "\"");
        }
    }

    /** A key as {@code Input.dispatchKeyEvent} takes it. */
    record Key(String key, String code, int keyCode, String text) {
        private static final Map<String, Key> NAMED = Map.ofEntries(
                Map.entry("Enter", new Key("Enter", "Enter", 13, "\r")),
                Map.entry("Tab", new Key("Tab", "Tab", 9, null)),
                Map.entry("Escape", new Key("Escape", "Escape", 27, null)),
                Map.entry("Backspace", new Key("Backspace", "Backspace", 8, null)),
                Map.entry("Delete", new Key("Delete", "Delete", 46, null)),
                Map.entry("Space", new Key(" ", "Space", 32, " ")),
                Map.entry("ArrowUp", new Key("ArrowUp", "ArrowUp", 38, null)),
                Map.entry("ArrowDown", new Key("ArrowDown", "ArrowDown", 40, null)),
                Map.entry("ArrowLeft", new Key("ArrowLeft", "ArrowLeft", 37, null)),
                Map.entry("ArrowRight", new Key("ArrowRight", "ArrowRight", 39, null)),
                Map.entry("Home", new Key("Home", "Home", 36, null)),
                Map.entry("End", new Key("End", "End", 35, null)),
                Map.entry("PageUp", new Key("PageUp", "PageUp", 33, null)),
                Map.entry("PageDown", new Key("PageDown", "PageDown", 34, null)));

        /** A named key ({@code Enter}, {@code ArrowDown}, …) or one printable character. */
        static Key of(String name) {
            Key named = NAMED.get(name);
            if (named != null) {
                return named;
            }
            if (name.codePointCount(0, name.length()) == 1 && !Character.isISOControl(name.codePointAt(0))) {
                int c = Character.toUpperCase(name.codePointAt(0));
                boolean letterOrDigit = c < 128 && Character.isLetterOrDigit(c);
                String code = !letterOrDigit ? "" : Character.isDigit(c) ? "Digit" + (char) c : "Key" + (char) c;
                return new Key(name, code, letterOrDigit ? c : 0, name);
            }
            throw ApiException.badRequest("key must be one character or one of "
                    + String.join(", ", new java.util.TreeSet<>(NAMED.keySet())));
        }
    }

    /** Reads and checks a body; every mistake is 400 naming the field. */
    static BrowserAction parse(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiException.badRequest("a JSON object body is required");
        }
        rejectUnknown(body, FIELDS);
        String kind = string(body, "kind", 40);
        if (kind == null) {
            throw ApiException.badRequest("kind is required: one of " + sorted(KINDS));
        }
        if (!KINDS.contains(kind)) {
            throw ApiException.badRequest("kind must be one of " + sorted(KINDS));
        }
        Target target = target(body);
        int timeout = timeoutMs(body);
        String text = string(body, "text", MAX_TEXT);
        String value = null;
        Key key = null;
        switch (kind) {
            case "click", "wait_for" -> requireTarget(kind, target);
            case "type" -> {
                requireTarget(kind, target);
                if (text == null) {
                    throw ApiException.badRequest("text is required for type");
                }
            }
            case "select" -> {
                requireTarget(kind, target);
                value = string(body, "value", MAX_TEXT);
                if (value == null) {
                    throw ApiException.badRequest("value is required for select: the option's value or label");
                }
            }
            case "press" -> {
                String k = string(body, "key", 40);
                if (k == null || k.isEmpty()) {
                    throw ApiException.badRequest("key is required for press");
                }
                key = Key.of(k);
            }
            case "scroll" -> {
                JsonNode v = body.get("value");
                if (v != null && !v.isNull()) {
                    if (!v.isIntegralNumber() || Math.abs(v.asLong()) > 1_000_000) {
                        throw ApiException.badRequest("value for scroll must be a whole number of pixels");
                    }
                    value = Long.toString(v.asLong());
                }
            }
            default -> throw new IllegalStateException(kind);
        }
        return new BrowserAction(kind, target, text, value, key, timeout);
    }

    /** The optional target of a body: {@code selector}, or {@code role} (with {@code name}); not both. */
    static Target target(JsonNode body) {
        String selector = string(body, "selector", MAX_SELECTOR);
        String role = string(body, "role", 40);
        String name = string(body, "name", MAX_NAME);
        if (selector != null && role != null) {
            throw ApiException.badRequest("give selector or role (with name), not both");
        }
        if (selector != null) {
            if (selector.isBlank()) {
                throw ApiException.badRequest("selector must not be empty");
            }
            if (name != null) {
                throw ApiException.badRequest("name goes with role, not with selector");
            }
            return new Target(selector, null, null);
        }
        if (role != null) {
            if (!ROLE.matcher(role).matches()) {
                throw ApiException.badRequest("role must be an ARIA role name such as button, link or textbox");
            }
            return new Target(null, role, name);
        }
        if (name != null) {
            throw ApiException.badRequest("name goes with role");
        }
        return null;
    }

    static int timeoutMs(JsonNode body) {
        JsonNode t = body.get("timeout_ms");
        if (t == null || t.isNull()) {
            return DEFAULT_TIMEOUT_MS;
        }
        if (!t.isIntegralNumber() || t.asLong() < 1 || t.asLong() > MAX_TIMEOUT_MS) {
            throw ApiException.badRequest("timeout_ms must be a whole number from 1 to " + MAX_TIMEOUT_MS);
        }
        return t.asInt();
    }

    private static void requireTarget(String kind, Target target) {
        if (target == null) {
            throw ApiException.badRequest(kind + " needs selector, or role (with name)");
        }
    }

    static String string(JsonNode body, String field, int max) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw ApiException.badRequest(field + " must be a string");
        }
        String s = v.textValue();
        if (s.indexOf('\0') >= 0) {
            throw ApiException.badRequest(field + " must not contain NUL");
        }
        if (s.length() > max) {
            throw ApiException.badRequest(field + " must be at most " + max + " characters");
        }
        return s;
    }

    static void rejectUnknown(JsonNode body, Set<String> known) {
        for (Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!known.contains(name)) {
                throw ApiException.badRequest("unknown field " + name + "; known: " + sorted(known));
            }
        }
    }

    static String sorted(Set<String> values) {
        return String.join(", ", new java.util.TreeSet<>(values));
    }
}
