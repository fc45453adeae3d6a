package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The plugin promise: {@code examples/resource-provider-example}, built by its own Maven build against only the
 * published SPI (resource.api, the blob.api its signatures name, and the SPI's contract tests, which its build runs),
 * dropped into a running server's {@code <data>/deploy/}, serves a resource type backend at once;
 * replacing its jar upgrades it in place (data kept, new version visible); removing it makes its resources answer 503
 * naming it (nothing deleted); putting it back makes them work again. Other routes fail no request meanwhile.
 */
// requests under updates fail none: measured with no other test class loading the two cores
// (docs/decisions/runtime-and-build.md, "The integration tests")
@Isolated
@SharedServer
@Timeout(600)
class ResourcePluginTest {

    @Test
    void aThirdPartyProviderDroppedIntoDeployWorksUpgradesInPlaceAnswers503WhenRemovedAndWorksWhenBack(
            AtriumServer server) throws Exception {
        installSpi();
        // the two builds at once: the class runs alone, and each mvn keeps about one core busy
        java.util.concurrent.FutureTask<Path> upgrade =
                new java.util.concurrent.FutureTask<>(() -> build("1.1.0", false));
        new Thread(upgrade, "example-build-1.1.0").start();
        Path v1 = build("1.0.0", true);
        Path v2;
        try {
            v2 = upgrade.get(300, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof Exception x ? x : new IllegalStateException(e.getCause());
        }
        User u = server.newUser();
        Path deployed = server.data.resolve("deploy").resolve("files-kv.jar");

        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger requests = new AtomicInteger();
        List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        String kvOnPostgres = ResourcesTest.create(u, "steady-kv", "kv");
        Thread load = new Thread(
                () -> {
                    while (running.get()) {
                        for (String path : List.of("/api/spaces", "/api/resources", "/api/resources/" + kvOnPostgres)) {
                            Http.Reply r = u.http().get(path);
                            requests.incrementAndGet();
                            if (r.status() != 200) {
                                failures.add(path + " " + r.status() + " " + r.body());
                            }
                        }
                    }
                },
                "other-routes-load");
        load.start();
        try {
            Files.copy(v1, deployed, StandardCopyOption.REPLACE_EXISTING);
            await(
                    () -> u.http().get("/api/resources/providers"),
                    r -> r.body().contains("\"backend\":\"files\""),
                    "the plugin registers");
            // a plugin never silently becomes the default backend of its type
            Http.Reply dflt = u.http().post("/api/resources", Map.of("name", "default-kv", "type", "kv"));
            assertEquals("postgres", dflt.get("resource").get("backend").asText(), dflt.body());

            Http.Reply created =
                    u.http().post("/api/resources", Map.of("name", "plugin-kv", "type", "kv", "backend", "files"));
            assertEquals(201, created.status(), created.body());
            String id = created.get("resource").get("id").asText();
            String entry = "/api/resources/" + id + "/kv/entries/greeting";
            assertEquals(200, ResourcesTest.putBytes(u.http(), entry, "hello").status());
            assertEquals("hello", u.http().get(entry).body());
            assertEquals("1.0.0", version(u, id));
            // the same kv contract as the server's own PostgreSQL backend
            ResourcesTest.kvContract(
                    u.http(),
                    u.http()
                            .post("/api/resources", Map.of("name", "plugin-contract", "type", "kv", "backend", "files"))
                            .get("resource")
                            .get("id")
                            .asText());

            // update in place: the same bundle, a new version; the data stays, the new version answers
            Path next = server.data.resolve("files-kv.jar.tmp");
            Files.copy(v2, next, StandardCopyOption.REPLACE_EXISTING);
            Files.move(next, deployed, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            await(
                    () -> u.http().get("/api/resources/" + id + "/connection"),
                    r -> r.status() == 200 && r.body().contains("1.1.0"),
                    "the upgraded plugin serves");
            assertEquals("hello", u.http().get(entry).body());

            // removed: 503 naming the provider, nothing deleted. Awaited on the resource's status, not on a 503: the
            // upgrade's refresh restarts the plugin once more after it first served, and that moment answers 503 too
            Files.delete(deployed);
            await(
                    () -> u.http().get("/api/resources/" + id),
                    r -> r.status() == 200 && r.body().contains("\"provider_missing\""),
                    "the resource says its provider is missing");
            Http.Reply gone = u.http().get(entry);
            BadInputTest.assertSpecError(gone, 503, "SERVICE_UNAVAILABLE");
            assertTrue(gone.json().get("error").get("message").asText().contains("kv/files"), gone.body());

            // back: works again, with its data
            Files.copy(v2, deployed, StandardCopyOption.REPLACE_EXISTING);
            Http.Reply back = await(() -> u.http().get(entry), r -> r.status() == 200, "the resource works again");
            assertEquals("hello", back.body());
            assertEquals(200, u.http().delete("/api/resources/" + id).status());

            counterOfItsOwnHasRoutesOfItsOwnAuthorisedByTheCore(server, u, kvOnPostgres);
        } finally {
            running.set(false);
            load.join(30_000);
            Files.deleteIfExists(deployed);
        }
        assertTrue(requests.get() > 0);
        assertEquals(
                List.of(),
                failures,
                "requests to other routes failed during install, upgrade and removal of the plugin");
    }

    /**
     * A type of the plugin's own ({@code counter}) with routes of its own: the core authenticates and authorises them
     * as it does its own (a Principal's token, a resource token and its permission; another's resource is missing).
     */
    private static void counterOfItsOwnHasRoutesOfItsOwnAuthorisedByTheCore(AtriumServer server, User u, String kv)
            throws Exception {
        Http.Reply created =
                u.http().post("/api/resources", Map.of("name", "visits", "type", "counter", "backend", "files"));
        assertEquals(201, created.status(), created.body());
        String counter = "/api/resources/" + created.get("resource").get("id").asText() + "/counter";
        Http.Reply first = await(() -> u.http().get(counter), r -> r.status() == 200, "the counter's routes serve");
        assertEquals(0, first.get("value").asLong());
        assertEquals(
                1, u.http().post(counter + "/increment", Map.of()).get("value").asLong());
        // increments at once from several threads: each counts, none fails
        List<Thread> threads = new ArrayList<>();
        List<Integer> statuses = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 8; i++) {
            Thread t = new Thread(() ->
                    statuses.add(u.http().post(counter + "/increment", Map.of()).status()));
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(30_000);
        }
        assertEquals(java.util.Collections.nCopies(8, 200), statuses);
        assertEquals(
                10, u.http().post(counter + "/increment", Map.of()).get("value").asLong());

        BadInputTest.assertSpecError(server.newUser().http().get(counter), 404, "NOT_FOUND");
        BadInputTest.assertSpecError(server.anonymous().get(counter), 401, "UNAUTHORIZED");
        BadInputTest.assertSpecError(u.http().get("/api/resources/" + kv + "/counter"), 404, "NOT_FOUND");

        String reader = u.http()
                .post(
                        "/api/resources/" + created.get("resource").get("id").asText() + "/tokens",
                        Map.of("name", "reader", "permission", "read"))
                .get("token")
                .get("token")
                .asText();
        HttpResponse<String> read = ResourcesTest.withToken(server, "GET", counter, reader, null);
        assertEquals(200, read.statusCode(), read.body());
        assertTrue(read.body().contains("\"value\":10"), read.body());
        HttpResponse<String> write = ResourcesTest.withToken(server, "POST", counter + "/increment", reader, null);
        assertEquals(403, write.statusCode(), write.body());
        assertEquals(10, u.http().get(counter).get("value").asLong());
        // a write the token of a resource of another type may not make: that resource is missing here, not forbidden
        String kvReader = u.http()
                .post("/api/resources/" + kv + "/tokens", Map.of("name", "kv-reader", "permission", "read"))
                .get("token")
                .get("token")
                .asText();
        HttpResponse<String> otherType =
                ResourcesTest.withToken(server, "POST", "/api/resources/" + kv + "/counter/increment", kvReader, null);
        assertEquals(404, otherType.statusCode(), otherType.body());
    }

    private static String version(User u, String id) {
        return u.http()
                .get("/api/resources/" + id + "/connection")
                .get("connection")
                .get("connection")
                .get("provider_version")
                .asText();
    }

    private static Http.Reply await(
            java.util.function.Supplier<Http.Reply> call, Predicate<Http.Reply> done, String what)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + 30_000;
        Http.Reply r = call.get();
        while (!done.test(r) && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
            r = call.get();
        }
        assertTrue(done.test(r), what + " in time: " + r.status() + " " + r.body());
        return r;
    }

    /**
     * Installs the jars of this build that make the published SPI into the local Maven repository, with POMs of their
     * own that name no parent: resource.api, its contract tests (classifier {@code tests}), blob.api and kernel.api.
     */
    static void installSpi() throws Exception {
        Path example = AtriumServer.ROOT.resolve("examples/resource-provider-example");
        Path api = AtriumServer.ROOT.resolve("bundles/resource.api/target/resource.api-0.1.0-SNAPSHOT.jar");
        Path contract = AtriumServer.ROOT.resolve("bundles/resource.api/target/resource.api-0.1.0-SNAPSHOT-tests.jar");
        Path blobs = AtriumServer.ROOT.resolve("bundles/blob.api/target/blob.api-0.1.0-SNAPSHOT.jar");
        Path kernel = AtriumServer.ROOT.resolve("bundles/kernel.api/target/kernel.api-0.1.0-SNAPSHOT.jar");
        for (Path jar : List.of(api, contract, blobs, kernel)) {
            assertTrue(Files.isRegularFile(jar), "the main build made " + jar);
        }
        mvn(
                AtriumServer.ROOT,
                "install:install-file",
                "-Dfile=" + blobs,
                "-DpomFile=" + example.resolve("blob-api.pom"));
        mvn(
                AtriumServer.ROOT,
                "install:install-file",
                "-Dfile=" + kernel,
                "-DpomFile=" + example.resolve("kernel-api.pom"));
        mvn(
                AtriumServer.ROOT,
                "install:install-file",
                "-Dfile=" + api,
                "-DpomFile=" + example.resolve("resource-api.pom"));
        mvn(
                AtriumServer.ROOT,
                "install:install-file",
                "-Dfile=" + contract,
                "-DpomFile=" + example.resolve("resource-api.pom"),
                "-Dclassifier=tests");
    }

    /**
     * Builds the example as its author would: its own {@code mvn package}, in a copy of its directory, against the SPI
     * {@link #installSpi} installed. With {@code tests}, the build runs the example's tests: the SPI's kv contract on the
     * example's backend.
     */
    static Path build(String version, boolean tests) throws Exception {
        Path example = AtriumServer.ROOT.resolve("examples/resource-provider-example");
        Path copy = Files.createTempDirectory("atrium-example-");
        copyTree(example, copy);
        if (tests) {
            mvn(copy, "package", "-Drevision=" + version);
            String report = Files.readString(
                    copy.resolve("target/surefire-reports/com.example.atrium.fileskv.FilesKvTest.txt"));
            assertTrue(report.matches("(?s).*Tests run: [1-9]\\d*, Failures: 0, Errors: 0, Skipped: 0.*"), report);
        } else {
            mvn(copy, "package", "-DskipTests", "-Drevision=" + version);
        }
        Path jar = copy.resolve("target/files-kv-" + version + ".jar");
        assertTrue(Files.isRegularFile(jar), "the example's build made " + jar);
        Path out = Files.createTempFile("files-kv-" + version + "-", ".jar");
        out.toFile().deleteOnExit();
        Files.copy(jar, out, StandardCopyOption.REPLACE_EXISTING);
        AtriumServer.deleteTree(copy.toFile());
        return out;
    }

    private static void mvn(Path dir, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("mvn", "-B", "-q"));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        // C1 alone, as the project's own build (.mvn/jvm.config): a short mvn run spent half its CPU in C2
        pb.environment().merge("MAVEN_OPTS", "-XX:TieredStopAtLevel=1", (a, b) -> a + " " + b);
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), "mvn did not finish");
        assertEquals(
                0,
                p.exitValue(),
                String.join(" ", command) + " in " + dir + ":\n" + new String(out, StandardCharsets.UTF_8));
    }

    private static void copyTree(Path from, Path to) throws Exception {
        try (var walk = Files.walk(from)) {
            for (Path p : walk.toList()) {
                Path rel = from.relativize(p);
                if (rel.toString().startsWith("target")) {
                    continue;
                }
                Path dest = to.resolve(rel.toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(dest);
                } else {
                    Files.copy(p, dest, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }
}
