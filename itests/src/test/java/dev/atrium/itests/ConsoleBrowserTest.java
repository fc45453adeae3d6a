package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * The operator console in a real browser: headless Debian Chromium driven by playwright-core
 * ({@code itests/browser/console.test.mjs}). Needs Node.js with npm and {@code /usr/bin/chromium}; {@code .ci/run}
 * installs Chromium, and the Node packages are installed here from the lock file when missing.
 */
@SharedServer
class ConsoleBrowserTest {

    static final Path BROWSER = AtriumServer.ROOT.resolve("itests/browser");

    @Test
    void theConsoleDisablesAndEnablesAFeatureByClicking(AtriumServer server) throws Exception {
        String chromium = System.getenv().getOrDefault("CHROMIUM", "/usr/bin/chromium");
        assertTrue(Files.isExecutable(Path.of(chromium)), chromium + " is missing: install Debian's chromium (apt-get install chromium), "
                + "as .ci/run does, or point CHROMIUM at a Chromium binary");
        if (!Files.isDirectory(BROWSER.resolve("node_modules/playwright-core"))) {
            assertEquals(0, run(BROWSER, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"), "npm ci in " + BROWSER);
        }
        Path screenshot = AtriumServer.ROOT.resolve("itests/target/console.png");
        int exit = run(BROWSER, "node", "console.test.mjs", server.base(), server.operatorToken(), screenshot.toString());
        assertEquals(0, exit, "the browser test failed; its output is in itests/target/browser.log");
        assertTrue(Files.size(screenshot) > 1000, "a screenshot was taken");
        assertTrue(FeatureSwitchTest.feature(server, "memories").get("enabled").asBoolean());
    }

    private static int run(Path dir, String... command) throws Exception {
        Path log = AtriumServer.ROOT.resolve("itests/target/browser.log");
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " did not finish:\n" + Files.readString(log, StandardCharsets.UTF_8));
        }
        return p.exitValue();
    }
}
