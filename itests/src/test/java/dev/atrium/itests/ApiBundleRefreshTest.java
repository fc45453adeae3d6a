package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.Bundle;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.framework.wiring.BundleWire;
import org.osgi.framework.wiring.BundleWiring;

/**
 * Updating a capability, or the API bundle other capabilities are wired to, under load: the bundles wired to the
 * old revision are refreshed with it, no request fails, the capabilities that use the API (runs, Git smart HTTP)
 * keep serving, and no class of an old revision stays reachable. The deploy directory refreshes the same way.
 */
// requests under updates fail none: measured with no other test class loading the two cores
// (docs/decisions/runtime-and-build.md, "The integration tests")
@Isolated
@ResourceLock(InFrameworkRuntime.LOCK)
class ApiBundleRefreshTest {

    private static final Path BUNDLES = AtriumServer.ROOT.resolve("bundles");
    private static final String THREADS = "dev.atrium.threads";
    private static final String THREADS_API = "dev.atrium.threads.api";
    private static final String REPOS = "dev.atrium.repos";
    private static final String RUNS = "dev.atrium.runs";
    private static final int UPDATES = 12;

    @TempDir
    Path tmp;

    @Test
    void updatesOfThreadsItsApiAndReposUnderLoadFailNoRequestAndLeaveNoOldRevisionBehind() throws Exception {
        try (InFrameworkRuntime runtime = InFrameworkRuntime.start(tmp.resolve("runtime"))) {
            runtime.assertHealthy(60_000);
            Http operator = new Http(
                    runtime.base(),
                    Files.readString(runtime.data.resolve("operator.token")).trim());
            assertEquals(
                    201,
                    operator.post("/admin/users", Map.of("username", "refresh-check"))
                            .status());
            Http user = operator.as(operator.post("/admin/users/refresh-check/tokens", Map.of())
                    .get("token")
                    .asText());
            String thread = user.post("/api/spaces/refresh-check/threads", Map.of("title", "through updates"))
                    .get("thread")
                    .get("id")
                    .asText();
            assertEquals(
                    201,
                    user.post("/api/spaces/refresh-check/repos", Map.of("name", "kept", "visibility", "private"))
                            .status());
            GitClient git = new GitClient(tmp.resolve("home"), user.token());
            String remote = runtime.base() + "/git/refresh-check/kept.git";
            Path work = git.newWorkingCopy(tmp.resolve("work"), "README.md", "served through updates\n");
            git.ok(work, "push", "-q", remote, "main");

            // threads built to accept threads.api 2.0 and 2.1 (the 2.1 addition is a new interface it need not
            // implement), and threads.api 2.1: the minor addition the API bundle's updates carry
            byte[][] threadsBuilds = {
                variant(THREADS, "implA", acceptThreadsApi21()), variant(THREADS, "implB", acceptThreadsApi21())
            };
            byte[][] apiBuilds = {threadsApi21("apiA"), threadsApi21("apiB")};
            byte[][] reposBuilds = {variant(REPOS, "reposA", m -> m), variant(REPOS, "reposB", m -> m)};

            Map<String, WeakReference<Class<?>>> firstRevisions = new LinkedHashMap<>();
            firstRevisions.put(THREADS, firstRevision(runtime, THREADS, "dev.atrium.threads.internal.ThreadsService"));
            firstRevisions.put(THREADS_API, firstRevision(runtime, THREADS_API, "dev.atrium.threads.api.Threads"));
            firstRevisions.put(REPOS, firstRevision(runtime, REPOS, "dev.atrium.repos.internal.Repositories"));
            firstRevisions.put(
                    RUNS + " (refreshed)", firstRevision(runtime, RUNS, "dev.atrium.runs.internal.Dispatcher"));

            // threads.api 2.1 while threads still imports [2.0,2.1): threads cannot resolve after the refresh, so the
            // update is rolled back, and the rollback's refresh brings threads and runs back
            Http.Reply refused = operator.send(
                    "POST", "/admin/bundles/" + THREADS_API + "/update", apiBuilds[0], "application/java-archive");
            assertEquals(409, refused.status(), refused.body());
            assertTrue(refused.body().contains("rolled back") && refused.body().contains(THREADS), refused.body());
            runtime.assertHealthy(15_000);
            assertEquals(List.of(), runtime.problems(), "everything runs again after the rollback");
            assertEquals(200, user.get("/api/threads/" + thread + "/runs").status());

            Load load = new Load(runtime.base(), user.token(), thread, git, remote, tmp);
            load.start();
            Map<String, List<Long>> durations = new LinkedHashMap<>();
            List<String> leaked;
            try {
                update(load, operator, THREADS, threadsBuilds, durations);
                update(load, operator, THREADS_API, apiBuilds, durations);
                update(load, operator, REPOS, reposBuilds, durations);
                // before the deploy directory's update, whose refresh would re-wire whatever the updates left behind
                leaked = stillReachable(firstRevisions);
                load.phase = "the deploy directory's update of " + THREADS_API;
                // the deploy directory: a jar of the installed symbolic name and version replaces it in place
                Bundle api = runtime.bundle(THREADS_API);
                byte[] deployed = variant(
                        THREADS_API,
                        null,
                        m -> {
                            m.getMainAttributes()
                                    .putValue("Bundle-Version", api.getVersion().toString());
                            return m;
                        },
                        Map.of("deployed.txt", "dropped into the deploy directory".getBytes()),
                        apiBuilds[0]);
                BundleRevision before = api.adapt(BundleRevision.class);
                Path tmpJar = runtime.data.resolve("threads.api.jar.tmp");
                Files.write(tmpJar, deployed);
                long started = System.nanoTime();
                Files.move(tmpJar, runtime.data.resolve("deploy/threads.api.jar"), StandardCopyOption.ATOMIC_MOVE);
                awaitRewired(runtime, before, 20_000);
                durations.put("deploy directory (threads.api)", List.of((System.nanoTime() - started) / 1_000_000));
                runtime.assertHealthy(15_000);
                Thread.sleep(500);
                load.phase = "after the updates";
            } finally {
                load.stop();
            }
            assertEquals(
                    List.of(),
                    runtime.problems(),
                    "every bundle active and every component satisfied, runs and git.http included");
            assertEquals(200, user.get("/api/threads/" + thread + "/runs").status(), "runs serves");
            git.ok(tmp, "ls-remote", remote);

            // Git smart HTTP's servlet outlives an update of repos (its RepositoryRegistry reference is dynamic) and a
            // request waits for the new revision, so git calls during repos updates must not fail either.
            List<String> failures;
            synchronized (load.failures) {
                failures = new ArrayList<>(load.failures);
            }
            long gitWhileReposRestarts = failures.stream()
                    .filter(f -> f.startsWith("updates of " + REPOS + ": git "))
                    .count();
            System.out.println("API bundle refresh under load: " + load.requests.get() + " requests and "
                    + load.gitCalls.get()
                    + " git calls by 8 clients, " + failures.size() + " failed (" + gitWhileReposRestarts
                    + " of them git calls while repos restarted), longest request " + load.longest.get()
                    + " ms, longest hold " + load.longestHold.get() + " ms; update durations (ms) " + summary(durations)
                    + "; first revisions still reachable: " + leaked);
            assertEquals(
                    List.of(),
                    failures.subList(0, Math.min(20, failures.size())),
                    failures.size() + " requests failed");
            assertTrue(
                    load.requests.get() > 200 && load.gitCalls.get() > 20,
                    "the load ran: " + load.requests + ", git " + load.gitCalls);
            assertEquals(
                    List.of(), leaked, "classes of a first revision are still reachable: their class loaders leaked");
        }
    }

