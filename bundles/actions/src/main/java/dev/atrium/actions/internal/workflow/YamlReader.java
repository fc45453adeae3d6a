package dev.atrium.actions.internal.workflow;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Typed reads of SnakeYAML nodes, each refusing with the file, the line and the full key path. Scalars are read as
 * their text, as GitHub's YAML 1.2 reads them: {@code on} and {@code yes} are strings, not booleans.
 */
final class YamlReader {

    static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_-]*");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern INTEGER = Pattern.compile("[0-9]+");

    /** A key of a mapping with its node (for the line of a refusal) and its value. */
    record Entry(String key, Node keyNode, Node value) {}

    private final String file;

    YamlReader(String file) {
        this.file = file;
    }

    static int line(Node n) {
        return n.getStartMark() == null ? 0 : n.getStartMark().getLine() + 1;
    }

    WorkflowException error(Node at, String problem) {
        if (at == null || at.getStartMark() == null) {
            return new WorkflowException(file, 0, 0, problem);
        }
        return new WorkflowException(file, line(at), at.getStartMark().getColumn() + 1, problem);
    }

    /**
     * The entries of a mapping, in file order. A duplicate key, a key that is not a plain name, or a key outside
     * {@code supported} is refused: {@code unsupported} holds GitHub keys Atrium does not run, with why.
     */
    Map<String, Entry> entries(Node node, String path, Set<String> supported, Map<String, String> unsupported)
            throws WorkflowException {
        MappingNode m = mapping(node, path);
        Map<String, Entry> out = new LinkedHashMap<>();
        for (NodeTuple t : m.getValue()) {
            Node k = t.getKeyNode();
            if (!(k instanceof ScalarNode s) || isNull(k)) {
                throw error(k, "a key of '" + path + "' must be a plain name");
            }
            String key = s.getValue();
            String full = path.isEmpty() ? key : path + "." + key;
            if (out.containsKey(key)) {
                throw error(k, "duplicate key '" + full + "'");
            }
            if (supported != null && !supported.contains(key)) {
                String why = unsupported.get(key);
                if (why != null) {
                    throw error(k, "unsupported key '" + full + "'" + (why.isEmpty() ? "" : ": " + why));
                }
                throw error(k, "unknown key '" + full + "'");
            }
            out.put(key, new Entry(key, k, t.getValueNode()));
        }
        return out;
    }

    MappingNode mapping(Node node, String path) throws WorkflowException {
        if (node instanceof MappingNode m) {
            return m;
        }
        throw error(node, "'" + path + "' must be a mapping");
    }

    SequenceNode sequence(Node node, String path) throws WorkflowException {
        if (node instanceof SequenceNode s) {
            return s;
        }
        throw error(node, "'" + path + "' must be a list");
    }

    static boolean isNull(Node n) {
        return n instanceof ScalarNode s
                && Tag.NULL.equals(s.getTag())
                && s.getScalarStyle() == DumperOptions.ScalarStyle.PLAIN;
    }

    /** A scalar's text; its {@code ${{ }}} expressions must parse. */
    String string(Node node, String path) throws WorkflowException {
        if (!(node instanceof ScalarNode s) || isNull(node)) {
            throw error(node, "'" + path + "' must be a string");
        }
        expressions(node, path, s.getValue());
        return s.getValue();
    }

    /** A scalar's text, a null one empty, with no {@code ${{ }}} (where GitHub does not evaluate them either). */
    String literal(Node node, String path) throws WorkflowException {
        String text = isNull(node) ? "" : string(node, path);
        if (text.contains("${{")) {
            throw error(node, "'" + path + "' cannot hold an expression");
        }
        return text;
    }

    /** Checks the {@code ${{ }}} of a text parse; the line is the node's plus the lines before the problem. */
    void expressions(Node node, String path, String text) throws WorkflowException {
        if (!text.contains("${{")) {
            return;
        }
        try {
            Expressions.validate(text);
        } catch (ExpressionException e) {
            throw expressionError(node, path, text, e);
        }
    }

    WorkflowException expressionError(Node node, String path, String text, ExpressionException e) {
        int pos = Math.min(Math.max(e.position(), 0), text.length());
        int lines = (int) text.substring(0, pos).chars().filter(c -> c == '\n').count();
        boolean block = node instanceof ScalarNode s
                && (s.getScalarStyle() == DumperOptions.ScalarStyle.LITERAL
                        || s.getScalarStyle() == DumperOptions.ScalarStyle.FOLDED);
        int line = line(node) + lines + (block ? 1 : 0);
        return new WorkflowException(file, line, 0, "invalid expression in '" + path + "': " + e.getMessage());
    }

    boolean bool(Node node, String path) throws WorkflowException {
        String text = node instanceof ScalarNode s && !isNull(node) ? s.getValue() : null;
        if (text != null && text.contains("${{")) {
            throw error(node, "'" + path + "' must be true or false; expressions are not supported here");
        }
        if ("true".equalsIgnoreCase(text)) {
            return true;
        }
        if ("false".equalsIgnoreCase(text)) {
            return false;
        }
        throw error(node, "'" + path + "' must be true or false");
    }

    int integer(Node node, String path, int min, int max) throws WorkflowException {
        String text = node instanceof ScalarNode s && !isNull(node) ? s.getValue() : "";
        if (text.contains("${{")) {
            throw error(node, "'" + path + "' must be a number; expressions are not supported here");
        }
        if (!INTEGER.matcher(text).matches() || text.length() > 9) {
            throw error(node, "'" + path + "' must be a whole number");
        }
        int v = Integer.parseInt(text);
        if (v < min || v > max) {
            throw error(node, "'" + path + "' must be between " + min + " and " + max);
        }
        return v;
    }

    /** A number of minutes, fractions allowed (GitHub takes {@code timeout-minutes: 0.5}), in [min, max]. */
    double minutes(Node node, String path, double min, double max) throws WorkflowException {
        String text = node instanceof ScalarNode s && !isNull(node) ? s.getValue() : "";
        if (text.contains("${{")) {
            throw error(node, "'" + path + "' must be a number; expressions are not supported here");
        }
        double v;
        try {
            v = text.length() > 12 ? Double.NaN : Double.parseDouble(text);
        } catch (NumberFormatException e) {
            v = Double.NaN;
        }
        if (Double.isNaN(v) || v < min || v > max) {
            throw error(
                    node,
                    "'" + path + "' must be a number of minutes between " + Values.render(min) + " and "
                            + Values.render(max));
        }
        return v;
    }

    /** A string or a list of strings. */
    List<String> strings(Node node, String path) throws WorkflowException {
        if (node instanceof SequenceNode seq) {
            List<String> out = new ArrayList<>();
            int i = 0;
            for (Node item : seq.getValue()) {
                out.add(string(item, path + "[" + i++ + "]"));
            }
            return out;
        }
        return List.of(string(node, path));
    }

    /** {@code env}: names to values; values may hold expressions, null is empty. */
    Map<String, String> env(Node node, String path) throws WorkflowException {
        if (isNull(node)) {
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Entry e : entries(node, path, null, Map.of()).values()) {
            if (!ENV_NAME.matcher(e.key()).matches()) {
                throw error(e.keyNode(), "'" + path + "." + e.key() + "' is not a valid variable name");
            }
            out.put(e.key(), isNull(e.value()) ? "" : string(e.value(), path + "." + e.key()));
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * A matrix value as a JSON-like Java value: YAML 1.2 core types (true/false, integers, floats, null), strings,
     * lists and maps. Expressions are refused: a matrix is expanded before anything runs.
     */
    Object value(Node node, String path) throws WorkflowException {
        if (node instanceof SequenceNode seq) {
            List<Object> out = new ArrayList<>();
            int i = 0;
            for (Node item : seq.getValue()) {
                out.add(value(item, path + "[" + i++ + "]"));
            }
            return Collections.unmodifiableList(out);
        }
        if (node instanceof MappingNode) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (Entry e : entries(node, path, null, Map.of()).values()) {
                out.put(e.key(), value(e.value(), path + "." + e.key()));
            }
            return Collections.unmodifiableMap(out);
        }
        ScalarNode s = (ScalarNode) node;
        String text = s.getValue();
        if (text.contains("${{")) {
            throw error(node, "'" + path + "': expressions in a matrix are not supported");
        }
        if (s.getScalarStyle() != DumperOptions.ScalarStyle.PLAIN) {
            return text;
        }
        if (isNull(node)) {
            return null;
        }
        if (text.equals("true") || text.equals("false")) {
            return Boolean.valueOf(text);
        }
        if (text.matches("[-+]?[0-9]{1,18}")) {
            return Long.parseLong(text);
        }
        if (text.matches("[-+]?([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?")) {
            return Double.parseDouble(text);
        }
        return text;
    }
}
