package dev.atrium.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MainTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final Main main = new Main(
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

    @Test
    void helpPrintsUsage() {
        assertEquals(0, main.run(new String[] {"help"}));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("token create"));
    }

    @Test
    void helpAsAnOptionAfterAnyCommandPrintsTheUsageAndSucceeds() {
        for (String[] args :
                new String[][] {{"--help"}, {"-h"}, {"token", "create", "--help"}, {"feature", "enable", "-h"}}) {
            assertEquals(0, main.run(args), String.join(" ", args));
        }
        String usage = out.toString(StandardCharsets.UTF_8);
        assertTrue(usage.contains("atrium run [--port") && usage.contains("atrium test"), usage);
        assertEquals("", err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void badUsageExitsTwoWithAReason() {
        assertEquals(2, main.run(new String[] {"token", "create"}));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--user"));
        assertEquals(2, main.run(new String[] {"token", "create", "--user"}));
        assertEquals(2, main.run(new String[] {"dance"}));
        assertEquals(2, main.run(new String[] {"feature", "toggle", "memories"}));
    }

    @Test
    void tablesAlignTheirColumns() {
        main.table(java.util.List.of(
                java.util.List.of("ID", "NAME"), java.util.List.of("12", "kernel"), java.util.List.of("3", "x")));
        assertEquals("ID  NAME\n12  kernel\n3   x\n", out.toString(StandardCharsets.UTF_8));
    }
}
