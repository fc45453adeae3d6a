package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
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

/**
 * Bundles are upgraded at run time without a failed request. Refused and rolled-back updates:
 * {@link BundleUpdateRefusalsTest}.
 */
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
        ClientsServed served = new ClientsServed(8);
        long loadStarted = System.nanoTime();
        for (int i = 0; i < 8; i++) {
            int index = i;
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
                            served.finished(index, started);
                        }
                    },
                    "load-" + i);
            t.start();
            clients.add(t);
        }
        try {
            served.awaitEverySince(loadStarted, "before the first update");
            for (int i = 0; i < 20; i++) {
                Http.Reply r = upload(server, i % 2 == 0 ? a : b);
                assertEquals(200, r.status(), "update " + i + ": " + r.body());
                // the next update once every client has had an answer from this revision, not after a fixed pause
                served.awaitEverySince(System.nanoTime(), "after update " + i);
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
    void anUpdateIsAJobThatEndsSucceededWithEveryStepDone(AtriumServer server) throws Exception {
        String before = FeatureSwitchTest.bundle(server, BSN).get("version").asText();
        try {
            Http.Reply r = upload(server, variant("jobs", null, s -> s));
            assertEquals(200, r.status(), r.body());
            JsonNode job = JobsApiTest.newest(server, "bundle-update", BSN + " to 0.1.0.jobs");
            assertTrue(job != null, "the update is listed among the jobs");
            assertEquals("succeeded", job.path("state").asText(), job.toString());
            assertEquals(5, job.path("total").asLong(), job.toString());
            assertEquals(5, job.path("done").asLong(), job.toString());
            assertEquals(
                    "updated from " + before + " to 0.1.0.jobs",
                    job.path("summary").asText(),
                    job.toString());
            assertEquals("dev.atrium.operations", job.path("bundle").asText(), job.toString());
            assertEquals(
                    job,
                    server.operator()
                            .get("/admin/jobs/" + job.path("id").asText())
                            .get("job"));
        } finally {
            assertEquals(200, upload(server, Files.readAllBytes(MEMORIES)).status(), "restore the original build");
        }
    }
}
