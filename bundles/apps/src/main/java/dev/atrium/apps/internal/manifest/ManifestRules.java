package dev.atrium.apps.internal.manifest;

import static dev.atrium.apps.internal.manifest.YamlTree.child;
import static dev.atrium.apps.internal.manifest.YamlTree.entries;
import static dev.atrium.apps.internal.manifest.YamlTree.index;
import static dev.atrium.apps.internal.manifest.YamlTree.items;
import static dev.atrium.apps.internal.manifest.YamlTree.line;
import static dev.atrium.apps.internal.manifest.YamlTree.text;
import static dev.atrium.apps.internal.manifest.YamlTree.value;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;

/**
 * The rules of a manifest a JSON Schema cannot say: references between keys (routes, bindings, MCP endpoints and file
 * handlers name services and resources that exist), unique names, workflow paths, OAuth URLs. Runs over the node tree
 * even when the schema refused parts of it, reading a part of the wrong shape as absent, so one pass reports all.
 */
final class ManifestRules {

    /** Where Actions reads workflow files from: a workflow elsewhere never runs, so its artifact never exists. */
    static final Set<String> WORKFLOW_DIRS = Set.of(".atrium/workflows/", ".github/workflows/");

    static final Set<String> OAUTH_ENV = Set.of("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET");
    /** A container's env names set from its own fields, and which. */
    static final Map<String, String> CONTAINER_ENV = Map.of("PORT", "port", "ATRIUM_HEALTH_PATH", "healthPath");

    private static final Set<String> LOOPBACK = Set.of("127.0.0.1", "[::1]", "localhost");
    private static final Pattern DATE = Pattern.compile("[0-9]{4}-[0-9]{2}-[0-9]{2}");

    private final Problems out;
    private final Map<String, NodeTuple> workers;
    private final Map<String, NodeTuple> containers;
    private final Map<String, NodeTuple> resources;
    private final Set<String> services = new LinkedHashSet<>();
    private final boolean autoEnv;
    /** Route name to where it was first used, and route path likewise: both are one namespace per app. */
    private final Map<String, String> routeNames = new HashMap<>();

    private final Map<String, String> routePaths = new HashMap<>();

    private ManifestRules(Node root, Problems out) {
        this.out = out;
        Node spec = value(root, "spec");
        this.workers = entries(value(spec, "workers"));
        this.containers = entries(value(spec, "containers"));
        this.resources = entries(value(spec, "resources"));
        services.addAll(workers.keySet());
        services.addAll(containers.keySet());
        Node oauth = value(spec, "oauth");
        // autoEnv defaults to true: an app that declares a client nearly always wants its credentials.
        this.autoEnv = oauth != null && !"false".equalsIgnoreCase(text(value(oauth, "autoEnv")));
    }

    static void check(Node root, Problems out) {
        new ManifestRules(root, out).run(value(root, "spec"));
    }

    private void run(Node spec) {
        for (Map.Entry<String, NodeTuple> w : workers.entrySet()) {
            service("spec.workers." + w.getKey(), w.getValue().getValueNode(), "build");
        }
        for (Map.Entry<String, NodeTuple> c : containers.entrySet()) {
            String path = "spec.containers." + c.getKey();
            if (workers.containsKey(c.getKey())) {
                out.add(
                        path,
                        line(c.getValue().getKeyNode()),
                        "'" + c.getKey() + "' is also a key of spec.workers:"
                                + " workers and containers share one set of service names");
            }
            service(path, c.getValue().getValueNode(), "image");
        }
        endpoints(value(spec, "mcp"), "spec.mcp", false);
        endpoints(value(spec, "fileHandlers"), "spec.fileHandlers", true);
        oauth(value(spec, "oauth"));
    }

    private void service(String path, Node node, String artifactKey) {
        String from = child(child(path, artifactKey), "fromWorkflow");
        fromWorkflow(value(value(node, artifactKey), "fromWorkflow"), from);
        Map<String, NodeTuple> env = entries(value(node, "env"));
        for (Map.Entry<String, NodeTuple> e : env.entrySet()) {
            oauthName(child(child(path, "env"), e.getKey()), e.getValue().getKeyNode(), e.getKey());
            if ("image".equals(artifactKey) && CONTAINER_ENV.containsKey(e.getKey())) {
                out.add(
                        child(child(path, "env"), e.getKey()),
                        line(e.getValue().getKeyNode()),
                        e.getKey() + " is set from " + CONTAINER_ENV.get(e.getKey()) + ": give it there");
            }
        }
        for (Map.Entry<String, NodeTuple> b : entries(value(node, "bindings")).entrySet()) {
            String at = child(child(path, "bindings"), b.getKey());
            oauthName(at, b.getValue().getKeyNode(), b.getKey());
            if (env.containsKey(b.getKey())) {
                out.add(
                        at,
                        line(b.getValue().getKeyNode()),
                        "'" + b.getKey() + "' is both an env variable and a" + " binding of this service");
            }
            Node target = b.getValue().getValueNode();
            String resource = text(target);
            if (resource != null && !resources.containsKey(resource)) {
                out.add(
                        at,
                        line(target),
                        "'" + resource + "' is not a key of spec.resources" + among("resources", resources.keySet()));
            }
        }
        int i = 0;
        for (Node route : items(value(node, "routes"))) {
            route(route, index(child(path, "routes"), i++));
        }
        Node date = value(node, "compatibilityDate");
        String d = text(date);
        if (d != null && DATE.matcher(d).matches()) {
            try {
                LocalDate.parse(d);
            } catch (DateTimeParseException e) {
                out.add(child(path, "compatibilityDate"), line(date), "'" + d + "' is not a date");
            }
        }
    }

