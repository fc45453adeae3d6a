package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The console's charts and log tail in Chromium ({@code itests/browser/console-charts.test.mjs} and
 * {@code console-logs.test.mjs}): the requests/s chart moves under load, and the tail shows a line a request logged.
 */
@SharedServer
class ConsoleChartsAndLogsBrowserTest {

    @Test
    void theRequestsPerSecondChartMovesUnderLoad(AtriumServer server) throws Exception {
        run(server, "console-charts.test.mjs", "console-charts.png");
    }

    @Test
    void theLogTailShowsALineLoggedByARequestFilteredByLevelAndLoggerAndDownloads(AtriumServer server)
            throws Exception {
        run(server, "console-logs.test.mjs", "console-logs.png");
        assertTrue(FeatureSwitchTest.feature(server, "shortcuts").get("enabled").asBoolean());
    }

    private static void run(AtriumServer server, String script, String picture) throws Exception {
        BrowserScripts.require("playwright-core");
        Path screenshot = AtriumServer.ROOT.resolve("itests/target/" + picture);
        Files.deleteIfExists(screenshot);
        int exit = BrowserScripts.run(
                AtriumServer.ROOT.resolve("itests/target/browser.log"),
                "node",
                script,
                server.base(),
                server.operatorToken(),
                screenshot.toString());
        assertEquals(
                0,
                exit,
                () -> script + " failed; its output is in itests/target/browser.log, ending:\n"
                        + BrowserScripts.tail(AtriumServer.ROOT.resolve("itests/target/browser.log")));
        assertTrue(Files.size(screenshot) > 1000, "a screenshot was taken");
    }
}