    private static void update(Load load, Http operator, String bsn, byte[][] builds, Map<String, List<Long>> durations)
            throws InterruptedException {
        load.phase = "updates of " + bsn;
        List<Long> took = new ArrayList<>();
        for (int i = 0; i < UPDATES; i++) {
            long started = System.nanoTime();
            Http.Reply r = operator.send(
                    "POST", "/admin/bundles/" + bsn + "/update", builds[i % 2], "application/java-archive");
            took.add((System.nanoTime() - started) / 1_000_000);
            assertEquals(200, r.status(), bsn + " update " + i + ": " + r.body());
            // the next update once every HTTP client has had an answer from this revision, not after a fixed pause
            load.served.awaitEverySince(System.nanoTime(), "after " + bsn + " update " + i);
        }
        durations.put(bsn, took);
    }

    private static String summary(Map<String, List<Long>> durations) {
        StringBuilder out = new StringBuilder();
        durations.forEach((name, took) -> {
            List<Long> sorted = new ArrayList<>(took);
            Collections.sort(sorted);
            out.append(name)
                    .append(": median ")
                    .append(sorted.get(sorted.size() / 2))
                    .append(", max ")
                    .append(sorted.get(sorted.size() - 1))
                    .append("; ");
        });
        return out.toString();
    }

