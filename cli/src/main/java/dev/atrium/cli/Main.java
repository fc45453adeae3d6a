package dev.atrium.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code ./atrium <command>}: operator commands that talk to a running server's admin API with the operator
 * token from {@code <data>/operator.token}. Exit status 0 on success, 1 when the server refused, 2 on bad usage.
 */
public final class Main {

    static final String USAGE = """
            usage:
              atrium run [--port 8080] [--data ./data] [--db-url JDBC_URL]   build if needed and serve (embedded PostgreSQL by default)
              atrium test [MAVEN ARGS]                                        the whole test suite
              atrium user add NAME [--password-stdin] [--url URL] [--data DIR]
              atrium token create --user NAME [--scopes '*'] [--name NAME] [--expires-at ISO-8601] [--url URL] [--data DIR]
              atrium features [--url URL] [--data DIR]
              atrium feature enable|disable NAME [--url URL] [--data DIR]
              atrium bundles [--url URL] [--data DIR]
              atrium bundle update PATH.jar [--url URL] [--data DIR]
              atrium repo gc REPO_ID [--url URL] [--data DIR]       maintain a repository now (in the background)
              atrium repo gc-status REPO_ID [--url URL] [--data DIR]
              atrium service deploy --space ID --name NAME FILE.js [--strategy direct|canary] [--message TEXT] [--token TOKEN] [--url URL]
                                        deploy a worker (the service is created when the workspace has none of that name)
              atrium service logs NAME [--space ID] [--follow] [--token TOKEN] [--url URL]
              atrium deploy --space ID --repo REPO_ID|URL --ref REF [--ref-type branch|tag|commit] [--group NAME]
                    [--canary [--steps 10:30,50:30]] [--env NAME=VALUE]... [--approve oauth|source]... [--provider NAME]
                    [--no-wait] [--token TOKEN] [--url URL]
                                        deploy an app (its app.yml) from a Git ref and follow the rollout to the end
              atrium deploy validate [FILE]                           check an app.yml (default ./app.yml) here, no server
              atrium deploy status --space ID                         the workspace's app deployments, newest first
              atrium deploy rollback APP_DEPLOYMENT_ID --space ID [--approve oauth|source]... [--no-wait]
              atrium install STORE/[OWNER/]REPO[@TAG] --space ID [deploy's options but --repo, --ref, --ref-type]
                                        deploy an app a registered store lists (STORE: its slug, domain or slug@domain),
                                        at TAG or else the repository's newest version tag
              atrium login [--url URL] [--data DIR] [--token TOKEN]   remember the server, its operator token and your
                                        token in ~/.config/atrium/profile (mode 0600): later commands need no flags
              atrium logout                                           forget them
              atrium completion bash                                  bash completion: source <(./atrium completion bash)
            options:
              --help, -h  this text (after any command too)
              --url   the server (default $ATRIUM_URL, the profile's, or http://127.0.0.1:8080)
              --data  its data directory, which holds operator.token (default $ATRIUM_DATA, the profile's operator
                      token, or ./data)
              --token a personal access token for the service, deploy and install commands (default $ATRIUM_TOKEN or the profile's)
            a flag wins over the environment, which wins over the profile.
            """;

    private final PrintStream out;
    private final PrintStream err;
    // made on first use: --help, usage errors and local commands answer without the TLS and JSON set-up (half a second)
    private ObjectMapper json;
    private HttpClient http;

    private ObjectMapper json() {
        if (json == null) {
            json = new ObjectMapper();
        }
        return json;
    }

    private HttpClient http() {
        if (http == null) {
            http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        }
        return http;
    }

    Main(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        System.exit(new Main(System.out, System.err).run(args));
    }

    /** Thrown for a failure the user is told about in one line. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;
        final int status;
        /** The server's error code ({@code APPROVAL_REQUIRED}, …) when the server refused, else null. */
        final String code;

        Failure(int status, String message) {
            this(status, message, null);
        }

