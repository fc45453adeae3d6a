package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code ./atrium completion bash} (issue 41): bash completes commands, subcommands and each command's flags. */
class CompletionTest {

    @Test
    void bashCompletesCommandsSubcommandsAndFlags() throws Exception {
        assertEquals("features feature", complete("./atrium", "fe"));
        assertEquals("create", complete("./atrium", "token", ""));
        assertEquals("enable disable", complete("./atrium", "feature", ""));
        assertEquals("--user --url", complete("./atrium", "token", "create", "--u"));
        assertEquals("--data --db-url", complete("./atrium", "run", "--d"));
        assertEquals("--space --strategy", complete("./atrium", "service", "deploy", "--s"));
    }

    /** What bash offers for the last word, with the script {@code ./atrium completion bash} prints loaded. */
    private static String complete(String... words) throws Exception {
        StringBuilder array = new StringBuilder();
        for (String w : words) {
            array.append('\'').append(w).append("' ");
        }
        String script = "source <(./atrium completion bash) && COMP_WORDS=(" + array + ") && COMP_CWORD="
                + (words.length - 1) + " && _atrium && echo \"${COMPREPLY[*]}\"";
        Process p = new ProcessBuilder("bash", "-c", script)
                .directory(AtriumServer.ROOT.toFile())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.waitFor(30, TimeUnit.SECONDS);
        assertEquals(0, p.exitValue(), out);
        return out;
    }
}
