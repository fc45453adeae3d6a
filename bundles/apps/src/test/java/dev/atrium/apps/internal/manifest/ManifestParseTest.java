package dev.atrium.apps.internal.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A valid manifest parses into the records, with defaults for what it leaves out. */
class ManifestParseTest {

    /** Every field, once: a worker built by a workflow, a kv resource, OAuth, a container, MCP and a file handler. */
    static final String FULL = """
            apiVersion: atrium.dev/v1alpha1
            kind: App
            metadata:
              name: notes
              displayName: Notes
              description: Notes with a search index.
              icon: assets/icon.png
            spec:
              version: 1.0
              oauth:
                clientName: Notes
                redirectUris:
                  - https://notes.example.com/callback
                  - http://127.0.0.1:8788/callback
                scopes: [openid, profile]
                autoEnv: true
                metadata:
                  logoUri: https://notes.example.com/logo.png
                  tosUri: https://notes.example.com/tos
                  policyUri: https://notes.example.com/privacy
              resources:
                cache:
                  type: kv
                db:
                  type: d1
                  backend: postgres
                  config:
                    size: 10
                    ratio: 0.5
                    strict: true
                    label: "42"
                    tags: [a, b]
                    nothing: null
              workers:
                web:
                  build:
                    fromWorkflow:
                      path: .atrium/workflows/build.yml
                      job: build
                      artifact: worker
                      artifactPath: dist/worker.js
                  env:
                    LOG_LEVEL: debug
                    RETRIES: 3
                  bindings:
                    CACHE: cache
                    DB: db
                  routes:
                    - name: root
                      target: web
                      path: /
                    - name: api
                      target: api
                      path: /api
                  compatibilityDate: 2024-09-23
              containers:
                api:
                  image:
                    fromWorkflow:
                      path: .github/workflows/image.yaml
                      job: image
                      artifact: image
                  port: 8080
                  healthPath: /healthz
                  env:
                    MODE: prod
                  bindings:
                    CACHE: cache
                  memoryMb: 256
              mcp:
                - name: notes-mcp
                  target: web
                  path: /mcp
              fileHandlers:
                - name: markdown
                  target: web
                  path: /open
                  mimeTypes: [text/markdown]
                  extensions: [.md, .markdown]
            """;

    static ManifestParser.Result parse(String yaml) {
        return ManifestParser.parse(yaml);
    }

    static Manifest valid(String yaml) {
        ManifestParser.Result r = parse(yaml);
        assertEquals(List.of(), r.problems());
        assertTrue(r.valid());
        return r.manifest();
    }

    @Test
    void aFullManifestParsesIntoTheRecords() {
        Manifest m = valid(FULL);
        assertEquals("atrium.dev/v1alpha1", m.apiVersion());
        assertEquals("notes", m.name());
        assertEquals("Notes", m.displayName());
        assertEquals("Notes with a search index.", m.description());
        assertEquals("assets/icon.png", m.icon());
        assertEquals("1.0", m.version());
        assertEquals(
                new Manifest.OAuth(
                        "Notes",
                        List.of("https://notes.example.com/callback", "http://127.0.0.1:8788/callback"),
                        List.of("openid", "profile"),
                        true,
                        "https://notes.example.com/logo.png",
                        "https://notes.example.com/tos",
                        "https://notes.example.com/privacy"),
                m.oauth());
        assertEquals(List.of("cache", "db"), List.copyOf(m.resources().keySet()));
        assertEquals(new Manifest.Resource("kv", null, null), m.resources().get("cache"));
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("size", 10L);
        config.put("ratio", 0.5);
        config.put("strict", true);
        config.put("label", "42");
        config.put("tags", List.of("a", "b"));
        config.put("nothing", null);
        assertEquals(
                new Manifest.Resource("d1", "postgres", config), m.resources().get("db"));
        assertEquals(
                new Manifest.Worker(
                        new Manifest.FromWorkflow(".atrium/workflows/build.yml", "build", "worker", "dist/worker.js"),
                        Map.of("LOG_LEVEL", "debug", "RETRIES", "3"),
                        Map.of("CACHE", "cache", "DB", "db"),
                        List.of(new Manifest.Route("root", "web", "/"), new Manifest.Route("api", "api", "/api")),
                        "2024-09-23"),
                m.workers().get("web"));
        assertEquals(
                List.of("LOG_LEVEL", "RETRIES"),
                List.copyOf(m.workers().get("web").env().keySet()));
        assertEquals(
                new Manifest.Container(
                        new Manifest.FromWorkflow(".github/workflows/image.yaml", "image", "image", null),
                        8080,
                        "/healthz",
                        Map.of("MODE", "prod"),
                        Map.of("CACHE", "cache"),
                        List.of(),
                        256),
                m.containers().get("api"));
        assertEquals(List.of(new Manifest.Mcp("notes-mcp", "web", "/mcp")), m.mcp());
        assertEquals(
                List.of(new Manifest.FileHandler(
                        "markdown", "web", "/open", List.of("text/markdown"), List.of(".md", ".markdown"))),
                m.fileHandlers());
    }

    @Test
    void aMinimalManifestGetsEmptyCollectionsAndNoOAuth() {
        Manifest m = valid("""
                apiVersion: atrium.dev/v1alpha1
                kind: App
                metadata: {name: hello}
                spec: {version: "2"}
                """);
        assertEquals("hello", m.name());
        assertEquals("2", m.version());
        assertNull(m.displayName());
        assertNull(m.oauth());
        assertTrue(m.resources().isEmpty()
                && m.workers().isEmpty()
                && m.containers().isEmpty());
        assertTrue(m.mcp().isEmpty() && m.fileHandlers().isEmpty());
    }

    @Test
    void aVersionIsKeptAsWrittenNotAsANumber() {
        for (String v : List.of("1.10", "1.0", "007", "2024.01", "1e3", "v1.2.3-beta", "true")) {
            assertEquals(v, valid(minimal(v)).version(), v);
        }
    }

    @Test
    void autoEnvIsTrueWhenLeftOutAndFalseWhenSaid() {
        String oauth = """
                  oauth:
                    clientName: X
                    redirectUris: ["http://localhost:3000/cb", "http://[::1]/cb"]
                    scopes: [openid]
                """;
        assertTrue(valid(minimal("1") + oauth).oauth().autoEnv());
        assertFalse(valid(minimal("1") + oauth + "    autoEnv: false\n").oauth().autoEnv());
    }

    @Test
    void envNamesOfTheOAuthClientAreAllowedWhenAutoEnvIsOff() {
        String yaml = minimal("1") + """
                  oauth:
                    clientName: X
                    redirectUris: [https://x.example/cb]
                    scopes: [openid]
                    autoEnv: false
                  workers:
                    web:
                      build: {fromWorkflow: {path: .github/workflows/b.yml, job: b, artifact: a}}
                      env: {OAUTH_CLIENT_ID: mine}
                """;
        assertEquals("mine", valid(yaml).workers().get("web").env().get("OAUTH_CLIENT_ID"));
    }

    static String minimal(String version) {
        return """
                apiVersion: atrium.dev/v1alpha1
                kind: App
                metadata:
                  name: app
                spec:
                  version: %s
                """.formatted(version);
    }
}
