package dev.atrium.apps.internal.manifest;

import static dev.atrium.apps.internal.manifest.YamlTree.child;
import static dev.atrium.apps.internal.manifest.YamlTree.index;
import static dev.atrium.apps.internal.manifest.YamlTree.line;
import static dev.atrium.apps.internal.manifest.YamlTree.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Checks a YAML node tree against the manifest's JSON Schema (draft 2020-12), for exactly the keywords that schema
 * uses; a schema with any other keyword is refused when loaded, so the published schema cannot say more than what is
 * checked. Types are read the way a YAML 1.2 reader types plain scalars: {@code port: "8080"} is a string, not an
 * integer, while a string field takes any scalar's text ({@code version: 1.0} is the string "1.0"). Immutable once
 * built, so one instance serves every thread.
 */
final class SchemaValidator {

    private static final Set<String> KEYWORDS = Set.of(
            "$schema",
            "$id",
            "$defs",
            "title",
            "description",
            "default", // annotations
            "type",
            "properties",
            "required",
            "additionalProperties",
            "propertyNames",
            "enum",
            "const",
            "pattern",
            "minLength",
            "maxLength",
            "minimum",
            "maximum",
            "items",
            "minItems",
            "$ref");

    private static final Pattern INTEGER = Pattern.compile("[-+]?[0-9]+");
    private static final Pattern BOOLEAN = Pattern.compile("true|True|TRUE|false|False|FALSE");

