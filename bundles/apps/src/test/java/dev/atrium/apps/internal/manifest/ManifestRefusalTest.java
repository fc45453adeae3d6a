package dev.atrium.apps.internal.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Each rule of the schema and beyond it refuses with the full path and the line of what is wrong. */
class ManifestRefusalTest {

    /** Lines 1 to 6; what a test adds starts at line 7. */
    private static final String HEAD = """
            apiVersion: atrium.dev/v1alpha1
            kind: App
            metadata:
              name: app
            spec:
              version: "1"
            """;

    /** A worker {@code web} at lines 8 to 13 (after {@code workers:} at 7); extra worker keys start at line 14. */
    private static final String WEB = HEAD + """
              workers:
                web:
                  build:
                    fromWorkflow:
                      path: .atrium/workflows/build.yml
                      job: build
                      artifact: worker
            """;

    /** The one problem of {@code yaml}, which must be at {@code path} and {@code line} and say {@code words}. */
    static ManifestProblem refused(String yaml, String path, int line, String words) {
        ManifestParser.Result r = ManifestParser.parse(yaml);
        assertNull(r.manifest());
        assertFalse(r.valid());
        assertEquals(1, r.problems().size(), r.problems().toString());
        ManifestProblem p = r.problems().get(0);
        assertEquals(path, p.path(), p.toString());
        assertEquals(line, p.line(), p.toString());
        assertTrue(p.message().contains(words), p.toString());
        return p;
    }

    @Test
    void theWholeValidWorkerBaseIsValid() {
        assertTrue(
                ManifestParser.parse(WEB).valid(),
                () -> ManifestParser.parse(WEB).problems().toString());
    }

    @Test
    void aContainersEnvMayNotSetWhatItsPortAndHealthPathSet() {
        String box = HEAD + """
                  containers:
                    box:
                      image:
                        fromWorkflow:
                          path: .atrium/workflows/image.yml
                          job: image
                          artifact: image
                      port: 8080
                      env:
                        PORT: "9090"
                """;
        refused(box, "spec.containers.box.env.PORT", 16, "PORT is set from port");
        assertTrue(ManifestParser.parse(box.replace("PORT:", "LISTEN:")).valid());
    }

    @Test
    void kindMustBeApp() {
        refused(HEAD.replace("kind: App", "kind: Service"), "kind", 2, "must be 'App', not 'Service'");
    }

    @Test
    void apiVersionMustBeTheOneThisServerReadsAndTheMessageSaysWhich() {
        refused(HEAD.replace("atrium.dev/", "example.com/"), "apiVersion", 1, "must be 'atrium.dev/v1alpha1'");
        refused(HEAD.replace("v1alpha1", "v1"), "apiVersion", 1, "atrium.dev/v1alpha1");
    }

    @Test
    void aMissingKeyIsNamedAtTheLineOfItsParent() {
        refused(HEAD.replace("kind: App\n", ""), "kind", 1, "is required");
        refused(HEAD.replace("  version: \"1\"\n", "  mcp: []\n"), "spec.version", 5, "is required");
        refused(
                WEB.replace("      artifact: worker\n", ""),
                "spec.workers.web.build.fromWorkflow.artifact",
                10,
                "is required");
    }

    @Test
    void anUnknownKeyIsRefusedWithTheAllowedOnesListed() {
        ManifestProblem p = refused(
                HEAD.replace("  name: app", "  nmae: app\n  name: app"), "metadata.nmae", 4, "unknown key 'nmae'");
        assertTrue(p.message().contains("allowed here: name, displayName, description, icon"), p.message());
        refused(
                WEB + "      bild: {}\n",
                "spec.workers.web.bild",
                14,
                "allowed here: build, env, bindings, routes, compatibilityDate");
        refused(HEAD + "  worker: {}\n", "spec.worker", 7, "allowed here: version, oauth, resources, workers");
    }

    @Test
    void aWorkflowPathMustBeAYamlFileDirectlyInAWorkflowsDirectory() {
        for (String bad : List.of(
                "workflows/build.yml",
                ".atrium/build.yml",
                ".github/workflows/sub/build.yml",
                ".atrium/workflows/../workflows/build.yml",
                ".atrium/workflows/./build.yml",
                ".atrium/workflows//build.yml",
                ".atrium\\workflows\\build.yml")) {
            refused(
                    WEB.replace(".atrium/workflows/build.yml", bad),
                    "spec.workers.web.build.fromWorkflow.path",
                    11,
                    "must");
        }
        refused(
                WEB.replace(".atrium/workflows/build.yml", "/.atrium/workflows/build.yml"),
                "spec.workers.web.build.fromWorkflow.path",
                11,
                "without a leading '/'");
        refused(
                WEB.replace(".atrium/workflows/build.yml", "../.atrium/workflows/build.yml"),
                "spec.workers.web.build.fromWorkflow.path",
                11,
                "'..'");
        refused(
                WEB.replace("build.yml", "build.json"),
                "spec.workers.web.build.fromWorkflow.path",
                11,
                ".yml or .yaml");
        assertTrue(ManifestParser.parse(WEB.replace(".atrium/workflows/build.yml", ".github/workflows/b.yaml"))
                .valid());
    }