    /** The bundles whose first-revision class is still reachable after full collections. */
    private static List<String> stillReachable(Map<String, WeakReference<Class<?>>> firstRevisions)
            throws InterruptedException {
        for (int i = 0; i < 100 && firstRevisions.values().stream().anyMatch(r -> r.get() != null); i++) {
            System.gc();
            Thread.sleep(100);
        }
        List<String> leaked = new ArrayList<>();
        firstRevisions.forEach((name, ref) -> {
            if (ref.get() != null) {
                leaked.add(name);
            }
        });
        return leaked;
    }

    private static WeakReference<Class<?>> firstRevision(InFrameworkRuntime runtime, String bsn, String className)
            throws Exception {
        return new WeakReference<>(runtime.bundle(bsn).loadClass(className));
    }

    /** Waits until runs is wired to a threads.api revision other than {@code old}, i.e. the deploy directory refreshed it. */
    private static void awaitRewired(InFrameworkRuntime runtime, BundleRevision old, long millis)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + millis;
        String wiredTo = null;
        while (System.currentTimeMillis() < deadline) {
            Bundle runs = runtime.bundle(RUNS);
            BundleWiring wiring = runs.adapt(BundleWiring.class);
            wiredTo = null;
            if (wiring != null && runs.getState() == Bundle.ACTIVE) {
                for (BundleWire w : wiring.getRequiredWires("osgi.wiring.package")) {
                    if (w.getProvider().getSymbolicName().equals(THREADS_API)) {
                        wiredTo = w.getProvider() == old ? "the old revision" : "a new revision";
                    }
                }
            }
            if ("a new revision".equals(wiredTo) && runtime.bundle(THREADS_API).adapt(BundleRevision.class) != old) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("after the deploy directory's update runs is wired to " + wiredTo + " of threads.api");
    }

    /** The threads build, importing threads.api up to (excluding) 2.2 instead of 2.1. */
    private static UnaryOperator<Manifest> acceptThreadsApi21() {
        return m -> {
            Attributes a = m.getMainAttributes();
            String imports = a.getValue("Import-Package");
            String widened = imports.replace(
                    "dev.atrium.threads.api;version=\"[2.0,2.1)\"", "dev.atrium.threads.api;version=\"[2.0,2.2)\"");
            assertTrue(!widened.equals(imports), "threads imports threads.api as " + imports);
            a.putValue("Import-Package", widened);
            return m;
        };
    }

    /** threads.api with a minor addition: one more interface, the package exported as 2.1.0. */
    private byte[] threadsApi21(String qualifier) throws IOException {
        Path src = tmp.resolve("api21/src/dev/atrium/threads/api/ThreadsRevisionProbe.java");
        Path classes = tmp.resolve("api21/classes");
        if (!Files.exists(classes.resolve("dev/atrium/threads/api/ThreadsRevisionProbe.class"))) {
            Files.createDirectories(src.getParent());
            Files.writeString(
                    src,
                    "package dev.atrium.threads.api;\n/** Added in 2.1. */\npublic interface ThreadsRevisionProbe {\n"
                            + "    String revision();\n}\n");
            JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
            assertNotNull(javac, "a JDK compiler");
            assertEquals(0, javac.run(null, null, null, "--release", "17", "-d", classes.toString(), src.toString()));
        }
        byte[] probe = Files.readAllBytes(classes.resolve("dev/atrium/threads/api/ThreadsRevisionProbe.class"));
        return variant(
                THREADS_API,
                qualifier,
                m -> {
                    Attributes a = m.getMainAttributes();
                    String exports = a.getValue("Export-Package");
                    String bumped = exports.replace(
                            "dev.atrium.threads.api;version=\"2.0.0\"", "dev.atrium.threads.api;version=\"2.1.0\"");
                    assertTrue(!bumped.equals(exports), "threads.api exports " + exports);
                    a.putValue("Export-Package", bumped);
                    return m;
                },
                Map.of("dev/atrium/threads/api/ThreadsRevisionProbe.class", probe),
                null);
    }

    private static byte[] variant(String bsn, String qualifier, UnaryOperator<Manifest> edit) throws IOException {
        return variant(bsn, qualifier, edit, Map.of(), null);
    }

