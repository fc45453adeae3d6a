package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The real runtime, launched once per test run with {@code ./atrium run} on a free loopback port, a fresh
 * data directory and a fresh database, and stopped with SIGTERM when the run ends. Test classes receive it
 * as a parameter: {@code @ExtendWith(AtriumServer.Extension.class)}.
 */
final class AtriumServer implements ExtensionContext.Store.CloseableResource {

    static final Path ROOT =
            Path.of(System.getProperty("atrium.root", "..")).toAbsolutePath().normalize();
    private static final AtomicInteger USERS = new AtomicInteger();
    /** Asks {@code /healthz}: before every test, so one client (and its selector thread) for the run. */
    private static final HttpClient PROBE = HttpClient.newHttpClient();

    final TestDatabase db;
    final Path data;
    final int port;
    final Process process;
    final long startMillis;
    private final Path log;

    private AtriumServer(TestDatabase db, Path data, int port, Process process, long startMillis, Path log) {
        this.db = db;
        this.data = data;
        this.port = port;
        this.process = process;
        this.startMillis = startMillis;
        this.log = log;
    }

    /**
     * Runs {@code ./atrium run} on a free port with {@code data}, on {@code db} or, when it is null, on the
     * embedded PostgreSQL; returns once {@code /healthz} answers 200.
     */
    static AtriumServer launch(Path data, TestDatabase db) throws Exception {
        return launch(data, db, Map.of());
    }

    /**
     * As {@link #launch(Path, TestDatabase)}, with extra environment variables for the server process. A server a test
     * launches for itself (a second instance, a restart, a setting of its own) compiles with C1 alone
     * ({@code ATRIUM_JAVA_EXTRA_OPTS}) unless the test sets the JVM options: it lives for one test class, and C2 spent
     * half of a start's CPU on code that runs only at start, on the two cores the whole suite shares. The shared server
     * and {@link LauncherTest} run {@link #launchAsShipped as shipped}.
     */
    static AtriumServer launch(Path data, TestDatabase db, Map<String, String> env) throws Exception {
        Map<String, String> quick = new java.util.HashMap<>(env);
        if (!env.containsKey("ATRIUM_JAVA_OPTS")) {
            quick.putIfAbsent("ATRIUM_JAVA_EXTRA_OPTS", "-XX:TieredStopAtLevel=1");
        }
        return launchAsShipped(data, db, quick);
    }

    /** As {@link #launch(Path, TestDatabase, Map)}, with the JVM options {@code ./atrium run} has by default (the full JIT). */
    static AtriumServer launchAsShipped(Path data, TestDatabase db, Map<String, String> env) throws Exception {
        int port = freePort();
        Path log = ROOT.resolve("itests/target/server-" + port + ".log");
        Files.createDirectories(log.getParent());
        List<String> command = new java.util.ArrayList<>(
                List.of(ROOT.resolve("atrium").toString(), "run", "--port", "" + port, "--data", data.toString()));
        if (db != null) {
            command.addAll(List.of("--db-url", db.url()));
        }
        ProcessBuilder pb =
                new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("ATRIUM_NO_BUILD", "1");
        pb.environment().remove("ATRIUM_DB_URL");
        // test peers (fake Git remotes, model servers) listen on loopback, which production refuses
        pb.environment().put("ATRIUM_EGRESS_ALLOW_LOOPBACK", "true");
        pb.environment().put("ATRIUM_BROWSER_LOOPBACK_PORTS", Integer.toString(BROWSER_PAGES_PORT));
        // tests send share-password failures back to back; the growing delay between one address's guesses is
        // covered by SharePasswordsTest
        pb.environment().put("ATRIUM_THREADS_SHARE_DELAY_BASE_MS", "0");
        // SessionsTest waits for the reaper to expire a session with a short idle timeout
        pb.environment().put("ATRIUM_SESSIONS_REAP_S", "1");
        // the route sweep sends hundreds of public federation GETs a second from one address; the limit itself is
        // covered by StoreInventoryTest, which sets its own with a configuration file
        pb.environment().put("ATRIUM_FEDERATION_PUBLIC_GETS_PER_MINUTE", "600000");
        pb.environment().put("ATRIUM_FEDERATION_PUBLIC_GETS_BURST", "100000");
        // the second kv backend runs on the machine's Redis (ResourcesTest, KvOnRedisTest)
        pb.environment()
                .put(
                        "ATRIUM_KV_REDIS_URL",
                        System.getenv().getOrDefault("ATRIUM_TEST_REDIS", "redis://127.0.0.1:6379/0"));
        pb.environment()
                .put(
                        "ATRIUM_QUEUE_NATS_URL",
                        System.getenv().getOrDefault("ATRIUM_TEST_NATS", "nats://127.0.0.1:4222"));
        pb.environment().putAll(env);
        if (db != null
                && !pb.environment().getOrDefault("ATRIUM_JAVA_EXTRA_OPTS", "").contains("java.io.tmpdir")) {
            // the server's temporary files in its data directory, which the test removes: a server killed with SIGKILL
            // cannot delete them itself (the launcher's unpacked framework jars, FileInstall's directory). Not for the
            // embedded database, whose binaries and cluster template zonky caches in the temporary directory.
            Path tmp = data.resolve("tmp");
            Files.createDirectories(tmp);
            pb.environment().merge("ATRIUM_JAVA_EXTRA_OPTS", "-Djava.io.tmpdir=" + tmp, (a, b) -> a + " " + b);
        }
        long started = System.nanoTime();
        Process p = pb.start();
        AtriumServer server = new AtriumServer(db, data, port, p, 0, log);
        try {
            long ms = server.awaitHealthy(Duration.ofSeconds(90), started);
            return new AtriumServer(db, data, port, p, ms, log);
        } catch (Exception | Error e) {
            // the JVM too: while it writes its class-data archive, the script launched is its parent, not the JVM
            for (ProcessHandle jvm : p.toHandle().descendants().toList()) {
                jvm.destroyForcibly();
                jvm.onExit().get(10, TimeUnit.SECONDS);
            }
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw e;
        }
    }