    private void oauthName(String path, Node at, String name) {
        if (autoEnv && OAUTH_ENV.contains(name)) {
            out.add(
                    path,
                    line(at),
                    name + " is set from spec.oauth (autoEnv is true): remove it here, or set"
                            + " spec.oauth.autoEnv to false");
        }
    }

    private void route(Node route, String path) {
        unique(route, path, "name", routeNames, "route");
        unique(route, path, "path", routePaths, "route");
        target(route, path);
    }

    /** A name (or path) used twice in one namespace: the second is the problem, naming where the first is. */
    private void unique(Node item, String path, String key, Map<String, String> seen, String what) {
        Node n = value(item, key);
        String v = text(n);
        if (v == null) {
            return;
        }
        String first = seen.putIfAbsent(v, path);
        if (first != null) {
            out.add(child(path, key), line(n), "'" + v + "' is already the " + key + " of " + what + " " + first);
        }
    }

    private void target(Node item, String path) {
        Node n = value(item, "target");
        String t = text(n);
        if (t != null && !services.contains(t)) {
            out.add(
                    child(path, "target"),
                    line(n),
                    "'" + t + "' is not a key of spec.workers or spec.containers" + among("services", services));
        }
    }

    private void endpoints(Node list, String path, boolean fileHandlers) {
        Map<String, String> names = new HashMap<>();
        Map<String, String> paths = new HashMap<>();
        int i = 0;
        for (Node item : items(list)) {
            String at = index(path, i++);
            unique(item, at, "name", names, "entry");
            if (!fileHandlers) {
                unique(item, at, "path", paths, "entry");
            }
            target(item, at);
            if (fileHandlers
                    && items(value(item, "mimeTypes")).isEmpty()
                    && items(value(item, "extensions")).isEmpty()) {
                out.add(at, line(item), "needs mimeTypes or extensions: a handler without them opens no file");
            }
        }
    }

    private void fromWorkflow(Node node, String path) {
        Node p = value(node, "path");
        String file = text(p);
        String problem = file == null ? null : workflowPathProblem(file);
        if (problem != null) {
            out.add(child(path, "path"), line(p), problem);
        }
        Node a = value(node, "artifactPath");
        String inside = text(a);
        if (inside != null && relativePathProblem(inside) != null) {
            out.add(child(path, "artifactPath"), line(a), relativePathProblem(inside));
        }
    }

    /** Null when {@code file} names a workflow file Actions reads, else why not. */
    static String workflowPathProblem(String file) {
        String relative = relativePathProblem(file);
        if (relative != null) {
            return relative;
        }
        String dir = WORKFLOW_DIRS.stream().filter(file::startsWith).findFirst().orElse(null);
        if (dir == null || file.indexOf('/', dir.length()) >= 0) {
            return "must be a file directly in .atrium/workflows/ or .github/workflows/, not '" + file + "'";
        }
        if (!file.endsWith(".yml") && !file.endsWith(".yaml")) {
            return "must be a .yml or .yaml file, not '" + file + "'";
        }
        return null;
    }

    /** Null when {@code path} is a plain relative path: no leading '/', no '.', '..' or empty segment, no '\'. */
    static String relativePathProblem(String path) {
        if (path.startsWith("/")) {
            return "must be relative to the repository's root, without a leading '/'";
        }
        if (path.indexOf('\\') >= 0) {
            return "must use '/' between directories, not '\\'";
        }
        for (String segment : path.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                return "must not have '..', '.' or empty segments: '" + path + "'";
            }
        }
        return null;
    }

    private void oauth(Node oauth) {
        Set<String> seen = new HashSet<>();
        int i = 0;
        for (Node u : items(value(oauth, "redirectUris"))) {
            String path = index("spec.oauth.redirectUris", i++);
            String url = text(u);
            if (url == null) {
                continue;
            }
            String problem = urlProblem(url, true);
            if (problem != null) {
                out.add(path, line(u), problem);
            } else if (!seen.add(url)) {
                out.add(path, line(u), "'" + url + "' is listed twice");
            }
        }
        for (Map.Entry<String, NodeTuple> m : entries(value(oauth, "metadata")).entrySet()) {
            Node u = m.getValue().getValueNode();
            String problem = text(u) == null ? null : urlProblem(text(u), false);
            if (problem != null) {
                out.add("spec.oauth.metadata." + m.getKey(), line(u), problem);
            }
        }
    }

    /**
     * Null when {@code url} is an absolute https URL, or an http one on a loopback host (any port: for local
     * development, as OAuth 2.0 for native apps, RFC 8252, has it). A redirect URI has no fragment (RFC 6749 3.1.2).
     */
    static String urlProblem(String url, boolean redirect) {
        URI u;
        try {
            u = new URI(url);
        } catch (URISyntaxException e) {
            return "is not a URL: " + e.getReason();
        }
        if (!u.isAbsolute() || u.getHost() == null || u.getHost().isEmpty()) {
            return "must be an absolute URL with a host, not '" + url + "'";
        }
        if (u.getRawUserInfo() != null) {
            return "must not carry a user name or password";
        }
        if (redirect && u.getRawFragment() != null) {
            return "must not have a fragment ('#...'): a redirect URI never does";
        }
        String scheme = u.getScheme().toLowerCase(Locale.ROOT);
        if (scheme.equals("https")) {
            return null;
        }
        if (scheme.equals("http")) {
            return LOOPBACK.contains(u.getHost().toLowerCase(Locale.ROOT))
                    ? null
                    : "must use https; http is allowed only for a loopback host (127.0.0.1, [::1], localhost)";
        }
        return "must be an https URL, not '" + scheme + ":'";
    }

    private static String among(String what, Set<String> keys) {
        return keys.isEmpty() ? " (there are no " + what + ")" : " (" + what + ": " + String.join(", ", keys) + ")";
    }
}