    /** A copy of the bundle's built jar (or of {@code base}) with Bundle-Version 0.1.0.qualifier, an edited manifest and extra entries. */
    private static byte[] variant(
            String bsn, String qualifier, UnaryOperator<Manifest> edit, Map<String, byte[]> extra, byte[] base)
            throws IOException {
        String module = bsn.substring("dev.atrium.".length());
        byte[] original = base != null
                ? base
                : Files.readAllBytes(BUNDLES.resolve(module).resolve("target/" + module + "-0.1.0-SNAPSHOT.jar"));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JarInputStream in = new JarInputStream(new java.io.ByteArrayInputStream(original))) {
            Manifest manifest = new Manifest(in.getManifest());
            if (qualifier != null) {
                manifest.getMainAttributes().putValue("Bundle-Version", "0.1.0." + qualifier);
            }
            manifest = edit.apply(manifest);
            try (JarOutputStream out = new JarOutputStream(bytes, manifest)) {
                for (JarEntry e = in.getNextJarEntry(); e != null; e = in.getNextJarEntry()) {
                    if (extra.containsKey(e.getName())) {
                        continue;
                    }
                    out.putNextEntry(new JarEntry(e.getName()));
                    in.transferTo(out);
                    out.closeEntry();
                }
                for (Map.Entry<String, byte[]> e : extra.entrySet()) {
                    out.putNextEntry(new JarEntry(e.getKey()));
                    out.write(e.getValue());
                    out.closeEntry();
                }
            }
        }
        return bytes.toByteArray();
    }

    /** Eight clients on threads, runs and repos routes, two of them on Git smart HTTP (ls-remote, clone). */
    private static final class Load {
        final AtomicLong requests = new AtomicLong();
        final AtomicLong gitCalls = new AtomicLong();
        final AtomicLong longest = new AtomicLong();
        final AtomicLong longestHold = new AtomicLong();
        final List<String> failures = Collections.synchronizedList(new ArrayList<>());
        /** The six HTTP clients' answers (the two git clients' calls take longer than an update's pause ever did). */
        final ClientsServed served = new ClientsServed(6);
        /** What is being updated now, named in each failure. */
        volatile String phase = "before the updates";

        private final AtomicBoolean running = new AtomicBoolean(true);
        private final List<Thread> clients = new ArrayList<>();

        Load(String base, String token, String thread, GitClient git, String remote, Path tmp) {
            HttpClient client = HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(5))
                    .build();
            List<String> paths = List.of(
                    "/api/threads/" + thread,
                    "/api/threads/" + thread + "/runs",
                    "/api/spaces/refresh-check/repos",
                    "/api/threads/" + thread + "/messages",
                    "/api/spaces/refresh-check/threads",
                    "/api/threads/" + thread + "/history");
            for (int i = 0; i < 8; i++) {
                int n = i;
                Runnable work = switch (n) {
                    case 6 -> () -> git("ls-remote", git, tmp, "ls-remote", remote);
                    case 7 ->
                        () -> {
                            Path clone = tmp.resolve("clone-" + gitCalls.get());
                            git("clone", git, tmp, "clone", "-q", remote, clone.toString());
                        };
                    default -> () -> get(client, base + paths.get(n), token);
                };
                clients.add(new Thread(
                        () -> {
                            while (running.get()) {
                                long started = System.nanoTime();
                                work.run();
                                longest.accumulateAndGet((System.nanoTime() - started) / 1_000_000, Math::max);
                                if (n < 6) {
                                    served.finished(n, started);
                                }
                            }
                        },
                        "load-" + i));
            }
        }

        private void get(HttpClient client, String url, String token) {
            try {
                HttpResponse<String> r = client.send(
                        HttpRequest.newBuilder(URI.create(url))
                                .header("Authorization", "Bearer " + token)
                                .timeout(Duration.ofSeconds(30))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                requests.incrementAndGet();
                if (r.statusCode() / 100 != 2) {
                    failures.add(phase + ": " + r.statusCode() + " " + url + " " + r.body());
                }
                r.headers()
                        .firstValue("X-Atrium-Held-Ms")
                        .map(Long::parseLong)
                        .ifPresent(h -> longestHold.accumulateAndGet(h, Math::max));
            } catch (IOException | InterruptedException e) {
                failures.add(phase + ": " + e + " " + url);
            }
        }

        private void git(String what, GitClient git, Path dir, String... args) {
            GitClient.Result r = git.run(dir, args);
            gitCalls.incrementAndGet();
            if (r.exit() != 0) {
                failures.add(phase + ": git " + what + " exited " + r.exit() + ": "
                        + r.both().strip());
            }
        }

        void start() throws InterruptedException {
            long started = System.nanoTime();
            clients.forEach(Thread::start);
            try {
                served.awaitEverySince(started, "before the first update");
            } catch (AssertionError e) {
                stop();
                throw e;
            }
        }

        void stop() throws InterruptedException {
            running.set(false);
            for (Thread t : clients) {
                t.join(60_000);
            }
        }
    }
}
