package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Settings reach components only through ConfigAdmin (bundles/config): the documented ATRIUM_* variables still
 * configure the server, a blank or malformed one leaves the component's default, and the operator's configuration
 * (here a file in the deploy directory) wins over the environment for the properties it sets, and gives way to it
 * again when removed.
 */
class ConfigurationTest {

    private static final String PUBLIC = "https://configured.example.test";
    private static final String GIT = "/git/nobody/nothing.git/git-upload-pack";
    private static final String GIT_TYPE = "application/x-git-upload-pack-request";
    private static AtriumServer server;

    @BeforeAll
    static void launch() throws Exception {
        server = AtriumServer.launch(
                Files.createTempDirectory("atrium-config-"),
                TestDatabase.create(),
                Map.of(
                        "ATRIUM_PUBLIC_URL", PUBLIC,
                        "ATRIUM_GIT_MAX_BODY_BYTES", "4096",
                        "ATRIUM_RUNS_STEP_LIMIT", "many",
                        "ATRIUM_THREADS_SHARE_MAX_FAILURES", " "));
    }

    @AfterAll
    static void stop() throws Throwable {
        if (server != null) {
            server.close();
        }
    }

    private static Http.Reply gitPost(int bytes) {
        return server.anonymous().send("POST", GIT, new byte[bytes], GIT_TYPE);
    }

    @Test
    void environmentVariablesConfigureTheServer() {
        Http.Reply meta = server.anonymous().get("/.well-known/oauth-authorization-server");
        assertEquals(200, meta.status(), meta.body());
        assertEquals(PUBLIC, meta.json().path("issuer").asText());
        Http.Reply big = gitPost(5000);
        assertEquals(413, big.status(), big.body());
        assertTrue(big.body().contains("the limit is 4096"), big.body());
        // a malformed value is reported and left unset; the server runs on the component's default
        assertTrue(
                server.fullLog().contains("environment variable ATRIUM_RUNS_STEP_LIMIT='many' is not an integer"),
                server.tail());
    }

    @Test
    void theOperatorsConfigurationWinsOverTheEnvironmentUntilItIsRemoved() throws Exception {
        Path file = server.data.resolve("deploy/dev.atrium.git.http.config");
        Files.writeString(file, "maxBodyBytes=L\"4500\"\n", StandardCharsets.UTF_8);
        try {
            awaitLimit(4500);
        } finally {
            Files.delete(file);
        }
        awaitLimit(4096);
    }

    /** Waits until the Git endpoint refuses a 5000-byte body naming {@code limit} (file install polls every 0.5 s). */
    private static void awaitLimit(long limit) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        Http.Reply last = null;
        while (System.nanoTime() < deadline) {
            last = gitPost(5000);
            if (last.status() == 413 && last.body().contains("the limit is " + limit)) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the Git body limit did not become " + limit + ": "
                + (last == null ? "" : last.status() + " " + last.body()));
    }
}
