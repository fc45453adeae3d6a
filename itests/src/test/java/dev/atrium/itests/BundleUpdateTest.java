package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/** Bundles are upgraded at run time without a failed request, and a broken upgrade is rolled back. */
// requests under updates fail none: measured with no other test class loading the two cores
// (docs/decisions/runtime-and-build.md, "The integration tests")
@Isolated
@SharedServer
class BundleUpdateTest {

    static final Path MEMORIES = AtriumServer.ROOT.resolve("bundles/memories/target/memories-0.1.0-SNAPSHOT.jar");
    static final String BSN = "dev.atrium.memories";

    /** A copy of the memories jar with another Bundle-Version and, optionally, one entry rewritten. */
    static byte[] variant(String qualifier, String entry, UnaryOperator<String> rewrite) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JarInputStream in = new JarInputStream(Files.newInputStream(MEMORIES))) {
            Manifest manifest = new Manifest(in.getManifest());
            manifest.getMainAttributes().putValue("Bundle-Version", "0.1.0." + qualifier);
            try (JarOutputStream out = new JarOutputStream(bytes, manifest)) {
                for (JarEntry e = in.getNextJarEntry(); e != null; e = in.getNextJarEntry()) {
                    out.putNextEntry(new JarEntry(e.getName()));
                    byte[] content = in.readAllBytes();
                    if (e.getName().equals(entry)) {
                        content = rewrite.apply(new String(content, StandardCharsets.UTF_8))
                                .getBytes(StandardCharsets.UTF_8);
                    }
                    out.write(content);
                    out.closeEntry();
                }
            }
        }
        return bytes.toByteArray();
    }

    static Http.Reply upload(AtriumServer server, byte[] jar) {
        return server.operator().send("POST", "/admin/bundles/" + BSN + "/update", jar, "application/java-archive");
    }

    @Test
    void twentyUpdatesUnderLoadFailNoRequestAndServeBothVersions(AtriumServer server) throws Exception {
        User u = server.newUser();
        String space = "/api/spaces/" + u.defaultSpaceId();
        String memory = u.http()
                .post(space + "/memories", Map.of("content", "served through upgrades"))
                .get("memory")
                .get("id")
                .asText();
        String token = u.http()
                .get("/api/me")
                .raw()
                .request()
                .headers()
                .firstValue("Authorization")
                .orElseThrow();
        byte[] a = variant("buildA", null, s -> s);
        byte[] b = variant("buildB", null, s -> s);

        HttpClient client =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong requests = new AtomicLong();
        AtomicLong longest = new AtomicLong();
        AtomicLong longestHold = new AtomicLong();
        List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        Set<String> servedBy = ConcurrentHashMap.newKeySet();
        List<Thread> clients = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String path = i % 2 == 0 ? space + "/memories" : "/api/memories/" + memory;
            Thread t = new Thread(
                    () -> {
                        while (running.get()) {
                            long started = System.nanoTime();
                            try {
                                HttpResponse<String> r = client.send(
                                        HttpRequest.newBuilder(URI.create(server.base() + path))
                                                .header("Authorization", token)
                                                .timeout(Duration.ofSeconds(30))
                                                .build(),
                                        HttpResponse.BodyHandlers.ofString());
                                requests.incrementAndGet();
                                if (r.statusCode() / 100 != 2) {
                                    failures.add(r.statusCode() + " " + path + " " + r.body());
                                }
                                r.headers().firstValue("X-Atrium-Bundle").ifPresent(servedBy::add);
                                r.headers()
                                        .firstValue("X-Atrium-Held-Ms")
                                        .map(Long::parseLong)
                                        .ifPresent(h -> longestHold.accumulateAndGet(h, Math::max));
                            } catch (IOException | InterruptedException e) {
                                failures.add(e + " " + path);
                            }
                            longest.accumulateAndGet((System.nanoTime() - started) / 1_000_000, Math::max);
                        }
                    },
                    "load-" + i);
            t.start();
            clients.add(t);
        }
        try {
            Thread.sleep(500);
            for (int i = 0; i < 20; i++) {
                Http.Reply r = upload(server, i % 2 == 0 ? a : b);
                assertEquals(200, r.status(), "update " + i + ": " + r.body());
                Thread.sleep(150);
            }
            Thread.sleep(300);
        } finally {
            running.set(false);
            for (Thread t : clients) {
                t.join(30_000);
            }
            assertEquals(200, upload(server, Files.readAllBytes(MEMORIES)).status(), "restore the original build");
        }
        System.out.println("bundle updates under load: 20 updates, " + requests.get() + " requests by 8 clients, "
                + failures.size() + " failed, longest request " + longest.get() + " ms, longest hold "
                + longestHold.get() + " ms, served by " + servedBy);
        assertEquals(
                List.of(), failures.subList(0, Math.min(20, failures.size())), failures.size() + " requests failed");
        assertTrue(
                servedBy.contains(BSN + "/0.1.0.buildA") && servedBy.contains(BSN + "/0.1.0.buildB"),
                "both builds served: " + servedBy);
        assertTrue(requests.get() > 100, "the load ran: " + requests.get());
    }

    @Test
    void aBrokenUpdateIsRolledBackAndTheCliSaysWhy(AtriumServer server) throws Exception {
        User u = server.newUser();
        String space = "/api/spaces/" + u.defaultSpaceId();
        u.http().post(space + "/memories", Map.of("content", "still here"));
        byte[] broken = variant(
                "broken",
                "OSGI-INF/dev.atrium.memories.internal.MemoryStore.xml",
                xml -> xml.replace(
                                "class=\"dev.atrium.memories.internal.MemoryStore\"",
                                "class=\"dev.atrium.memories.internal.NoSuchStore\"")
                        .replace(
                                "name=\"dev.atrium.memories.internal.MemoryStore\"",
                                "name=\"dev.atrium.memories.internal.MemoryStore\" immediate=\"true\""));
        String before = FeatureSwitchTest.bundle(server, BSN).get("version").asText();
        Path jar = Files.createTempFile("memories-broken", ".jar");
        try {
            Files.write(jar, broken);
            Commands.Result r = Commands.atrium(
                    "bundle", "update", jar.toString(), "--url", server.base(), "--data", server.data.toString());
            assertEquals(1, r.exit(), r.stdout());
            assertTrue(r.stderr().contains("rolled back") && r.stderr().contains("failed to activate"), r.stderr());
        } finally {
            Files.delete(jar);
        }
        assertEquals(
                before, FeatureSwitchTest.bundle(server, BSN).get("version").asText());
        Http.Reply served = FeatureSwitchTest.await(u.http(), space + "/memories", 200);
        assertEquals("still here", served.get("memories").get(0).get("content").asText());
        assertEquals(
                BSN + "/" + before,
                served.raw().headers().firstValue("X-Atrium-Bundle").orElse(""));
    }

    @Test
    void theCliRefusesWhatIsNotABundleAndSaysWhenNoServerAnswers(AtriumServer server) throws Exception {
        Path notAJar = Files.createTempFile("not-a-bundle", ".jar");
        try {
            Files.writeString(notAJar, "plain text");
            Commands.Result bad = Commands.atrium(
                    "bundle", "update", notAJar.toString(), "--url", server.base(), "--data", server.data.toString());
            assertEquals(1, bad.exit());
            assertTrue(
                    bad.stderr().contains("cannot read") || bad.stderr().contains("not an OSGi bundle"), bad.stderr());
        } finally {
            Files.delete(notAJar);
        }
        Commands.Result down = Commands.atrium(
                "bundle",
                "update",
                MEMORIES.toString(),
                "--url",
                "http://127.0.0.1:" + AtriumServer.freePort(),
                "--data",
                server.data.toString());
        assertEquals(1, down.exit());
        assertTrue(down.stderr().contains("no server answers"), down.stderr());
        Commands.Result ok = Commands.atrium(
                "bundle", "update", MEMORIES.toString(), "--url", server.base(), "--data", server.data.toString());
        assertEquals(0, ok.exit(), ok.stderr());
        assertTrue(ok.lastLine().startsWith("bundle dev.atrium.memories updated from "), ok.stdout());
    }

    @Test
    void updatesThatAreNotBundlesOrNotThatBundleAreRefused(AtriumServer server) throws Exception {
        BadInputTest.assertSpecError(upload(server, "not a jar".getBytes(StandardCharsets.UTF_8)), 400, "BAD_REQUEST");
        try (InputStream other = Files.newInputStream(
                Path.of(System.getProperty("atrium.testBundles"), "org.osgi.util.converter-1.0.9.jar"))) {
            Http.Reply wrong = upload(server, other.readAllBytes());
            BadInputTest.assertSpecError(wrong, 400, "BAD_REQUEST");
            assertTrue(wrong.body().contains("org.osgi.util.converter"), wrong.body());
        }
        Http.Reply kernel = server.operator()
                .send(
                        "POST",
                        "/admin/bundles/dev.atrium.kernel/update",
                        variant("k", null, s -> s),
                        "application/java-archive");
        BadInputTest.assertSpecError(kernel, 400, "BAD_REQUEST");
        // the kernel's own jars declare the atrium.kernel capability: refused, replaced only by a restart
        for (String[] part : new String[][] {{"kernel", "dev.atrium.kernel"}, {"database", "dev.atrium.database"}}) {
            byte[] jar = Files.readAllBytes(
                    AtriumServer.ROOT.resolve("bundles/" + part[0] + "/target/" + part[0] + "-0.1.0-SNAPSHOT.jar"));
            Http.Reply refused = server.operator()
                    .send("POST", "/admin/bundles/" + part[1] + "/update", jar, "application/java-archive");
            BadInputTest.assertSpecError(refused, 409, "CONFLICT");
            assertTrue(refused.body().contains("part of the kernel"), refused.body());
        }
        BadInputTest.assertSpecError(
                server.newUser()
                        .http()
                        .send(
                                "POST",
                                "/admin/bundles/" + BSN + "/update",
                                Files.readAllBytes(MEMORIES),
                                "application/java-archive"),
                401,
                "UNAUTHORIZED");
    }
}