    @Test
    void anArtifactPathIsRelativeWithoutDotDot() {
        refused(
                WEB + "          artifactPath: ../secret\n",
                "spec.workers.web.build.fromWorkflow.artifactPath",
                14,
                "'..'");
    }

    @Test
    void aRouteTargetMustBeAWorkerOrContainer() {
        ManifestProblem p = refused(
                WEB + """
                      routes:
                        - name: root
                          target: wbe
                          path: /
                """,
                "spec.workers.web.routes[0].target",
                16,
                "'wbe' is not a key of spec.workers or spec.containers");
        assertTrue(p.message().contains("(services: web)"), p.message());
    }

    @Test
    void aBindingMustNameAResource() {
        refused(
                WEB + """
                      bindings:
                        DB: db
                  resources:
                    cache: {type: kv}
                """,
                "spec.workers.web.bindings.DB",
                15,
                "'db' is not a key of spec.resources (resources: cache)");
    }

    @Test
    void mcpAndFileHandlerTargetsMustBeServices() {
        refused(WEB + """
                  mcp:
                    - {name: tools, target: api, path: /mcp}
                """, "spec.mcp[0].target", 15, "'api' is not a key");
        refused(WEB + """
                  fileHandlers:
                    - name: md
                      target: api
                      path: /open
                      extensions: [.md]
                """, "spec.fileHandlers[0].target", 16, "'api' is not a key");
    }

    @Test
    void aFileHandlerNeedsMimeTypesOrExtensions() {
        refused(WEB + """
                  fileHandlers:
                    - name: md
                      target: web
                      path: /open
                """, "spec.fileHandlers[0]", 15, "needs mimeTypes or extensions");
    }

    @Test
    void aWorkerAndAContainerCannotShareAKey() {
        refused(WEB + """
                  containers:
                    web:
                      image: {fromWorkflow: {path: .atrium/workflows/build.yml, job: build, artifact: image}}
                      port: 8080
                """, "spec.containers.web", 15, "also a key of spec.workers");
    }

    @Test
    void routeNamesAndPathsAreUniqueAcrossTheApp() {
        String containers = """
                  containers:
                    api:
                      image: {fromWorkflow: {path: .atrium/workflows/build.yml, job: build, artifact: image}}
                      port: 8080
                      routes:
                        - {name: root, target: api, path: /api}
                """;
        String web = """
                      routes:
                        - {name: root, target: web, path: /}
                """;
        refused(
                WEB + web + containers,
                "spec.containers.api.routes[0].name",
                21,
                "already the name of route spec.workers.web.routes[0]");
        refused(
                WEB
                        + web
                        + containers.replace("name: root, target: api, path: /api", "name: api, target: api, path: /"),
                "spec.containers.api.routes[0].path",
                21,
                "already the path of route");
    }

    @Test
    void aWorkerNeedsABuildFromAWorkflow() {
        refused(HEAD + """
                  workers:
                    web:
                      env: {A: b}
                """, "spec.workers.web.build", 8, "is required");
        refused(HEAD + """
                  workers:
                    web:
                      build: {}
                """, "spec.workers.web.build.fromWorkflow", 9, "is required");
    }

    @Test
    void aContainerNeedsAnImageAndAPortInRange() {
        String c = HEAD + """
                  containers:
                    api:
                      image: {fromWorkflow: {path: .atrium/workflows/i.yml, job: build, artifact: image}}
                      port: 8080
                """;
        assertTrue(ManifestParser.parse(c).valid());
        refused(
                c.replace(
                        "      image: {fromWorkflow: {path: .atrium/workflows/i.yml, job: build, artifact: image}}\n",
                        ""),
                "spec.containers.api.image",
                8,
                "is required");
        refused(c.replace("      port: 8080\n", ""), "spec.containers.api.port", 8, "is required");
        refused(c.replace("8080", "0"), "spec.containers.api.port", 10, "between 1 and 65535");
        refused(c.replace("8080", "65536"), "spec.containers.api.port", 10, "between 1 and 65535");
        refused(c.replace("8080", "99999999999999999999999"), "spec.containers.api.port", 10, "between 1 and 65535");
        refused(c.replace("8080", "\"8080\""), "spec.containers.api.port", 10, "must be a whole number");
        refused(c.replace("8080", "80.5"), "spec.containers.api.port", 10, "must be a whole number");
        refused(c + "      memoryMb: 1\n", "spec.containers.api.memoryMb", 11, "between 16 and 65536");
    }

