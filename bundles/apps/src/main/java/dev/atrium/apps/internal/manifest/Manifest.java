package dev.atrium.apps.internal.manifest;

import java.util.List;
import java.util.Map;

/**
 * An app's {@code app.yml} as parsed and checked: what a group's desired state is. Maps keep the file's order. Every
 * field a manifest may omit has its default here (empty collections, null for an absent object), so code reading a
 * manifest never meets a missing value. See {@code docs/app-manifest.md}.
 *
 * @param apiVersion {@code <group>/v1alpha1}
 * @param name       {@code metadata.name}: lower-case letters, digits and hyphens
 * @param version    {@code spec.version}
 */
public record Manifest(
        String apiVersion,
        String name,
        String displayName,
        String description,
        String icon,
        String version,
        OAuth oauth,
        Map<String, Resource> resources,
        Map<String, Worker> workers,
        Map<String, Container> containers,
        List<Mcp> mcp,
        List<FileHandler> fileHandlers) {

    public Manifest {
        resources = resources == null
                ? Map.of()
                : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(resources));
        workers = workers == null
                ? Map.of()
                : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(workers));
        containers = containers == null
                ? Map.of()
                : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(containers));
        mcp = mcp == null ? List.of() : List.copyOf(mcp);
        fileHandlers = fileHandlers == null ? List.of() : List.copyOf(fileHandlers);
    }

    /** An empty desired state: what uninstall applies. */
    public static Manifest empty(String name) {
        return new Manifest(KIND_VERSION, name, null, null, null, "0", null, null, null, null, null, null);
    }

    /** The one {@code apiVersion} this server reads. */
    public static final String KIND_VERSION = "atrium.dev/v1alpha1";

    /** {@code spec.oauth}: a client registered for the app; {@code autoEnv} puts its id and secret into the env. */
    public record OAuth(
            String clientName,
            List<String> redirectUris,
            List<String> scopes,
            boolean autoEnv,
            String logoUri,
            String tosUri,
            String policyUri) {
        public OAuth {
            redirectUris = redirectUris == null ? List.of() : List.copyOf(redirectUris);
            scopes = scopes == null ? List.of() : List.copyOf(scopes);
        }
    }

    /** {@code spec.resources.<key>}: a resource of the group, created as {@code <group>-<key>}. */
    public record Resource(String type, String backend, Map<String, Object> config) {
        public Resource {
            config = config == null
                    ? Map.of()
                    : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(config));
        }
    }

    /**
     * A workflow's artifact: {@code path} is the workflow file (under {@code .atrium/workflows/} or
     * {@code .github/workflows/}), {@code job} the job that uploads {@code artifact}, {@code artifactPath} the file
     * inside it (null: the artifact's only file).
     */
    public record FromWorkflow(String path, String job, String artifact, String artifactPath) {}

    /** A route: {@code target} is a worker's or container's key; {@code path} a path prefix starting with "/". */
    public record Route(String name, String target, String path) {}

    /** {@code spec.workers.<key>}: a service built by a workflow and run on workerd. */
    public record Worker(
            FromWorkflow build,
            Map<String, String> env,
            Map<String, String> bindings,
            List<Route> routes,
            String compatibilityDate) {
        public Worker {
            env = env == null ? Map.of() : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(env));
            bindings = bindings == null
                    ? Map.of()
                    : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(bindings));
            routes = routes == null ? List.of() : List.copyOf(routes);
        }
    }

    /**
     * {@code spec.containers.<key>}: a service run from an OCI or docker archive a workflow built, listening on
     * {@code port}; {@code healthPath} is probed before it takes requests.
     */
    public record Container(
            FromWorkflow image,
            int port,
            String healthPath,
            Map<String, String> env,
            Map<String, String> bindings,
            List<Route> routes,
            Integer memoryMb) {
        public Container {
            env = env == null ? Map.of() : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(env));
            bindings = bindings == null
                    ? Map.of()
                    : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(bindings));
            routes = routes == null ? List.of() : List.copyOf(routes);
        }
    }

    /** {@code spec.mcp[]}: an MCP endpoint the app serves at {@code path} of {@code target}. */
    public record Mcp(String name, String target, String path) {}

    /** {@code spec.fileHandlers[]}: files of these types open in the app at {@code path} of {@code target}. */
    public record FileHandler(
            String name, String target, String path, List<String> mimeTypes, List<String> extensions) {
        public FileHandler {
            mimeTypes = mimeTypes == null ? List.of() : List.copyOf(mimeTypes);
            extensions = extensions == null ? List.of() : List.copyOf(extensions);
        }
    }
}