    /**
     * SIGKILL to the server's JVM, as a crash would. Not only to the launched process: while it writes its class-data
     * archive, the atrium script stays the JVM's parent instead of becoming it.
     */
    void killHard() throws Exception {
        java.util.List<ProcessHandle> jvms = process.toHandle().descendants().toList();
        jvms.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle jvm : jvms) {
            jvm.onExit().get();
        }
        process.destroyForcibly();
        process.waitFor();
    }

    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * The loopback port {@link BrowserSessionsTest} serves its pages on: the only loopback port a browser session's
     * pages may reach (ATRIUM_BROWSER_LOOPBACK_PORTS), so that the same sessions still see 127.0.0.1:5432 refused.
     */
    static final int BROWSER_PAGES_PORT = browserPagesPort();

    private static int browserPagesPort() {
        try {
            return freePort();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * A port for a server a test starts later. Not one from {@code bind(0)}: those come from the kernel's ephemeral
     * range, where the other lane's outgoing connections and servers take them between this check and the bind (pebble
     * once exited on such a port in CI). Below that range only listeners take ports, and each is handed out once.
     */
    static int freePort() throws IOException {
        for (int attempt = 0; attempt < 500; attempt++) {
            int port = 20_000 + java.util.concurrent.ThreadLocalRandom.current().nextInt(12_000);
            if (!HANDED_OUT.add(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new java.net.InetSocketAddress(port));
                return port;
            } catch (IOException taken) {
                // a listener of this machine's; try another
            }
        }
        throw new IOException("no free port between 20000 and 31999");
    }

    /** Waits for {@code GET /healthz} 200; returns the milliseconds since {@code startedNanos}. */
    long awaitHealthy(Duration timeout, long startedNanos) throws Exception {
        HttpClient client = PROBE;
        long deadline = System.nanoTime() + timeout.toNanos();
        String lastAnswer = "no answer";
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the server exited with " + process.exitValue() + ":\n" + tail());
            }
            try {
                HttpResponse<String> r = client.send(
                        HttpRequest.newBuilder(URI.create(base() + "/healthz"))
                                .timeout(Duration.ofSeconds(2))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return (System.nanoTime() - startedNanos) / 1_000_000;
                }
                lastAnswer = r.statusCode() + " " + r.body();
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException(
                "the server did not become healthy in " + timeout + " (last /healthz: " + lastAnswer + "):\n" + tail());
    }

    String base() {
        return "http://127.0.0.1:" + port;
    }

    /** The server's whole log. */
    String fullLog() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    String tail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    String operatorToken() {
        try {
            return Files.readString(data.resolve("operator.token")).trim();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    Http anonymous() {
        return new Http(base(), null);
    }

    Http operator() {
        return new Http(base(), operatorToken());
    }

    /** A new local Principal with its default workspace, and a client holding a PAT with {@code scopes}. */
    User newUser(String scopes) {
        String name = "user" + USERS.incrementAndGet() + "x" + Long.toString(System.nanoTime() % 100000, 36);
        Http.Reply created = operator().post("/admin/users", Map.of("username", name));
        assertEquals(201, created.status(), created.body());
        Http.Reply token = operator().post("/admin/users/" + name + "/tokens", Map.of("scopes", scopes));
        assertEquals(201, token.status(), token.body());
        return new User(
                name,
                created.json().path("user").path("id").asText(),
                created.json().path("space").path("id").asText(),
                new Http(base(), token.json().path("token").asText()));
    }

    User newUser() {
        return newUser("*");
    }

    record User(String username, String principalId, String defaultSpaceId, Http http) {}

    /** SIGTERM, as Ctrl-C or a service manager would send; returns the exit code. */
    int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("the server did not stop within 30 s of SIGTERM:\n" + tail());
        }
        return process.exitValue();
    }

    @Override
    public void close() throws Throwable {
        try {
            if (process.isAlive()) {
                stop();
            }
        } finally {
            if (db != null) {
                db.close();
            }
            deleteTree(data.toFile());
        }
    }

    static void deleteTree(File f) {
        File[] children = f.listFiles();
        if (children != null) {
            for (File c : children) {
                deleteTree(c);
            }
        }
        f.delete();
    }

    /** Shares one server among all test classes of the run. */
    /**
     * The scripted model server the shared server's {@code openai} provider talks to, one for the run: a
     * {@code @SharedServer} test scripts a model name of its own ({@link FakeModelServer#script}) and chooses it for its
     * workspace. Unscripted models (the route sweep's) are answered 500, as an unreachable provider fails a run.
     */
    static FakeModelServer sharedModels(ExtensionContext e) {
        return e.getRoot()
                .getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(
                        SharedModels.class,
                        k -> {
                            try {
                                return new SharedModels(new FakeModelServer());
                            } catch (IOException ex) {
                                throw new java.io.UncheckedIOException(ex);
                            }
                        },
                        SharedModels.class)
                .server();
    }

    /** Closes the shared model server when the run ends. */
    private record SharedModels(FakeModelServer server) implements ExtensionContext.Store.CloseableResource {
        @Override
        public void close() {
            server.close();
        }
    }

    static final class Extension implements ParameterResolver {
        @Override
        public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
            return p.getParameter().getType() == AtriumServer.class
                    || p.getParameter().getType() == FakeModelServer.class;
        }

        @Override
        public Object resolveParameter(ParameterContext p, ExtensionContext e) {
            if (p.getParameter().getType() == FakeModelServer.class) {
                return sharedModels(e);
            }
            AtriumServer server = e.getRoot()
                    .getStore(ExtensionContext.Namespace.GLOBAL)
                    .getOrComputeIfAbsent(
                            AtriumServer.class,
                            k -> {
                                Path data = null;
                                TestDatabase db = null;
                                try {
                                    data = Files.createTempDirectory("atrium-it-");
                                    db = TestDatabase.create();
                                    return launchAsShipped(
                                            data,
                                            db,
                                            Map.of(
                                                    "ATRIUM_OPENAI_BASE_URL",
                                                    sharedModels(e).openAiBase()));
                                } catch (Exception ex) {
                                    // nothing stores a server that never started, so nothing would close what it was
                                    // given
                                    try {
                                        if (db != null) {
                                            db.close();
                                        }
                                    } catch (Exception closing) {
                                        ex.addSuppressed(closing);
                                    }
                                    if (data != null) {
                                        deleteTree(data.toFile());
                                    }
                                    throw new IllegalStateException("cannot start the server: " + ex.getMessage(), ex);
                                }
                            },
                            AtriumServer.class);
            // tests before this one update bundles, switch features and drop jars into deploy/ on the shared server;
            // each test starts on a server that says it is ready again, as an operator's next request would wait for
            try {
                server.awaitHealthy(Duration.ofSeconds(60), System.nanoTime());
            } catch (Exception ex) {
                throw new IllegalStateException("the shared server is not ready again: " + ex.getMessage(), ex);
            }
            return server;
        }
    }
}
