package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code ./atrium run} whose start does not finish within its deadline ends with status 70 and every thread's stack
 * in its log, the start-level thread's first: a start that blocks is a process a supervisor restarts, not one that is
 * up and answers nothing (the config bundle's {@code StartDeadline}; a 2 s deadline stands for a start that blocks).
 */
class StartDeadlineTest {

    @Test
    void aStartPastItsDeadlineEndsTheProcessWithStatus70AndWhereEveryThreadWas() throws Exception {
        Path data = Files.createTempDirectory("atrium-start-deadline-");
        Path log = AtriumServer.ROOT.resolve("itests/target/start-deadline.log");
        try (TestDatabase db = TestDatabase.create()) {
            ProcessBuilder pb = new ProcessBuilder(List.of(
                            AtriumServer.ROOT.resolve("atrium").toString(),
                            "run",
                            "--port",
                            "" + AtriumServer.freePort(),
                            "--data",
                            data.toString(),
                            "--db-url",
                            db.url()))
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            pb.environment().put("ATRIUM_NO_BUILD", "1");
            pb.environment().put("ATRIUM_START_DEADLINE_SECONDS", "2");
            Process p = pb.start();
            boolean ended = p.waitFor(120, TimeUnit.SECONDS);
            if (!ended) {
                p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
            String printed = Files.readString(log);
            assertTrue(ended, "the process ended:\n" + printed);
            assertEquals(70, p.exitValue(), printed);
            assertTrue(printed.contains("the framework did not finish starting within 2 s"), printed);
            assertTrue(printed.contains("where every thread was:\n\"FelixStartLevel\""), printed);
        } finally {
            LauncherTest.killAndRemove(List.of(), data);
        }
    }
}
