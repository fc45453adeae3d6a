package dev.atrium.apps.internal.manifest;

import static dev.atrium.apps.internal.manifest.YamlTree.entries;
import static dev.atrium.apps.internal.manifest.YamlTree.items;
import static dev.atrium.apps.internal.manifest.YamlTree.text;
import static dev.atrium.apps.internal.manifest.YamlTree.value;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.SequenceNode;

/** Builds the {@link Manifest} records from a node tree the schema and the rules found nothing wrong in. */
final class ManifestReader {

    private static final Pattern LONG = Pattern.compile("[-+]?[0-9]{1,18}");
    private static final Pattern FLOAT = Pattern.compile("[-+]?([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?");

    private ManifestReader() {}

    static Manifest read(Node root) {
        Node metadata = value(root, "metadata");
        Node spec = value(root, "spec");
        Map<String, Manifest.Resource> resources = new LinkedHashMap<>();
        entries(value(spec, "resources")).forEach((k, t) -> resources.put(k, resource(t.getValueNode())));
        Map<String, Manifest.Worker> workers = new LinkedHashMap<>();
        entries(value(spec, "workers")).forEach((k, t) -> workers.put(k, worker(t.getValueNode())));
        Map<String, Manifest.Container> containers = new LinkedHashMap<>();
        entries(value(spec, "containers")).forEach((k, t) -> containers.put(k, container(t.getValueNode())));
        List<Manifest.Mcp> mcp = new ArrayList<>();
        for (Node m : items(value(spec, "mcp"))) {
            mcp.add(new Manifest.Mcp(string(m, "name"), string(m, "target"), string(m, "path")));
        }
        List<Manifest.FileHandler> fileHandlers = new ArrayList<>();
        for (Node f : items(value(spec, "fileHandlers"))) {
            fileHandlers.add(new Manifest.FileHandler(
                    string(f, "name"),
                    string(f, "target"),
                    string(f, "path"),
                    strings(value(f, "mimeTypes")),
                    strings(value(f, "extensions"))));
        }
        return new Manifest(
                string(root, "apiVersion"),
                string(metadata, "name"),
                string(metadata, "displayName"),
                string(metadata, "description"),
                string(metadata, "icon"),
                string(spec, "version"),
                oauth(value(spec, "oauth")),
                resources,
                workers,
                containers,
                mcp,
                fileHandlers);
    }

    private static String string(Node mapping, String key) {
        return text(value(mapping, key));
    }

    private static List<String> strings(Node list) {
        List<String> out = new ArrayList<>();
        for (Node n : items(list)) {
            out.add(text(n));
        }
        return out;
    }

    private static Map<String, String> stringMap(Node mapping) {
        Map<String, String> out = new LinkedHashMap<>();
        entries(mapping).forEach((k, t) -> out.put(k, text(t.getValueNode())));
        return out;
    }

    private static Manifest.OAuth oauth(Node oauth) {
        if (oauth == null) {
            return null;
        }
        Node metadata = value(oauth, "metadata");
        String autoEnv = string(oauth, "autoEnv");
        return new Manifest.OAuth(
                string(oauth, "clientName"),
                strings(value(oauth, "redirectUris")),
                strings(value(oauth, "scopes")),
                autoEnv == null || Boolean.parseBoolean(autoEnv),
                string(metadata, "logoUri"),
                string(metadata, "tosUri"),
                string(metadata, "policyUri"));
    }

    @SuppressWarnings("unchecked") // a mapping's freeForm() is always a Map<String, Object>
    private static Manifest.Resource resource(Node node) {
        Node config = value(node, "config");
        return new Manifest.Resource(
                string(node, "type"),
                string(node, "backend"),
                config == null ? null : (Map<String, Object>) freeForm(config));
    }

    private static Manifest.FromWorkflow fromWorkflow(Node holder) {
        Node f = value(holder, "fromWorkflow");
        return new Manifest.FromWorkflow(
                string(f, "path"), string(f, "job"), string(f, "artifact"), string(f, "artifactPath"));
    }

    private static List<Manifest.Route> routes(Node list) {
        List<Manifest.Route> out = new ArrayList<>();
        for (Node r : items(list)) {
            out.add(new Manifest.Route(string(r, "name"), string(r, "target"), string(r, "path")));
        }
        return out;
    }

    private static Manifest.Worker worker(Node node) {
        return new Manifest.Worker(
                fromWorkflow(value(node, "build")),
                stringMap(value(node, "env")),
                stringMap(value(node, "bindings")),
                routes(value(node, "routes")),
                string(node, "compatibilityDate"));
    }

    private static Manifest.Container container(Node node) {
        String memory = string(node, "memoryMb");
        return new Manifest.Container(
                fromWorkflow(value(node, "image")),
                Integer.parseInt(string(node, "port").replace("+", "")),
                string(node, "healthPath"),
                stringMap(value(node, "env")),
                stringMap(value(node, "bindings")),
                routes(value(node, "routes")),
                memory == null ? null : Integer.valueOf(memory.replace("+", "")));
    }

    /**
     * A free-form value ({@code resources.<key>.config}) as JSON-like Java: YAML 1.2 core types for plain scalars
     * (true/false, integers, decimals, null), strings for everything else and for quoted scalars, lists and maps in
     * file order. {@code yes} and {@code on} stay strings, as in YAML 1.2.
     */
    static Object freeForm(Node node) {
        if (node instanceof SequenceNode s) {
            List<Object> out = new ArrayList<>();
            for (Node item : s.getValue()) {
                out.add(freeForm(item));
            }
            return Collections.unmodifiableList(out);
        }
        if (node instanceof MappingNode m) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (NodeTuple t : m.getValue()) {
                out.put(text(t.getKeyNode()), freeForm(t.getValueNode()));
            }
            return Collections.unmodifiableMap(out);
        }
        String text = text(node);
        if (text == null || !YamlTree.plain(node)) {
            return text;
        }
        if (text.equals("true") || text.equals("false")) {
            return Boolean.valueOf(text);
        }
        if (LONG.matcher(text).matches()) {
            return Long.parseLong(text);
        }
        if (FLOAT.matcher(text).matches()) {
            return Double.parseDouble(text);
        }
        return text;
    }
}
