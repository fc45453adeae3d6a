package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The operator's configuration API ({@code /admin/config}) on a server of its own, so the shared server's
 * configuration is untouched: each value names its source (the environment here), an edit is written to the
 * operator's file in {@code <data>/deploy/} and takes effect with the source {@code operator}, a reset returns it to the
 * environment, a value of the wrong type is a 400 naming the property, secrets are masked, and only the operator is
 * answered.
 */
class ConfigurationEditingTest {

    private static final String GIT_PID = "dev.atrium.git.http";
    private static final String GIT = "/git/nobody/nothing.git/git-upload-pack";
    private static final String SECRET = "YXRyaXVtLWNvbmZpZy10ZXN0LXNlY3JldC0zMi1ieXQ=";
    private static AtriumServer server;

    @BeforeAll
    static void launch() throws Exception {
        server = AtriumServer.launch(
                Files.createTempDirectory("atrium-config-edit-"),
                TestDatabase.create(),
                Map.of("ATRIUM_GIT_MAX_BODY_BYTES", "4096", "ATRIUM_MCP_TOKEN_KEY", SECRET));
    }

    @AfterAll
    static void stop() throws Throwable {
        if (server != null) {
            server.close();
        }
    }

    private static JsonNode property(JsonNode config, String name) {
        for (JsonNode p : config.path("properties")) {
            if (p.path("name").asText().equals(name)) {
                return p;
            }
        }
        throw new AssertionError("no property " + name + " in " + config);
    }

    @Test
    void theListNamesEachValuesSourceAndDefault() {
        Http.Reply list = server.operator().get("/admin/config");
        assertEquals(200, list.status(), list.body());
        JsonNode git = null;
        for (JsonNode c : list.get("configs")) {
            if (c.path("pid").asText().equals(GIT_PID)) {
                git = c;
            }
        }
        assertNotNull(git, list.body());
        JsonNode max = property(git, "maxBodyBytes");
        assertEquals("Long", max.path("type").asText());
        assertEquals(4096, max.path("value").asLong(), max.toString());
        assertEquals("environment", max.path("source").asText(), max.toString());
        assertEquals(
                "environment variable ATRIUM_GIT_MAX_BODY_BYTES",
                max.path("from").asText());
        assertEquals("2147483648", max.path("default").asText());
        JsonNode wait = property(git, "pushWaitSeconds");
        assertEquals("default", wait.path("source").asText(), wait.toString());
        assertEquals("30", wait.path("value").asText(), wait.toString());
    }

    @Test
    void aSecretIsMaskedWhereverItComesFrom() {
        Http.Reply mcp = server.operator().get("/admin/config/dev.atrium.mcp");
        assertEquals(200, mcp.status(), mcp.body());
        assertFalse(mcp.body().contains(SECRET), "the secret itself is never answered");
        JsonNode key = property(mcp.get("config"), "tokenKey");
        assertTrue(key.path("secret").asBoolean(), key.toString());
        assertTrue(key.path("set").asBoolean(), key.toString());
        assertEquals("••••", key.path("value").asText());
        assertEquals("environment", key.path("source").asText());
    }

    @Test
    void anEditTakesEffectAsTheOperatorsFileUntilItIsReset() throws Exception {
        Http.Reply put =
                server.operator().put("/admin/config/" + GIT_PID, Map.of("properties", Map.of("maxBodyBytes", 4500)));
        assertEquals(200, put.status(), put.body());
        JsonNode max = property(put.get("config"), "maxBodyBytes");
        assertEquals("operator", max.path("source").asText(), max.toString());
        assertEquals(4500, max.path("value").asLong());
        Path file = server.data.resolve("deploy/" + GIT_PID + ".config");
        assertEquals(
                file.toRealPath().toString(),
                Path.of(max.path("from").asText()).toRealPath().toString());
        assertEquals("maxBodyBytes=L\"4500\"\n", Files.readString(file, StandardCharsets.UTF_8));
        awaitLimit(4500);

        JsonNode audit = server.operator()
                .get("/admin/audit?action=config_changed&limit=5")
                .get("entries");
        assertTrue(audit.toString().contains("set maxBodyBytes"), audit.toString());

        Http.Reply reset = server.operator().delete("/admin/config/" + GIT_PID + "/maxBodyBytes");
        assertEquals(200, reset.status(), reset.body());
        assertEquals(
                "environment",
                property(reset.get("config"), "maxBodyBytes").path("source").asText());
        assertFalse(Files.exists(file), "the file is deleted once it holds nothing");
        awaitLimit(4096);
    }

    @Test
    void aValueOfTheWrongTypeOrAnUnknownPropertyIsRefusedNamingIt() {
        Http.Reply wrong =
                server.operator().put("/admin/config/" + GIT_PID, Map.of("properties", Map.of("maxBodyBytes", "lots")));
        assertEquals(400, wrong.status(), wrong.body());
        assertTrue(wrong.body().contains("maxBodyBytes"), wrong.body());
        Http.Reply unknown =
                server.operator().put("/admin/config/" + GIT_PID, Map.of("properties", Map.of("colour", "red")));
        assertEquals(400, unknown.status(), unknown.body());
        assertTrue(unknown.body().contains("colour"), unknown.body());
        Http.Reply shapeless = server.operator().put("/admin/config/" + GIT_PID, Map.of("maxBodyBytes", 1));
        assertEquals(400, shapeless.status(), shapeless.body());
        assertEquals(
                404, server.operator().get("/admin/config/dev.atrium.no.such").status());
        assertFalse(Files.exists(server.data.resolve("deploy/" + GIT_PID + ".config")), "nothing was written");
    }

    @Test
    void onlyTheOperatorIsAnswered() {
        for (Http http : java.util.List.of(server.anonymous(), server.newUser().http())) {
            assertEquals(401, http.get("/admin/config").status());
            assertEquals(401, http.get("/admin/config/" + GIT_PID).status());
            assertEquals(
                    401,
                    http.put("/admin/config/" + GIT_PID, Map.of("properties", Map.of("maxBodyBytes", 1)))
                            .status());
            assertEquals(
                    401,
                    http.delete("/admin/config/" + GIT_PID + "/maxBodyBytes").status());
        }
    }

    @Test
    void anEditInTheConsoleTakesEffectAndShowsItsSource() throws Exception {
        BrowserScripts.require("playwright-core");
        Path screenshot = AtriumServer.ROOT.resolve("itests/target/console-config.png");
        int exit = BrowserScripts.run(
                AtriumServer.ROOT.resolve("itests/target/browser-config.log"),
                "node",
                "config.test.mjs",
                server.base(),
                server.operatorToken(),
                SECRET,
                screenshot.toString());
        assertEquals(
                0,
                exit,
                () -> "the browser test failed; its output is in itests/target/browser-config.log, ending:\n"
                        + BrowserScripts.tail(AtriumServer.ROOT.resolve("itests/target/browser-config.log")));
        assertTrue(Files.size(screenshot) > 1000, "a screenshot was taken");
        assertFalse(Files.exists(server.data.resolve("deploy/" + GIT_PID + ".config")), "the reset removed the file");
    }

    /** Waits until the Git endpoint refuses a 5000-byte body naming {@code limit} (file install polls every 0.5 s). */
    private static void awaitLimit(long limit) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        Http.Reply last = null;
        while (System.nanoTime() < deadline) {
            last = server.anonymous().send("POST", GIT, new byte[5000], "application/x-git-upload-pack-request");
            if (last.status() == 413 && last.body().contains("the limit is " + limit)) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the Git body limit did not become " + limit + ": "
                + (last == null ? "" : last.status() + " " + last.body()));
    }
}
