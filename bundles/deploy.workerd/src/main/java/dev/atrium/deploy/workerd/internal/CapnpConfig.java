package dev.atrium.deploy.workerd.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.deploy.api.Binding;
import dev.atrium.deploy.api.Deployment;
import dev.atrium.deploy.api.DeploymentException;
import dev.atrium.deploy.api.DeploymentException.Kind;
import dev.atrium.kernel.api.JsonMappers;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Writes one workerd configuration (Cap'n Proto text) for a set of workers, with their modules as files beside it
 * ({@code embed}). Per worker {@code w<i>}: its modules behind two wrappers of the provider's (a prelude that tags
 * {@code console.*} lines with the worker's index and a per-process secret, and a main module that re-exports the
 * code's and logs an exception thrown by its {@code fetch}), its env as {@code text} bindings, its resource bindings
 * as the runtime's native bindings of their type on a service that reaches {@link Binding#endpoint()} through the
 * binding router (which keeps the endpoint's path as a prefix), whose {@code external} service injects
 * {@link Binding#headers()}; a socket {@code s<i>} on its loopback port; and a global outbound that reaches public
 * addresses less the egress guard's refused ranges (the bindings' external services are not behind it).
 */
final class CapnpConfig {

    static final String EGRESS = "atrium-egress";
    static final String NOWHERE = "atrium-nowhere";
    static final String ROUTER = "atrium-binding-router";
    static final String ROUTER_DATE = "2025-09-01";
    /** The binding type whose objects workerd runs itself, and its options (deploy.api's {@link Binding#options()}). */
    static final String DURABLE_OBJECT = "durableObject";

    static final String CLASS_NAME = "class_name";
    static final String UNIQUE_KEY = "unique_key";
    /** The service setting {@code limits.memory_mb}: the heap limit of each of its isolates. */
    static final String MEMORY_MB = "memory_mb";

    static final String STORAGE = "storage";
    /** The disk service of the durable objects, and its directory (links to each namespace's storage) beside the configuration. */
    static final String DO_DISK = "atrium-do-storage";

    static final String DO_DIR = "do";
    /** Every address: the deny list when the egress guard's ranges are not known. */
    static final List<String> EVERYWHERE = List.of("0.0.0.0/0", "0:0:0:0:0:0:0:0/0");
    /** An IPv4 or IPv6 CIDR as workerd's deny list takes it (checked again by workerd, which refuses the configuration). */
    private static final Pattern CIDR =
            Pattern.compile("([0-9]{1,3}(\\.[0-9]{1,3}){3}|[0-9a-fA-F.]{0,40}:[0-9a-fA-F:.]{1,44})/[0-9]{1,3}");

    private static final Pattern JS_IDENTIFIER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]{0,199}");
    private static final Pattern UNIQUE_KEY_TEXT = Pattern.compile("[A-Za-z0-9_-]{1,128}");
    private static final Pattern DATE = Pattern.compile("\\d{4}-\\d{2}-\\d{2}");
    private static final Pattern FLAG = Pattern.compile("[A-Za-z0-9_]{1,100}");
    private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}");
    private static final ObjectMapper JSON = JsonMappers.create();

    /** The binding router: forwards a binding's request to its endpoint, the endpoint's path kept as a prefix. */
    static final String ROUTER_JS = """
            export default {
              async fetch(request, env, ctx) {
                const p = ctx.props;
                const m = /^[A-Za-z][A-Za-z0-9+.-]*:\\/\\/[^\\/?#]*(\\/[^?#]*)?(\\?[^#]*)?/.exec(request.url);
                const path = (m && m[1]) || "/";
                const query = (m && m[2]) || "";
                for (const segment of path.split("/")) {
                  const s = segment.toLowerCase().replaceAll("%2e", ".");
                  if (s === "." || s === "..") {
                    return new Response("a binding path may not have a . or .. segment", { status: 400 });
                  }
                }
                return env[p.up].fetch(new Request(p.base + path.slice(1) + query, request));
              }
            };
            """;

    /** One worker of a configuration. */
    record Worker(int index, Deployment deployment, int port, List<Modules.Module> modules, int runnerPort) {

        Worker(int index, Deployment deployment, int port, List<Modules.Module> modules) {
            this(index, deployment, port, modules, 0);
        }
    }

    private CapnpConfig() {}

    /** The prelude that tags every console line of worker {@code index} with {@code nonce}. */
    static String prelude(String nonce, int index) {
        return "const tag = \"\\u001e" + nonce + ":" + index + "\\u001f\";\n"
                + "for (const k of [\"log\", \"info\", \"warn\", \"error\", \"debug\", \"trace\"]) {\n"
                + "  const o = console[k];\n"
                + "  if (typeof o === \"function\") console[k] = function (...a) { return o.call(console, tag, ...a); };\n"
                + "}\n";
    }

    static String main(String userMain) {
        return main(userMain, List.of());
    }

    /**
     * The main module; it refuses to load (a throwing top level, so workerd exits with the text) when the code does not
     * export one of {@code durableObjectClasses}: workerd itself only warns and fails each call later.
     */
    static String main(String userMain, List<String> durableObjectClasses) {
        String spec = jsString("./" + userMain);
        StringBuilder classes = new StringBuilder();
        for (String c : durableObjectClasses) {
            classes.append("if (typeof user[")
                    .append(jsString(c))
                    .append("] !== \"function\") throw new Error(")
                    .append(
                            jsString(
                                    "A DurableObjectNamespace in the config referenced the class \"" + c
                                            + "\", but no such Durable Object class is exported from the worker (durableObject binding class_name)."))
                    .append(");\n");
        }
        return "import \"./__atrium_prelude.js\";\n"
                + "export * from " + spec + ";\n"
                + "import * as user from " + spec + ";\n"
                + classes
                + "const d = user.default;\n"
                + "if (d === undefined) throw new Error(\"the main module has no default export\");\n"
                + "export default (d !== null && typeof d === \"object\" && typeof d.fetch === \"function\")\n"
                + "  ? Object.assign(Object.create(d), { async fetch(...args) { try { return await d.fetch(...args); }"
                + " catch (e) { console.error(\"Uncaught\", e); throw e; } } })\n"
                + "  : d;\n";
    }

    /**
     * Writes the configuration {@code config.capnp} (mode 0600) and its module files under {@code dir} and returns its
     * path.
     */
    static Path write(Path dir, List<Worker> workers, String nonce, String defaultDate)
            throws IOException, DeploymentException {
        return write(dir, workers, nonce, defaultDate, true, EVERYWHERE);
    }

    /**
     * As {@link #write(Path, List, String, String)}; {@code durableStorage} false (a validation) keeps durable objects
     * in memory instead of their resources' directories; {@code refused} are the CIDR ranges the workers' global
     * outbound may not reach (the egress guard's).
     */
    static Path write(
            Path dir,
            List<Worker> workers,
            String nonce,
            String defaultDate,
            boolean durableStorage,
            List<String> refused)
            throws IOException, DeploymentException {
        Map<String, String> declaredBy = new LinkedHashMap<>(); // durable object unique key -> the worker declaring it
        boolean anyDurable = false;
        Path modulesDir = Files.createDirectories(dir.resolve("m"));
        StringBuilder services = new StringBuilder();
        StringBuilder sockets = new StringBuilder();
        StringBuilder routerBindings = new StringBuilder();
        StringBuilder externals = new StringBuilder();
        boolean anyBinding = false;
        for (Worker w : workers) {
            Deployment d = w.deployment();
            String prefix = "w" + w.index();
            StringBuilder modules = new StringBuilder();
            Files.writeString(modulesDir.resolve(prefix + "-prelude"), prelude(nonce, w.index()));
            modules.append("(name = \"__atrium_main.js\", esModule = embed \"m/")
                    .append(prefix)
                    .append("-main\"), ");
            modules.append("(name = \"__atrium_prelude.js\", esModule = embed \"m/")
                    .append(prefix)
                    .append("-prelude\")");
            int k = 0;
            for (Modules.Module m : w.modules()) {
                String file = prefix + "-" + k++;
                Files.write(modulesDir.resolve(file), m.content());
                modules.append(", (name = ")
                        .append(quote(m.name()))
                        .append(", ")
                        .append(m.type().capnpField)
                        .append(" = embed \"m/")
                        .append(file)
                        .append("\")");
            }
            String date = d.compatibilityDate() == null || d.compatibilityDate().isBlank()
                    ? defaultDate
                    : d.compatibilityDate();
            if (!DATE.matcher(date).matches()) {
                throw new DeploymentException(Kind.INVALID, "compatibility_date must be YYYY-MM-DD");
            }
            StringBuilder flags = new StringBuilder();
            for (String flag : d.compatibilityFlags()) {
                if (!FLAG.matcher(flag).matches()) {
                    throw new DeploymentException(
                            Kind.INVALID, "not a compatibility flag: " + flag.replaceAll("\\p{Cntrl}", "?"));
                }
                flags.append(flags.length() == 0 ? "" : ", ").append(quote(flag));
            }
            Set<String> names = new HashSet<>();
            StringBuilder bindings = new StringBuilder();
            for (Map.Entry<String, String> e : new java.util.TreeMap<>(d.env()).entrySet()) {
                checkName(names, e.getKey());
                comma(bindings)
                        .append("(name = ")
                        .append(quote(e.getKey()))
                        .append(", text = ")
                        .append(quote(e.getValue()))
                        .append(")");
            }
            int j = 0;
            List<WorkflowRunner.Bound> workflows = new java.util.ArrayList<>();
            List<String> doClasses = new java.util.ArrayList<>();
            StringBuilder namespaces = new StringBuilder();
            for (Binding b : d.bindings()) {
                checkName(names, b.name());
                if (DURABLE_OBJECT.equalsIgnoreCase(b.type())) {
                    durableObject(b, prefix, dir, durableStorage, declaredBy, doClasses, namespaces, bindings);
                    continue;
                }
                String up = "x" + w.index() + "_" + j++;
                URI endpoint = b.endpoint();
                if (!"http".equalsIgnoreCase(endpoint.getScheme()) || endpoint.getHost() == null) {
                    throw new DeploymentException(
                            Kind.INVALID, "binding " + b.name() + ": the endpoint must be an http:// URL");
                }
                int port = endpoint.getPort() < 0 ? 80 : endpoint.getPort();
                String authority = endpoint.getHost() + ":" + port;
                String path =
                        endpoint.getRawPath() == null || endpoint.getRawPath().isEmpty() ? "/" : endpoint.getRawPath();
                if (!path.endsWith("/")) {
                    path += "/";
                }
                Map<String, String> props = new LinkedHashMap<>();
                props.put("up", up);
                props.put("base", "http://" + authority + path);
                String designator = "(name = \"" + ROUTER + "\", props = (json = " + quote(json(props)) + "))";
                comma(bindings).append("(name = ").append(quote(b.name())).append(", ");
                switch (b.type().toLowerCase(Locale.ROOT)) {
                    case "kv" -> bindings.append("kvNamespace = ").append(designator);
                    case "r2" -> bindings.append("r2Bucket = ").append(designator);
                    case "queue" -> bindings.append("queue = ").append(designator);
                    case "d1" ->
                        bindings.append("wrapped = (moduleName = \"cloudflare-internal:d1-api\", innerBindings = [")
                                .append("(name = \"fetcher\", service = ")
                                .append(designator)
                                .append(")])");
                    case "workflow" -> {
                        bindings.append(WorkflowRunner.binding(w.index(), b));
                        workflows.add(new WorkflowRunner.Bound(
                                b.name(), up, props.get("base"), b.options().get("class_name"), b.headers()));
                    }
                    default -> bindings.append("service = ").append(designator);
                }
                bindings.append(")");
                StringBuilder headers = new StringBuilder();
                for (Map.Entry<String, String> h : new java.util.TreeMap<>(b.headers()).entrySet()) {
                    if (!HEADER_NAME.matcher(h.getKey()).matches()
                            || h.getValue().chars().anyMatch(c -> c == '\r' || c == '\n')) {
                        throw new DeploymentException(Kind.INVALID, "binding " + b.name() + ": a header is not valid");
                    }
                    comma(headers)
                            .append("(name = ")
                            .append(quote(h.getKey()))
                            .append(", value = ")
                            .append(quote(h.getValue()))
                            .append(")");
                }
                externals
                        .append("    (name = \"")
                        .append(up)
                        .append("\", external = (address = ")
                        .append(quote(authority))
                        .append(", http = (injectRequestHeaders = [")
                        .append(headers)
                        .append("]))),\n");
                comma(routerBindings)
                        .append("(name = \"")
                        .append(up)
                        .append("\", service = \"")
                        .append(up)
                        .append("\")");
                anyBinding = true;
            }
            Files.writeString(
                    modulesDir.resolve(prefix + "-main"),
                    main(w.modules().get(0).name(), doClasses));
            services.append("    (name = \"")
                    .append(prefix)
                    .append("\", worker = (\n")
                    .append("      modules = [")
                    .append(modules)
                    .append("],\n")
                    .append("      compatibilityDate = ")
                    .append(quote(date))
                    .append(",\n")
                    .append("      compatibilityFlags = [")
                    .append(flags)
                    .append("],\n")
                    .append("      bindings = [")
                    .append(bindings)
                    .append("],\n");
            if (namespaces.length() > 0) {
                anyDurable = true;
                services.append("      durableObjectNamespaces = [")
                        .append(namespaces)
                        .append("],\n")
                        .append("      durableObjectStorage = ")
                        .append(durableStorage ? "(localDisk = \"" + DO_DISK + "\")" : "(inMemory = void)")
                        .append(",\n");
            }
            services.append("      globalOutbound = \"")
                    .append(EGRESS)
                    .append("\",\n")
                    .append("    )),\n");
            if (!workflows.isEmpty()) {
                if (w.runnerPort() <= 0) {
                    throw new DeploymentException(Kind.INVALID, "a worker with workflow bindings needs a runner port");
                }
                Files.writeString(modulesDir.resolve("runner"), WorkflowRunner.JS);
                String[] runner = WorkflowRunner.service(w.index(), w.runnerPort(), workflows);
                services.append(runner[0]);
                sockets.append(runner[1]);
            }
            sockets.append("    (name = \"s")
                    .append(w.index())
                    .append("\", address = \"127.0.0.1:")
                    .append(w.port())
                    .append("\", http = (), service = \"")
                    .append(prefix)
                    .append("\"),\n");
        }
        StringBuilder config = new StringBuilder();
        config.append("# Generated by Atrium's workerd provider; holds secrets (mode 0600).\n");
        config.append("using Workerd = import \"/workerd/workerd.capnp\";\n");
        config.append("const config :Workerd.Config = (\n  services = [\n").append(services);
        config.append("    (name = \"")
                .append(EGRESS)
                .append("\", network = (allow = [\"public\"], deny = [")
                .append(deny(refused))
                .append("])),\n");
        config.append("    (name = \"").append(NOWHERE).append("\", network = (allow = [])),\n");
        if (anyDurable && durableStorage) {
            config.append("    (name = \"")
                    .append(DO_DISK)
                    .append("\", disk = (path = ")
                    .append(quote(dir.resolve(DO_DIR).toAbsolutePath().toString()))
                    .append(", writable = true)),\n");
        }
        if (anyBinding) {
            Files.writeString(modulesDir.resolve("router"), ROUTER_JS);
            config.append("    (name = \"")
                    .append(ROUTER)
                    .append("\", worker = (modules = [(name = \"router.js\", esModule = embed \"m/router\")], ")
                    .append("compatibilityDate = \"")
                    .append(ROUTER_DATE)
                    .append("\", bindings = [")
                    .append(routerBindings)
                    .append("], globalOutbound = \"")
                    .append(NOWHERE)
                    .append("\")),\n");
            config.append(externals);
        }
        config.append("  ],\n  sockets = [\n").append(sockets).append("  ],\n  structuredLogging = true,\n");
        long memoryMb = workers.stream()
                .mapToLong(w -> w.deployment().limits().getOrDefault(MEMORY_MB, 0L))
                .max()
                .orElse(0);
        if (memoryMb > 0) {
            // V8's heap limit is per isolate, so each worker of the process gets it; one going past it aborts the
            // process, which holds one service's deployments only, and the supervisor starts it again
            config.append("  v8Flags = [\"--max-old-space-size=")
                    .append(memoryMb)
                    .append("\"],\n");
        }
        config.append(");\n");
        Path file = dir.resolve("config.capnp");
        Files.writeString(file, config, StandardCharsets.UTF_8);
        return file;
    }

    /**
     * A {@code durableObject} binding: {@code env.<name>} is the namespace of the code's exported class
     * {@code class_name}, declared by the first worker of the configuration that binds the resource (under
     * {@code unique_key}; the others, a canary, reach the same objects through it). Its objects are kept in the
     * directory {@code storage}, linked into the disk service's directory under the unique key (workerd keeps a
     * namespace in {@code <disk>/<unique key>/}); in memory when {@code durableStorage} is false.
     */
    private static void durableObject(
            Binding b,
            String prefix,
            Path dir,
            boolean durableStorage,
            Map<String, String> declaredBy,
            List<String> doClasses,
            StringBuilder namespaces,
            StringBuilder bindings)
            throws IOException, DeploymentException {
        String className = b.options().getOrDefault(CLASS_NAME, "");
        String key = b.options().getOrDefault(UNIQUE_KEY, "");
        String storage = b.options().get(STORAGE);
        if (!JS_IDENTIFIER.matcher(className).matches()) {
            throw new DeploymentException(
                    Kind.INVALID, "binding " + b.name() + ": class_name must be a JavaScript identifier");
        }
        if (!UNIQUE_KEY_TEXT.matcher(key).matches()
                || (durableStorage && (storage == null || !Path.of(storage).isAbsolute()))) {
            throw new DeploymentException(
                    Kind.INVALID,
                    "binding " + b.name() + ": a durableObject binding needs its unique_key and storage directory");
        }
        String owner = declaredBy.get(key);
        comma(bindings)
                .append("(name = ")
                .append(quote(b.name()))
                .append(", durableObjectNamespace = (className = ")
                .append(quote(className));
        if (owner != null && !owner.equals(prefix)) {
            bindings.append(", serviceName = \"").append(owner).append("\"))");
            return;
        }
        bindings.append("))");
        if (owner != null) {
            throw new DeploymentException(
                    Kind.INVALID, "binding " + b.name() + ": the durableObject resource is bound twice");
        }
        declaredBy.put(key, prefix);
        doClasses.add(className);
        comma(namespaces)
                .append("(className = ")
                .append(quote(className))
                .append(", uniqueKey = ")
                .append(quote(key))
                .append(", enableSql = true)");
        if (durableStorage) {
            Path target = Files.createDirectories(Path.of(storage));
            Path link = Files.createDirectories(dir.resolve(DO_DIR)).resolve(key);
            if (!Files.isSymbolicLink(link)) {
                Files.createSymbolicLink(link, target);
            }
        }
    }

    /**
     * workerd's deny list: its own "private" and "local" (kept should the guard's list ever miss one of them) and the
     * egress guard's ranges. workerd's "public" alone lets through TEST-NETs, benchmarking, NAT64 and 6to4 forms of
     * loopback and the machine's own addresses, all of which the guard refuses.
     */
    static String deny(List<String> refused) throws DeploymentException {
        StringBuilder deny = new StringBuilder("\"private\", \"local\"");
        for (String range : refused) {
            if (!CIDR.matcher(range).matches()) {
                throw new DeploymentException(
                        Kind.UNAVAILABLE, "the egress guard gave a range workerd cannot take: " + quote(range));
            }
            deny.append(", ").append(quote(range));
        }
        return deny.toString();
    }

    private static void checkName(Set<String> names, String name) throws DeploymentException {
        if (name.isEmpty() || name.length() > 200 || name.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new DeploymentException(
                    Kind.INVALID, "not a variable or binding name: " + name.replaceAll("\\p{Cntrl}", "?"));
        }
        if (!names.add(name)) {
            throw new DeploymentException(
                    Kind.INVALID, "the name " + name + " is both a variable and a binding, or given twice");
        }
    }

    private static StringBuilder comma(StringBuilder b) {
        return b.length() == 0 ? b : b.append(", ");
    }

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A Cap'n Proto text literal: UTF-8 kept, quotes, backslashes and control characters escaped. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        b.append(String.format("\\x%02x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    /** A JavaScript string literal. */
    static String jsString(String s) {
        return json(s);
    }
}