    @Test
    void namesFollowTheirPatterns() {
        refused(HEAD.replace("name: app", "name: My_App"), "metadata.name", 4, "lower-case letters");
        refused(HEAD.replace("name: app", "name: a" + "b".repeat(40)), "metadata.name", 4, "at most 40");
        refused(WEB.replace("    web:", "    Web:"), "spec.workers.Web", 8, "lower-case letters");
        refused(
                WEB.replace("    web:", "    w" + "e".repeat(30) + ":"),
                "spec.workers.w" + "e".repeat(30),
                8,
                "at most 30");
        refused(HEAD + "  resources:\n    9db: {type: kv}\n", "spec.resources.9db", 8, "starting with a letter");
        refused(WEB + "      env: {log-level: debug}\n", "spec.workers.web.env.log-level", 14, "upper-case letters");
        refused(
                WEB + "      env:\n        " + "A".repeat(129) + ": x\n",
                "spec.workers.web.env." + "A".repeat(129),
                15,
                "at most 128");
        refused(
                WEB + "      bindings: {db: cache}\n  resources: {cache: {type: kv}}\n",
                "spec.workers.web.bindings.db",
                14,
                "upper-case letters");
    }

    @Test
    void aResourceTypeIsOneOfTheKnownTypes() {
        refused(
                HEAD + "  resources:\n    db:\n      type: mysql\n",
                "spec.resources.db.type",
                9,
                "must be one of d1, r2, kv, queue, vectorize, analyticsEngine, secretRef, workflow, durableObject");
    }

    @Test
    void oauthEnvNamesAreRefusedWhileAutoEnvPutsThemThere() {
        String yaml = WEB + """
                      env:
                        OAUTH_CLIENT_SECRET: mine
                  oauth:
                    clientName: X
                    redirectUris: [https://x.example/cb]
                    scopes: [openid]
                """;
        refused(yaml, "spec.workers.web.env.OAUTH_CLIENT_SECRET", 15, "autoEnv is true");
        refused(yaml + "    autoEnv: true\n", "spec.workers.web.env.OAUTH_CLIENT_SECRET", 15, "autoEnv");
        // Without an OAuth client nothing is injected, so the name is the app's own.
        assertTrue(ManifestParser.parse(WEB + "      env: {OAUTH_CLIENT_SECRET: x}\n")
                .valid());
    }

    @Test
    void anEnvVariableAndABindingOfOneServiceCannotShareAName() {
        refused(
                WEB + "      env: {CACHE: x}\n      bindings: {CACHE: cache}\n  resources: {cache: {type: kv}}\n",
                "spec.workers.web.bindings.CACHE",
                15,
                "both an env variable and a binding");
    }

    private static String oauth(String redirect) {
        return HEAD + """
                  oauth:
                    clientName: X
                    redirectUris:
                      - %s
                    scopes: [openid]
                """.formatted(redirect);
    }

    @Test
    void redirectUrisAreHttpsOrHttpOnALoopbackHost() {
        for (String ok : List.of(
                "https://x.example/cb",
                "http://127.0.0.1/cb",
                "http://127.0.0.1:53682/cb",
                "http://localhost:3000/cb",
                "http://[::1]:8080/")) {
            assertTrue(ManifestParser.parse(oauth(ok)).valid(), ok);
        }
        String path = "spec.oauth.redirectUris[0]";
        refused(oauth("http://x.example/cb"), path, 10, "http is allowed only for a loopback host");
        refused(oauth("http://127.0.0.2/cb"), path, 10, "loopback");
        refused(oauth("ftp://x.example/cb"), path, 10, "must be an https URL");
        refused(oauth("https://x.example/cb#frag"), path, 10, "fragment");
        refused(oauth("https://user:pw@x.example/cb"), path, 10, "user name");
        refused(oauth("/cb"), path, 10, "an absolute URL");
        refused(oauth("https://x.example/a b"), path, 10, "is not a URL");
        refused(
                oauth("[]").replace("redirectUris:\n      - []", "redirectUris: []"),
                "spec.oauth.redirectUris",
                9,
                "at least 1 item");
    }