    /** What a pattern of the schema means, in words, for messages; a pattern not here is quoted as is. */
    static final Map<String, String> PATTERN_WORDS = Map.ofEntries(
            Map.entry(
                    "^[a-z][a-z0-9-]{0,39}$", "lower-case letters, digits and '-', starting with a letter, at most 40"),
            Map.entry(
                    "^[a-z][a-z0-9-]{0,29}$", "lower-case letters, digits and '-', starting with a letter, at most 30"),
            Map.entry(
                    "^[a-z][a-z0-9-]{0,31}$", "lower-case letters, digits and '-', starting with a letter, at most 32"),
            Map.entry(
                    "^[A-Z_][A-Z0-9_]{0,127}$",
                    "upper-case letters, digits and '_', not starting with a digit, at" + " most 128"),
            Map.entry("^[A-Z_][A-Z0-9_]*$", "upper-case letters, digits and '_', not starting with a digit"),
            Map.entry("^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$", "a URL path starting with '/'"),
            Map.entry("^[A-Za-z][A-Za-z0-9+.-]*://", "an absolute URL such as https://example.com/callback"),
            Map.entry("^\\S+$", "a name without spaces"),
            Map.entry(
                    "^[A-Za-z_][A-Za-z0-9_-]*$",
                    "a job id: letters, digits, '_' and '-', starting with a letter or" + " '_'"),
            Map.entry("^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "a date written YYYY-MM-DD"),
            Map.entry("^[a-z][a-z0-9.-]{0,62}$", "lower-case letters, digits, '.' and '-', starting with a letter"),
            Map.entry(
                    "^[a-z0-9][a-z0-9!#$&^_.+-]*/([a-z0-9][a-z0-9!#$&^_.+-]*|\\*)$",
                    "a lower-case media type" + " such as text/markdown or image/*"),
            Map.entry("^\\.[A-Za-z0-9][A-Za-z0-9._+-]{0,31}$", "a file extension with its dot, such as .md"));

    private final JsonNode root;
    private final Map<String, Pattern> patterns = new HashMap<>();

    SchemaValidator(String json) {
        try {
            this.root = new ObjectMapper().readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException("the manifest schema is not JSON", e);
        }
        prepare(root, "#");
    }

    /** Refuses a keyword this class does not check and compiles every pattern once. */
    private void prepare(JsonNode schema, String at) {
        if (!schema.isObject()) {
            throw new IllegalStateException("schema at " + at + " is not an object");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = schema.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String k = e.getKey();
            JsonNode v = e.getValue();
            if (!KEYWORDS.contains(k)) {
                throw new IllegalStateException("schema at " + at + " uses '" + k + "', which is not checked");
            }
            switch (k) {
                case "$defs", "properties" ->
                    v.fields().forEachRemaining(f -> prepare(f.getValue(), at + "/" + k + "/" + f.getKey()));
                case "items", "propertyNames" -> prepare(v, at + "/" + k);
                case "additionalProperties" -> {
                    if (v.isObject()) {
                        prepare(v, at + "/" + k);
                    } else if (!v.isBoolean() || v.asBoolean()) {
                        throw new IllegalStateException(
                                "schema at " + at + ": additionalProperties is a schema or" + " false");
                    }
                }
                case "pattern" -> patterns.put(v.asText(), ecma(v.asText()));
                case "$ref" -> resolve(v.asText());
                case "type" -> {
                    if (!Set.of("object", "array", "string", "integer", "boolean")
                            .contains(v.asText())) {
                        throw new IllegalStateException(
                                "schema at " + at + ": type '" + v.asText() + "' is not" + " checked");
                    }
                }
                default -> {}
            }
        }
    }

    /**
     * A schema pattern as a Java one used with {@code find()}, as JSON Schema does: its final {@code $} becomes
     * {@code \z}, because Java's {@code $} also matches before a trailing newline and ECMA's does not.
     */
    private static Pattern ecma(String pattern) {
        boolean anchored = pattern.endsWith("$") && !pattern.endsWith("\\$");
        return Pattern.compile(anchored ? pattern.substring(0, pattern.length() - 1) + "\\z" : pattern);
    }

    private JsonNode resolve(String ref) {
        if (!ref.startsWith("#/")) {
            throw new IllegalStateException("only local $ref is supported: " + ref);
        }
        JsonNode target = root.at(ref.substring(1));
        if (target.isMissingNode()) {
            throw new IllegalStateException("$ref to nothing: " + ref);
        }
        return target;
    }

    JsonNode document() {
        return root;
    }

    void validate(Node node, Problems out) {
        validate(node, root, "", line(node), out);
    }

    /**
     * @param anchor the line of the key holding {@code node} (for a missing key of a mapping, or an empty value)
     */
    private void validate(Node node, JsonNode schema, String path, int anchor, Problems out) {
        JsonNode ref = schema.get("$ref");
        if (ref != null) {
            validate(node, resolve(ref.asText()), path, anchor, out);
        }
        int at = YamlTree.isNull(node) ? anchor : line(node);
        JsonNode type = schema.get("type");
        if (type != null && !hasType(node, type.asText())) {
            out.add(path, at, "must be " + typeWords(type.asText()) + ", not " + found(node));
            return;
        }
        if (schema.has("const") && !schema.get("const").asText().equals(text(node))) {
            out.add(path, at, "must be '" + schema.get("const").asText() + "', not " + found(node));
            return;
        }
        if (schema.has("enum") && !enumHas(schema.get("enum"), text(node))) {
            List<String> values = new ArrayList<>();
            schema.get("enum").forEach(v -> values.add(v.asText()));
            out.add(path, at, "must be one of " + String.join(", ", values) + "; not " + found(node));
            return;
        }
        if (node instanceof ScalarNode && text(node) != null) {
            scalar(text(node), schema, type == null ? null : type.asText(), path, at, out);
        } else if (node instanceof MappingNode m) {
            mapping(m, schema, path, anchor, out);
        } else if (node instanceof SequenceNode s) {
            sequence(s, schema, path, at, out);
        }
    }

    private static boolean enumHas(JsonNode values, String text) {
        for (JsonNode v : values) {
            if (v.asText().equals(text)) {
                return true;
            }
        }
        return false;
    }

    private void scalar(String text, JsonNode schema, String type, String path, int at, Problems out) {
        int length = text.codePointCount(0, text.length());
        if (schema.has("minLength") && length < schema.get("minLength").asInt()) {
            out.add(
                    path,
                    at,
                    length == 0
                            ? "must not be empty"
                            : "must be at least " + schema.get("minLength").asInt() + " characters");
        }
        if (schema.has("maxLength") && length > schema.get("maxLength").asInt()) {
            out.add(path, at, "must be at most " + schema.get("maxLength").asInt() + " characters, not " + length);
        }
        if (schema.has("pattern")) {
            String p = schema.get("pattern").asText();
            if (!patterns.get(p).matcher(text).find()) {
                out.add(
                        path,
                        at,
                        "must be " + PATTERN_WORDS.getOrDefault(p, "text matching " + p) + "; not " + quote(text));
            }
        }
        if ("integer".equals(type)) {
            // Beyond 18 digits a number is out of any range the schema sets; not parsed, which would cost.
            long v = text.length() > 18
                    ? (text.startsWith("-") ? Long.MIN_VALUE : Long.MAX_VALUE)
                    : Long.parseLong(text);
            boolean below = schema.has("minimum") && v < schema.get("minimum").asLong();
            boolean above = schema.has("maximum") && v > schema.get("maximum").asLong();
            if (below || above) {
                out.add(
                        path,
                        at,
                        "must be between " + schema.path("minimum").asText("any") + " and "
                                + schema.path("maximum").asText("any") + ", not " + quote(text));
            }
        }
    }

    private void mapping(MappingNode m, JsonNode schema, String path, int anchor, Problems out) {
        JsonNode props = schema.path("properties");
        JsonNode additional = schema.get("additionalProperties");
        JsonNode names = schema.get("propertyNames");
        Map<String, NodeTuple> entries = YamlTree.entries(m);
        for (Map.Entry<String, NodeTuple> e : entries.entrySet()) {
            String key = e.getKey();
            Node keyNode = e.getValue().getKeyNode();
            String full = child(path, key);
            int keyLine = line(keyNode);
            if (names != null) {
                int before = out.count();
                validate(keyNode, names, full, keyLine, out);
                if (out.count() != before) {
                    continue;
                }
            }
            if (props.has(key)) {
                validate(e.getValue().getValueNode(), props.get(key), full, keyLine, out);
            } else if (additional != null && additional.isObject()) {
                validate(e.getValue().getValueNode(), additional, full, keyLine, out);
            } else if (additional != null) {
                List<String> allowed = new ArrayList<>();
                props.fieldNames().forEachRemaining(allowed::add);
                out.add(full, keyLine, "unknown key '" + key + "'; allowed here: " + String.join(", ", allowed));
            }
        }
        for (JsonNode r : schema.path("required")) {
            if (!entries.containsKey(r.asText())) {
                out.add(child(path, r.asText()), anchor, "is required");
            }
        }
    }

    private void sequence(SequenceNode s, JsonNode schema, String path, int at, Problems out) {
        List<Node> items = s.getValue();
        if (schema.has("minItems") && items.size() < schema.get("minItems").asInt()) {
            out.add(
                    path,
                    at,
                    "needs at least " + schema.get("minItems").asInt() + " item"
                            + (schema.get("minItems").asInt() == 1 ? "" : "s"));
        }
        JsonNode itemSchema = schema.get("items");
        if (itemSchema != null) {
            for (int i = 0; i < items.size(); i++) {
                validate(items.get(i), itemSchema, index(path, i), line(items.get(i)), out);
            }
        }
    }

    private static boolean hasType(Node node, String type) {
        return switch (type) {
            case "object" -> node instanceof MappingNode;
            case "array" -> node instanceof SequenceNode;
            case "string" -> text(node) != null;
            case "integer" ->
                YamlTree.plain(node)
                        && INTEGER.matcher(text(node) == null ? "" : text(node)).matches();
            case "boolean" ->
                YamlTree.plain(node)
                        && BOOLEAN.matcher(text(node) == null ? "" : text(node)).matches();
            default -> throw new IllegalStateException("type '" + type + "' is not checked");
        };
    }

    private static String typeWords(String type) {
        return switch (type) {
            case "object" -> "a mapping";
            case "array" -> "a list";
            case "string" -> "a string";
            case "integer" -> "a whole number";
            case "boolean" -> "true or false";
            default -> type;
        };
    }

    /** What a node is, for a message: a value quoted and cut, or its kind. */
    static String found(Node node) {
        if (node instanceof MappingNode) {
            return "a mapping";
        }
        if (node instanceof SequenceNode) {
            return "a list";
        }
        String t = text(node);
        return t == null ? "empty" : quote(t);
    }

    static String quote(String text) {
        String cut = text.length() > 60 ? text.substring(0, 57) + "..." : text;
        return "'" + cut.replace("\n", "\\n") + "'";
    }
}
