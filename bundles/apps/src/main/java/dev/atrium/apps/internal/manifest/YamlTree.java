package dev.atrium.apps.internal.manifest;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Reads of a composed SnakeYAML node tree that never throw: a node of the wrong shape reads as absent, so the rules
 * can run over a manifest the schema already refused and still report what else is wrong. Scalars are their text as
 * written ({@code 1.0} stays {@code "1.0"}).
 */
final class YamlTree {

    /** Nodes visited, aliases counted each time they are used: bounds the work of every later walk. */
    static final int MAX_NODES = 20_000;

    static final int MAX_DEPTH = 40;

    /** The tags a plain YAML file resolves to; any other is an explicit tag, refused. */
    private static final Set<Tag> PLAIN_TAGS =
            Set.of(Tag.STR, Tag.INT, Tag.FLOAT, Tag.BOOL, Tag.NULL, Tag.MAP, Tag.SEQ, Tag.TIMESTAMP, Tag.MERGE);

    private YamlTree() {}

    static int line(Node n) {
        return n == null || n.getStartMark() == null ? 0 : n.getStartMark().getLine() + 1;
    }

    /** A plain {@code null}, {@code ~} or nothing; a quoted "null" is a string. */
    static boolean isNull(Node n) {
        return n instanceof ScalarNode s
                && Tag.NULL.equals(s.getTag())
                && s.getScalarStyle() == DumperOptions.ScalarStyle.PLAIN;
    }

    /** A scalar's text, or null for anything else (a mapping, a list, a null). */
    static String text(Node n) {
        return n instanceof ScalarNode s && !isNull(n) ? s.getValue() : null;
    }

    static boolean plain(Node n) {
        return n instanceof ScalarNode s && s.getScalarStyle() == DumperOptions.ScalarStyle.PLAIN;
    }

    static String child(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    static String index(String path, int i) {
        return path + "[" + i + "]";
    }

    /** A mapping's entries by key, in file order, the first of duplicate keys; empty for anything else. */
    static Map<String, NodeTuple> entries(Node n) {
        if (!(n instanceof MappingNode m)) {
            return Map.of();
        }
        Map<String, NodeTuple> out = new LinkedHashMap<>();
        for (NodeTuple t : m.getValue()) {
            String key = text(t.getKeyNode());
            if (key != null) {
                out.putIfAbsent(key, t);
            }
        }
        return Collections.unmodifiableMap(out);
    }

    /** The value of {@code key} in a mapping, or null. */
    static Node value(Node mapping, String key) {
        NodeTuple t = entries(mapping).get(key);
        return t == null ? null : t.getValueNode();
    }

    static List<Node> items(Node n) {
        return n instanceof SequenceNode s ? s.getValue() : List.of();
    }

    /**
     * The checks every node gets whatever its place: no explicit tags, keys that are plain and unique, no merge keys,
     * and the bounds on size and depth (an alias used many times, or one that contains itself, counts as what it
     * expands to). False when a bound is hit: nothing else should walk the tree then.
     */
    static boolean check(Node root, Problems out) {
        int[] visited = {0};
        return check(root, "", 0, visited, out);
    }

    private static boolean check(Node node, String path, int depth, int[] visited, Problems out) {
        if (++visited[0] > MAX_NODES) {
            out.add(
                    path,
                    line(node),
                    "the manifest expands to more than " + MAX_NODES
                            + " values (an alias counts each time it is used)");
            return false;
        }
        if (depth > MAX_DEPTH) {
            out.add(path, line(node), "nested deeper than " + MAX_DEPTH + " levels");
            return false;
        }
        if (!PLAIN_TAGS.contains(node.getTag())) {
            out.add(
                    path,
                    line(node),
                    "the tag '" + node.getTag().getValue() + "' is not supported: a manifest is plain" + " YAML");
        }
        if (node instanceof MappingNode m) {
            Set<String> seen = new java.util.HashSet<>();
            for (NodeTuple t : m.getValue()) {
                Node k = t.getKeyNode();
                String key = text(k);
                if (key == null) {
                    out.add(path, line(k), "a key must be a plain name, not a list, a mapping or null");
                    continue;
                }
                String full = child(path, key);
                if (Tag.MERGE.equals(k.getTag())) {
                    out.add(full, line(k), "merge keys ('<<') are not supported: write the keys out");
                    continue;
                }
                if (!seen.add(key)) {
                    out.add(full, line(k), "duplicate key '" + key + "'");
                    continue;
                }
                if (!check(t.getValueNode(), full, depth + 1, visited, out)) {
                    return false;
                }
            }
        } else if (node instanceof SequenceNode s) {
            int i = 0;
            for (Node item : s.getValue()) {
                if (!check(item, index(path, i++), depth + 1, visited, out)) {
                    return false;
                }
            }
        }
        return true;
    }
}