    @Test
    void scopesAreNonEmptyStringsWithoutSpaces() {
        String yaml = oauth("https://x.example/cb");
        refused(yaml.replace("[openid]", "[openid, \"\"]"), "spec.oauth.scopes[1]", 11, "must not be empty");
        refused(yaml.replace("[openid]", "[\"openid profile\"]"), "spec.oauth.scopes[0]", 11, "without spaces");
        refused(yaml.replace("[openid]", "[]"), "spec.oauth.scopes", 11, "at least 1 item");
        refused(yaml.replace("[openid]", "openid"), "spec.oauth.scopes", 11, "must be a list, not 'openid'");
    }

    @Test
    void autoEnvIsABooleanNotAWord() {
        refused(
                oauth("https://x.example/cb") + "    autoEnv: yes\n",
                "spec.oauth.autoEnv",
                12,
                "must be true or false, not 'yes'");
        refused(
                oauth("https://x.example/cb") + "    autoEnv: \"true\"\n",
                "spec.oauth.autoEnv",
                12,
                "must be true or false");
    }

    @Test
    void metadataUrisMustBeHttps() {
        refused(
                oauth("https://x.example/cb") + "    metadata: {logoUri: \"http://x.example/l.png\"}\n",
                "spec.oauth.metadata.logoUri",
                12,
                "must use https");
    }

    @Test
    void theVersionIsANonEmptyString() {
        refused(HEAD.replace("version: \"1\"", "version: \"\""), "spec.version", 6, "must not be empty");
        refused(HEAD.replace("version: \"1\"", "version:"), "spec.version", 6, "must be a string, not empty");
        refused(HEAD.replace("version: \"1\"", "version: [1]"), "spec.version", 6, "must be a string, not a list");
    }

    @Test
    void aCompatibilityDateIsARealDate() {
        refused(
                WEB + "      compatibilityDate: 2024-02-30\n",
                "spec.workers.web.compatibilityDate",
                14,
                "is not a date");
        refused(WEB + "      compatibilityDate: 24-02-01\n", "spec.workers.web.compatibilityDate", 14, "YYYY-MM-DD");
    }

    @Test
    void aDuplicateKeyIsRefusedAtItsSecondLine() {
        refused(HEAD + "  version: \"2\"\n", "spec.version", 7, "duplicate key 'version'");
    }

    @Test
    void tagsAndMergeKeysAreRefused() {
        // SnakeYAML itself refuses a global tag while reading: before any node exists, so without a path.
        refused(HEAD.replace("name: app", "name: !!python/object:os.system app"), "", 4, "Global tag is not allowed");
        refused(
                HEAD.replace("name: app", "name: !!binary aGVsbG8="),
                "metadata.name",
                4,
                "the tag 'tag:yaml.org,2002:binary' is not supported");
        refused(HEAD.replace("name: app", "name: !custom app"), "metadata.name", 4, "is not supported");
        refused(HEAD.replace("  name: app", "  name: app\n  <<: {icon: x.png}"), "metadata.<<", 5, "merge keys");
    }

    @Test
    void aYamlSyntaxErrorNamesItsLine() {
        ManifestProblem p = refused(HEAD + "  workers: [oops\n", "", 8, "invalid YAML");
        assertTrue(p.toString().startsWith("line 8: invalid YAML"), p.toString());
        refused(HEAD + "---\n" + HEAD, "", 7, "invalid YAML");
    }

    @Test
    void anEmptyOrNonMappingFileIsRefused() {
        refused("", "", 0, "the manifest is empty");
        refused("# nothing\n", "", 0, "the manifest is empty");
        refused("hello", "", 1, "must be a mapping, not 'hello'");
        refused(null, "", 0, "there is no manifest");
    }

    @Test
    void everyProblemIsReportedInOnePassInFileOrder() {
        String yaml = """
                apiVersion: atrium.dev/v2
                kind: App
                metadata:
                  name: Bad Name
                spec:
                  workers:
                    web:
                      build: {fromWorkflow: {path: ci/build.yml, job: build, artifact: w}}
                      routes:
                        - {name: root, target: nowhere, path: /}
                  resources:
                    db: {type: sql}
                """;
        List<ManifestProblem> problems = ManifestParser.parse(yaml).problems();
        assertEquals(
                List.of(
                        "apiVersion",
                        "metadata.name",
                        "spec.version",
                        "spec.workers.web.build.fromWorkflow.path",
                        "spec.workers.web.routes[0].target",
                        "spec.resources.db.type"),
                problems.stream().map(ManifestProblem::path).toList(),
                problems.toString());
        assertEquals(
                List.of(1, 4, 5, 8, 10, 12),
                problems.stream().map(ManifestProblem::line).toList());
    }
}