        Failure(int status, String message, String code) {
            super(message);
            this.status = status;
            this.code = code;
        }
    }

    int run(String[] args) {
        try {
            List<String> words = new ArrayList<>();
            Map<String, String> options = parse(args, words);
            if (help) {
                out.print(USAGE);
                return 0;
            }
            String command = String.join(" ", words);
            if (!words.isEmpty() && Set.of("deploy", "install").contains(words.get(0))) {
                new Deploy(this, out, pollMillis).run(words, options, repeated, flags);
                return 0;
            }
            switch (command) {
                case "token create" -> tokenCreate(options);
                case "user add" -> throw new Failure(2, "user add needs a NAME\n" + USAGE);
                case "features" -> features(options);
                case "bundles" -> bundles(options);
                case "login" -> login(options);
                case "logout" -> logout();
                case "help", "" -> out.print(USAGE);
                default -> {
                    if (words.size() == 3
                            && words.get(0).equals("user")
                            && words.get(1).equals("add")) {
                        userAdd(options, words.get(2));
                    } else if (words.size() == 3
                            && words.get(0).equals("feature")
                            && Set.of("enable", "disable").contains(words.get(1))) {
                        feature(options, words.get(1), words.get(2));
                    } else if (words.size() == 3
                            && words.get(0).equals("repo")
                            && Set.of("gc", "gc-status").contains(words.get(1))) {
                        repoGc(options, words.get(1).equals("gc"), words.get(2));
                    } else if (words.size() == 3
                            && words.get(0).equals("service")
                            && words.get(1).equals("deploy")) {
                        serviceDeploy(options, Path.of(words.get(2)));
                    } else if (words.size() == 3
                            && words.get(0).equals("service")
                            && words.get(1).equals("logs")) {
                        serviceLogs(options, words.get(2));
                    } else if (words.size() == 3
                            && words.get(0).equals("bundle")
                            && words.get(1).equals("update")) {
                        bundleUpdate(options, Path.of(words.get(2)));
                    } else {
                        throw new Failure(2, "unknown command '" + command + "'\n" + USAGE);
                    }
                }
            }
            return 0;
        } catch (Failure f) {
            err.println("atrium: " + f.getMessage());
            return f.status;
        }
    }

    private boolean passwordFromStdin;
    private boolean follow;
    private boolean help;
    /** Options given without a value ({@code --canary}, {@code --no-wait}). */
    private final Set<String> flags = new java.util.HashSet<>();
    /** Every value of every option, in order: {@code --env} and {@code --approve} may be given more than once. */
    private final Map<String, List<String>> repeated = new LinkedHashMap<>();
    /** How often a deploy asks for its rollout's progress; tests make it short. */
    long pollMillis = 1000;

    private Map<String, String> parse(String[] args, List<String> words) throws Failure {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                help = true;
            } else if (a.equals("--password-stdin")) {
                passwordFromStdin = true;
            } else if (a.equals("--follow")) {
                follow = true;
            } else if (Deploy.FLAGS.contains(a)) {
                flags.add(a.substring(2));
            } else if (a.startsWith("--")) {
                String name = a.substring(2);
                String value;
                int eq = name.indexOf('=');
                if (eq >= 0) {
                    value = name.substring(eq + 1);
                    name = name.substring(0, eq);
                } else if (i + 1 < args.length) {
                    value = args[++i];
                } else {
                    throw new Failure(2, "option --" + name + " needs a value");
                }
                options.put(name, value);
                repeated.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
            } else {
                words.add(a);
            }
        }
        return options;
    }

    private void tokenCreate(Map<String, String> options) throws Failure {
        String user = options.get("user");
        if (user == null || user.isBlank()) {
            throw new Failure(2, "token create needs --user NAME");
        }
        Admin admin = admin(options);
        Map<String, Object> userBody = Map.of("username", user);
        JsonNode created = admin.post("/admin/users", userBody);
        Map<String, Object> tokenBody = new LinkedHashMap<>();
        tokenBody.put("scopes", options.getOrDefault("scopes", "*"));
        tokenBody.put("name", options.getOrDefault("name", "cli"));
        if (options.containsKey("expires-at")) {
            tokenBody.put("expiresAt", options.get("expires-at"));
        }
        JsonNode token = admin.post("/admin/users/" + user + "/tokens", tokenBody);
        out.println("user " + created.path("user").path("username").asText() + " ("
                + created.path("user").path("id").asText() + "), default workspace "
                + created.path("space").path("slug").asText());
        out.println("token " + token.path("id").asText() + " with scopes "
                + token.path("scopes").asText()
                + (token.path("expires_at").isNull()
                        ? ""
                        : ", expires " + token.path("expires_at").asText()));
        out.println(token.path("token").asText());
    }

    /**
     * A local user who signs in with a password: read from standard input with {@code --password-stdin}, asked for
     * twice on a terminal, or else generated by the server and printed once.
     */
    @SuppressWarnings("SystemConsoleNull") // the CLI targets Java 17, where a console is null unless a terminal is
    private void userAdd(Map<String, String> options, String name) throws Failure {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("username", name);
        if (options.containsKey("password-stdin")) {
            throw new Failure(2, "--password-stdin takes no value");
        }
        String password = null;
        if (passwordFromStdin) {
            try {
                java.io.BufferedReader in = new java.io.BufferedReader(
                        new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
                password = in.readLine();
            } catch (IOException e) {
                throw new Failure(1, "cannot read the password from standard input: " + e.getMessage());
            }
            if (password == null || password.isEmpty()) {
                throw new Failure(2, "no password on standard input");
            }
        } else if (System.console() != null) {
            char[] first = System.console().readPassword("Password for %s (empty: generate one): ", name);
            if (first != null && first.length > 0) {
                char[] second = System.console().readPassword("Again: ");
                if (second == null || !java.util.Arrays.equals(first, second)) {
                    throw new Failure(1, "the passwords differ");
                }
                password = new String(first);
            }
        }
        if (password != null) {
            body.put("password", password);
        }
        JsonNode created = admin(options).post("/admin/identity/local-users", body);
        out.println("user " + created.path("user").path("username").asText() + " ("
                + created.path("user").path("id").asText() + ") signs in at /auth/login?provider=local");
        if (created.hasNonNull("password")) {
            out.println("generated password (shown once):");
            out.println(created.path("password").asText());
        }
    }

    private void features(Map<String, String> options) throws Failure {
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("FEATURE", "STATE", "BUNDLES"));
        for (JsonNode f : admin(options).get("/admin/features").path("features")) {
            rows.add(featureRow(f));
        }
        table(rows);
    }

    private static List<String> featureRow(JsonNode f) {
        List<String> bundles = new ArrayList<>();
        for (JsonNode b : f.path("bundles")) {
            // a missing bundle has no symbolic name: its Maven id says which one
            String name = b.path("symbolic_name").isTextual()
                    ? b.path("symbolic_name").asText()
                    : b.path("id").asText();
            bundles.add(name + " (" + b.path("state").asText() + ")");
        }
        return List.of(f.path("name").asText(), status(f), String.join(", ", bundles));
    }

    private void feature(Map<String, String> options, String action, String name) throws Failure {
        JsonNode f = admin(options)
                .post("/admin/features/" + name + "/" + action, Map.of())
                .path("feature");
        out.println("feature " + f.path("name").asText() + " is " + status(f));
    }

    /** enabled, disabled, or "enabled, not configured" for an optional backend waiting for its configuration. */
    private static String status(JsonNode f) {
        return f.path("status").isTextual()
                ? f.path("status").asText()
                : f.path("enabled").asBoolean() ? "enabled" : "disabled";
    }

    private void repoGc(Map<String, String> options, boolean now, String repoId) throws Failure {
        String path =
                "/admin/repos/" + java.net.URLEncoder.encode(repoId, java.nio.charset.StandardCharsets.UTF_8) + "/gc";
        JsonNode gc =
                (now ? admin(options).post(path, Map.of()) : admin(options).get(path)).path("gc");
        out.println("repository " + repoId + ": " + gc.path("state").asText()
                + (gc.path("last_run_at").isTextual()
                        ? "; last maintained " + gc.path("last_run_at").asText() + " in "
                                + gc.path("duration_ms").asText() + " ms ("
                                + gc.path("reason").asText() + ")"
                                + (gc.path("error").isTextual()
                                        ? ", failed: " + gc.path("error").asText()
                                        : "")
                                + ", " + gc.path("packs").asText() + " pack(s), "
                                + gc.path("bitmaps").asText() + " bitmap(s)"
                        : "; never maintained"));
    }

    private void bundles(Map<String, String> options) throws Failure {
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("ID", "SYMBOLIC NAME", "VERSION", "STATE", "FEATURE"));
        for (JsonNode b : admin(options).get("/admin/bundles").path("bundles")) {
            rows.add(List.of(
                    b.path("id").asText(),
                    b.path("symbolic_name").asText(),
                    b.path("version").asText(),
                    b.path("state").asText(),
                    b.path("feature").isNull() ? "-" : b.path("feature").asText()));
        }
        table(rows);
    }

    private void bundleUpdate(Map<String, String> options, Path jar) throws Failure {
        String symbolicName;
        byte[] bytes;
        try (java.util.jar.JarFile file = new java.util.jar.JarFile(jar.toFile())) {
            java.util.jar.Manifest manifest = file.getManifest();
            String bsn = manifest == null ? null : manifest.getMainAttributes().getValue("Bundle-SymbolicName");
            if (bsn == null) {
                throw new Failure(1, jar + " is not an OSGi bundle (no Bundle-SymbolicName in its manifest)");
            }
            symbolicName = bsn.split(";")[0].trim();
            bytes = Files.readAllBytes(jar);
        } catch (IOException e) {
            throw new Failure(1, "cannot read " + jar + " as a jar: " + e.getMessage());
        }
        JsonNode b = admin(options)
                .postBytes("/admin/bundles/" + symbolicName + "/update", bytes)
                .path("bundle");
        out.println("bundle " + symbolicName + " updated from "
                + b.path("previous_version").asText() + " to "
                + b.path("version").asText());
    }

    /** Prints rows as left-aligned columns separated by two spaces; the first row is the header. */
    void table(List<List<String>> rows) {
        int[] widths = new int[rows.get(0).size()];
        for (List<String> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.size(); i++) {
                line.append(i == row.size() - 1 ? row.get(i) : String.format("%-" + widths[i] + "s  ", row.get(i)));
            }
            out.println(line.toString().stripTrailing());
        }
    }

    // ------------------------------------------------------------------ services (a user's token, not the operator's)

    Admin user(Map<String, String> options) throws Failure {
        String url = url(options);
        String token =
                options.getOrDefault("token", env("ATRIUM_TOKEN", profile().getOrDefault("token", "")));
        if (token.isBlank()) {
            throw new Failure(
                    2,
                    "the service, deploy and install commands act as a user: pass --token TOKEN, set ATRIUM_TOKEN or run atrium login --token TOKEN"
                            + " (./atrium token create --user NAME makes one)");
        }
        return new Admin(url, token.trim());
    }

    private void serviceDeploy(Map<String, String> options, Path file) throws Failure {
        String space = options.get("space");
        String name = options.get("name");
        if (space == null || space.isBlank() || name == null || name.isBlank()) {
            throw new Failure(2, "service deploy needs --space ID and --name NAME");
        }
        byte[] code;
        try {
            code = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new Failure(2, "cannot read " + file + ": " + e.getMessage());
        }
        Admin api = user(options);
        JsonNode service = null;
        for (JsonNode s :
                api.get("/api/services/space/" + encode(space) + "?limit=100").path("services")) {
            if (s.path("name").asText().equals(name) || s.path("slug").asText().equals(name)) {
                service = s;
            }
        }
        if (service == null) {
            service = api.post("/api/services", Map.of("name", name, "space_id", space))
                    .path("service");
            out.println("created service " + service.path("name").asText() + " ("
                    + service.path("id").asText() + ")");
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("bundle", java.util.Base64.getEncoder().encodeToString(code));
        body.put("deploy_message", options.getOrDefault("message", "./atrium service deploy " + file.getFileName()));
        body.put("strategy", options.getOrDefault("strategy", "direct"));
        JsonNode d = api.post("/api/services/" + service.path("id").asText() + "/deployments", body)
                .path("deployment");
        URI base = URI.create(api.url);
        out.println("deployment " + d.path("id").asText() + " ("
                + d.path("status").asText() + ") of " + service.path("id").asText());
        out.println(
                "http://" + service.path("hostname").asText() + (base.getPort() > 0 ? ":" + base.getPort() : "") + "/");
    }

    private void serviceLogs(Map<String, String> options, String name) throws Failure {
        Admin api = user(options);
        String space = options.get("space");
        String path = space == null ? "/api/services?limit=100" : "/api/services/space/" + encode(space) + "?limit=100";
        String id = null;
        for (JsonNode s : api.get(path).path("services")) {
            if (s.path("id").asText().equals(name)
                    || s.path("name").asText().equals(name)
                    || s.path("slug").asText().equals(name)) {
                id = s.path("id").asText();
            }
        }
        if (id == null) {
            throw new Failure(1, "no service named " + name + (space == null ? "" : " in " + space));
        }
        long after = 0;
        for (; ; ) {
            JsonNode page = api.get("/api/services/" + id + "/logs?limit=1000&after=" + after);
            for (JsonNode l : page.path("logs")) {
                printLog(l);
            }
            if (page.path("logs").size() < 1000) {
                after = page.path("next_after").asLong(after);
                break;
            }
            after = page.path("next_after").asLong();
        }
        if (!follow) {
            return;
        }
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create(api.url + "/api/services/" + id + "/logs?after=" + after))
                .header("Authorization", "Bearer " + api.token)
                .header("Accept", "text/event-stream")
                .GET()
                .build();
        try {
            HttpResponse<java.util.stream.Stream<String>> response =
                    http().send(request, HttpResponse.BodyHandlers.ofLines());
            if (response.statusCode() != 200) {
                throw new Failure(1, "the server refused the log stream (HTTP " + response.statusCode() + ")");
            }
            response.body().forEach(line -> {
                if (line.startsWith("data:")) {
                    try {
                        printLog(json().readTree(line.substring(5).trim()));
                    } catch (IOException e) {
                        out.println(line.substring(5).trim());
                    }
                }
            });
        } catch (IOException e) {
            throw new Failure(1, "the log stream ended: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void printLog(JsonNode l) {
        out.println(l.path("at").asText() + " " + l.path("level").asText() + " "
                + l.path("message").asText());
        out.flush();
    }

    private static String encode(String s) {
        return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8)
                .replace("+", "%20");
    }

    private Admin admin(Map<String, String> options) throws Failure {
        String url = url(options);
        Map<String, String> profile = profile();
        if (!options.containsKey("data")
                && env("ATRIUM_DATA", null) == null
                && profile.containsKey("operator_token")
                && !options.containsKey("url")
                && env("ATRIUM_URL", null) == null) {
            return new Admin(url, profile.get("operator_token"));
        }
        Path data = Path.of(options.getOrDefault("data", env("ATRIUM_DATA", "data")));
        Path tokenFile = data.resolve("operator.token");
        try {
            return new Admin(url, Files.readString(tokenFile).trim());
        } catch (NoSuchFileException e) {
            throw new Failure(
                    1,
                    "no operator token at " + tokenFile.toAbsolutePath()
                            + " (start the server with this --data first, or pass --data)");
        } catch (IOException e) {
            throw new Failure(1, "cannot read " + tokenFile + ": " + e.getMessage());
        }
    }

    /** The server: --url, else $ATRIUM_URL, else the profile's, else the local default. */
    private String url(Map<String, String> options) throws Failure {
        return options.getOrDefault("url", env("ATRIUM_URL", profile().getOrDefault("url", "http://127.0.0.1:8080")))
                .replaceAll("/+$", "");
    }

    // ------------------------------------------------------------------ the profile

    /** {@code $XDG_CONFIG_HOME/atrium/profile}, else {@code ~/.config/atrium/profile}. */
    static Path profilePath() {
        String xdg = System.getenv("XDG_CONFIG_HOME");
        Path config =
                xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".config");
        return config.resolve("atrium").resolve("profile");
    }

    private Map<String, String> profileCache;

    /** What atrium login saved (properties: url, operator_token, token); empty when nothing was. */
    private Map<String, String> profile() throws Failure {
        if (profileCache == null) {
            Map<String, String> m = new LinkedHashMap<>();
            Path file = profilePath();
            if (Files.exists(file)) {
                java.util.Properties p = new java.util.Properties();
                try (var in = Files.newBufferedReader(file)) {
                    p.load(in);
                } catch (IOException e) {
                    throw new Failure(1, "cannot read the profile " + file + ": " + e.getMessage());
                }
                p.stringPropertyNames().forEach(k -> m.put(k, p.getProperty(k).trim()));
            }
            profileCache = m;
        }
        return profileCache;
    }

    /** Checks the server and the tokens, then saves them for later commands, readable by this user only. */
    private void login(Map<String, String> options) throws Failure {
        String url = options.getOrDefault("url", env("ATRIUM_URL", "http://127.0.0.1:8080"))
                .replaceAll("/+$", "");
        Map<String, String> saved = new LinkedHashMap<>();
        saved.put("url", url);
        Path tokenFile = Path.of(options.getOrDefault("data", env("ATRIUM_DATA", "data")))
                .resolve("operator.token");
        if (Files.exists(tokenFile)) {
            String operator;
            try {
                operator = Files.readString(tokenFile).trim();
            } catch (IOException e) {
                throw new Failure(1, "cannot read " + tokenFile + ": " + e.getMessage());
            }
            new Admin(url, operator).get("/admin/features");
            saved.put("operator_token", operator);
        }
        String token = options.getOrDefault("token", env("ATRIUM_TOKEN", ""));
        if (!token.isBlank()) {
            String who =
                    new Admin(url, token.trim()).get("/api/me").path("username").asText("");
            saved.put("token", token.trim());
            out.println("your token is " + who + "'s");
        }
        if (saved.size() == 1) {
            throw new Failure(
                    2,
                    "nothing to remember: no operator token at " + tokenFile.toAbsolutePath()
                            + " (pass --data) and no --token");
        }
        Path file = profilePath();
        try {
            Files.createDirectories(
                    file.getParent(),
                    java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
            Path tmp = Files.createTempFile(
                    file.getParent(),
                    "profile",
                    ".tmp",
                    java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                            java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
            StringBuilder text = new StringBuilder("# written by atrium login; holds tokens: keep it to yourself\n");
            saved.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
            Files.writeString(tmp, text);
            Files.move(
                    tmp,
                    file,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new Failure(1, "cannot write the profile " + file + ": " + e.getMessage());
        }
        out.println("logged in to " + url + (saved.containsKey("operator_token") ? " as its operator" : "")
                + "; saved in " + file);
    }

    private void logout() throws Failure {
        Path file = profilePath();
        try {
            out.println(Files.deleteIfExists(file) ? "forgot " + file : "no profile at " + file);
        } catch (IOException e) {
            throw new Failure(1, "cannot delete " + file + ": " + e.getMessage());
        }
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : v;
    }

    /** A client of the server's API with one token: the operator's or a user's. */
    final class Admin {
        final String url;
        private final String token;

        Admin(String url, String token) {
            this.url = url;
            this.token = token;
        }

        JsonNode get(String path) throws Failure {
            return send(path, "GET", null, null, Duration.ofSeconds(30));
        }

        JsonNode post(String path, Object body) throws Failure {
            byte[] bytes;
            try {
                bytes = json().writeValueAsBytes(body);
            } catch (IOException e) {
                throw new Failure(2, "cannot encode the request: " + e.getMessage());
            }
            return send(path, "POST", "application/json", bytes, Duration.ofSeconds(30));
        }

        JsonNode postBytes(String path, byte[] body) throws Failure {
            return send(path, "POST", "application/java-archive", body, Duration.ofMinutes(2));
        }

        /**
         * One request over {@link HttpURLConnection}, not {@link HttpClient}: HttpClient's selector thread waits in
         * native code, and the JVM's exit waits 300 ms for such threads, a third of a command's time.
         */
        private JsonNode send(String path, String method, String contentType, byte[] body, Duration timeout)
                throws Failure {
            try {
                URI uri = URI.create(url + path);
                if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
                    throw new IllegalArgumentException("not an http or https URL");
                }
                HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
                c.setConnectTimeout(5000);
                c.setReadTimeout((int) timeout.toMillis());
                c.setInstanceFollowRedirects(false);
                c.setRequestMethod(method);
                c.setRequestProperty("Authorization", "Bearer " + token);
                if (body != null) {
                    // not a streaming mode: a 401 to a streamed body is an HttpRetryException instead of its answer
                    c.setDoOutput(true);
                    c.setRequestProperty("Content-Type", contentType);
                    try (OutputStream o = c.getOutputStream()) {
                        o.write(body);
                    }
                }
                int status = c.getResponseCode();
                byte[] bytes;
                try (InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream()) {
                    bytes = in == null ? new byte[0] : in.readAllBytes();
                }
                JsonNode answer = bytes.length == 0 ? json().createObjectNode() : json().readTree(bytes);
                if (status >= 300) {
                    String message = answer.path("error").path("message").asText("HTTP " + status);
                    throw new Failure(
                            1,
                            "the server refused " + path + ": " + message + " (HTTP " + status + ")",
                            answer.path("error").path("code").asText(null));
                }
                return answer;
            } catch (ConnectException e) {
                throw new Failure(1, "no server answers at " + url + " (is it running? start it with ./atrium run)");
            } catch (IOException e) {
                throw new Failure(1, "talking to " + url + " failed: " + e);
            } catch (IllegalArgumentException e) {
                throw new Failure(2, "bad --url " + url + ": " + e.getMessage());
            }
        }
    }
}
