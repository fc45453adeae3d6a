package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Updates that are refused, or fail and are rolled back, with the CLI's messages. Unlike {@link BundleUpdateTest}'s
 * updates under load these count no failed requests, so they need not run alone: on the shared server's lane, beside the
 * other, they take none of the suite's time that runs nothing else (a rollback waits out the 15 s verification).
 */
@SharedServer
class BundleUpdateRefusalsTest {

    @Test
    void aBrokenUpdateIsRolledBackAndTheCliSaysWhy(AtriumServer server) throws Exception {
        User u = server.newUser();
        String space = "/api/spaces/" + u.defaultSpaceId();
        u.http().post(space + "/memories", Map.of("content", "still here"));
        byte[] broken = BundleUpdateTest.variant(
                "broken",
                "OSGI-INF/dev.atrium.memories.internal.MemoryStore.xml",
                xml -> xml.replace(
                                "class=\"dev.atrium.memories.internal.MemoryStore\"",
                                "class=\"dev.atrium.memories.internal.NoSuchStore\"")
                        .replace(
                                "name=\"dev.atrium.memories.internal.MemoryStore\"",
                                "name=\"dev.atrium.memories.internal.MemoryStore\" immediate=\"true\""));
        String before = FeatureSwitchTest.bundle(server, BundleUpdateTest.BSN)
                .get("version")
                .asText();
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
                before,
                FeatureSwitchTest.bundle(server, BundleUpdateTest.BSN)
                        .get("version")
                        .asText());
        // the update is a job that failed, saying why and that it was rolled back
        com.fasterxml.jackson.databind.JsonNode job =
                JobsApiTest.newest(server, "bundle-update", BundleUpdateTest.BSN + " to 0.1.0.broken");
        assertTrue(job != null, "the update is listed among the jobs");
        assertEquals("failed", job.path("state").asText(), job.toString());
        assertTrue(
                job.path("reason").asText().contains("rolled back to " + before)
                        && job.path("reason").asText().contains("failed to activate"),
                job.toString());
        assertEquals("rolled back to " + before, job.path("step").asText(), job.toString());
        assertTrue(job.path("ended_at").isTextual(), job.toString());
        Http.Reply served = FeatureSwitchTest.await(u.http(), space + "/memories", 200);
        assertEquals("still here", served.get("memories").get(0).get("content").asText());
        assertEquals(
                BundleUpdateTest.BSN + "/" + before,
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
                BundleUpdateTest.MEMORIES.toString(),
                "--url",
                "http://127.0.0.1:" + AtriumServer.freePort(),
                "--data",
                server.data.toString());
        assertEquals(1, down.exit());
        assertTrue(down.stderr().contains("no server answers"), down.stderr());
        Commands.Result ok = Commands.atrium(
                "bundle",
                "update",
                BundleUpdateTest.MEMORIES.toString(),
                "--url",
                server.base(),
                "--data",
                server.data.toString());
        assertEquals(0, ok.exit(), ok.stderr());
        assertTrue(ok.lastLine().startsWith("bundle dev.atrium.memories updated from "), ok.stdout());
    }

    @Test
    void updatesThatAreNotBundlesOrNotThatBundleAreRefused(AtriumServer server) throws Exception {
        BadInputTest.assertSpecError(
                BundleUpdateTest.upload(server, "not a jar".getBytes(StandardCharsets.UTF_8)), 400, "BAD_REQUEST");
        try (InputStream other = Files.newInputStream(
                Path.of(System.getProperty("atrium.testBundles"), "org.osgi.util.converter-1.0.9.jar"))) {
            Http.Reply wrong = BundleUpdateTest.upload(server, other.readAllBytes());
            BadInputTest.assertSpecError(wrong, 400, "BAD_REQUEST");
            assertTrue(wrong.body().contains("org.osgi.util.converter"), wrong.body());
        }
        Http.Reply kernel = server.operator()
                .send(
                        "POST",
                        "/admin/bundles/dev.atrium.kernel/update",
                        BundleUpdateTest.variant("k", null, s -> s),
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
                                "/admin/bundles/" + BundleUpdateTest.BSN + "/update",
                                Files.readAllBytes(BundleUpdateTest.MEMORIES),
                                "application/java-archive"),
                401,
                "UNAUTHORIZED");
    }
}
