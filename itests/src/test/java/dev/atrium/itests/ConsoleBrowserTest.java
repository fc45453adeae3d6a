package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The operator console in a real browser: headless Debian Chromium driven by playwright-core
 * ({@code itests/browser/console.test.mjs}). Needs Node.js with npm and {@code /usr/bin/chromium}; {@code .ci/run}
 * installs Chromium, and the Node packages are installed here from the lock file when missing.
 */
@SharedServer
class ConsoleBrowserTest {

    @Test
    void theConsoleDisablesAndEnablesAFeatureByClicking(AtriumServer server) throws Exception {
        BrowserScripts.require("playwright-core");
        Path screenshot = AtriumServer.ROOT.resolve("itests/target/console.png");
        int exit = BrowserScripts.run(
                AtriumServer.ROOT.resolve("itests/target/browser.log"),
                "node",
                "console.test.mjs",
                server.base(),
                server.operatorToken(),
                screenshot.toString());
        assertEquals(
                0,
                exit,
                () -> "the browser test failed; its output is in itests/target/browser.log, ending:\n"
                        + BrowserScripts.tail(AtriumServer.ROOT.resolve("itests/target/browser.log")));
        assertTrue(Files.size(screenshot) > 1000, "a screenshot was taken");
        assertTrue(FeatureSwitchTest.feature(server, "memories").get("enabled").asBoolean());
    }
}
