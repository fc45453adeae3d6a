package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The Node scripts in {@code itests/browser} that drive Debian's Chromium with playwright-core: where they are, that
 * Chromium and their npm packages are there, and running one.
 */
final class BrowserScripts {

    static final Path DIR = AtriumServer.ROOT.resolve("itests/browser");

    private BrowserScripts() {}

    /** Fails with what to install when Chromium is missing; installs the scripts' packages when {@code module} is not there. */
    static void require(String module) throws Exception {
        String chromium = System.getenv().getOrDefault("CHROMIUM", "/usr/bin/chromium");
        assertTrue(
                Files.isExecutable(Path.of(chromium)),
                chromium + " is missing: install Debian's chromium (apt-get install chromium), "
                        + "as .ci/run does, or point CHROMIUM at a Chromium binary");
        if (!Files.isDirectory(DIR.resolve("node_modules").resolve(module))) {
            assertEquals(
                    0,
                    run(
                            AtriumServer.ROOT.resolve("itests/target/browser.log"),
                            "npm",
                            "ci",
                            "--no-audit",
                            "--no-fund",
                            "--loglevel=error"),
                    "npm ci in " + DIR);
        }
    }

    /** The last lines of a script's {@code log}, for a failure's message: CI shows the message, not the file. */
    static String tail(Path log) {
        try {
            java.util.List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (java.io.IOException e) {
            return "(no output: " + e + ")";
        }
    }

    /** Runs {@code command} in the scripts' directory, its output appended to {@code log}; its exit status. */
    static int run(Path log, String... command) throws Exception {
        Process p = new ProcessBuilder(command)
                .directory(DIR.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(
                    String.join(" ", command) + " did not finish:\n" + Files.readString(log, StandardCharsets.UTF_8));
        }
        return p.exitValue();
    }
}
