package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's health view in Chromium ({@code itests/browser/console-health.test.mjs}) on a server whose
 * PostgreSQL is the test's own: the view turns red when that PostgreSQL stops and green when it is back, while the
 * page stays open. The script prints "green" and "red" when it saw each; this test stops and starts the database then.
 */
class ConsoleHealthBrowserTest {

    @Test
    void healthTurnsRedWhenTheDatabaseStopsAndGreenWhenItReturns(@TempDir Path dir) throws Throwable {
        BrowserScripts.require("playwright-core");
        TestDatabase db = TestDatabase.ownServer(dir.resolve("pg"));
        AtriumServer server = AtriumServer.launch(Files.createDirectories(dir.resolve("data")), db);
        Path log = AtriumServer.ROOT.resolve("itests/target/browser.log");
        Path screenshots = AtriumServer.ROOT.resolve("itests/target/console-health");
        try {
            JsonNode status = server.operator().get("/admin/status").json();
            assertEquals("up", status.path("database").path("status").asText(), status.toString());

            Process node = new ProcessBuilder(
                            "node",
                            "console-health.test.mjs",
                            server.base(),
                            server.operatorToken(),
                            screenshots.toString())
                    .directory(BrowserScripts.DIR.toFile())
                    .redirectErrorStream(true)
                    .start();
            List<String> said = new ArrayList<>();
            try (BufferedReader out =
                            new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
                    PrintWriter kept = new PrintWriter(Files.newBufferedWriter(
                            log, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND))) {
                for (String line; (line = out.readLine()) != null; ) {
                    kept.println(line);
                    said.add(line);
                    if (line.equals("green")) {
                        db.stopServer();
                    } else if (line.equals("red")) {
                        JsonNode down = server.operator().get("/admin/status").json();
                        assertEquals("down", down.path("status").asText(), down.toString());
                        db.startServer();
                    }
                }
            }
            assertTrue(node.waitFor(30, TimeUnit.SECONDS), "the browser script ended");
            assertEquals(
                    0,
                    node.exitValue(),
                    "the browser test failed; its output is in itests/target/browser.log: " + said);
            assertEquals(
                    List.of("green", "red", "green again"),
                    said.stream()
                            .filter(l -> l.startsWith("green") || l.equals("red"))
                            .toList());
            assertTrue(Files.size(Path.of(screenshots + "-red.png")) > 1000, "a screenshot of the red view");
        } finally {
            db.startServer(); // a no-op unless the test failed while it was stopped
            server.close();
            db.close();
        }
    }
}
