package dev.atrium.operations.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.ApiException;
import java.io.PrintStream;
import java.util.List;
import org.junit.jupiter.api.Test;

class LogRingTest {

    private static final String INFO_LINE =
            "2026-12-06 16:13:08.123 [qtp-12 worker] INFO dev.atrium.operations.internal.FeatureSwitch - feature memories disabled";

    @Test
    void anSlf4jSimpleLineIsReadIntoItsPartsAndAStackTraceKeepsItsLinesLevel() {
        LogRing ring = new LogRing(false);
        ring.add(INFO_LINE);
        ring.add("2026-12-06 16:13:09.000 [main] ERROR dev.atrium.kernel.X - it broke");
        ring.add("java.lang.IllegalStateException: boom");
        ring.add("\tat dev.atrium.kernel.X.run(X.java:1)");
        ring.add("ERROR: Bundle flaky [1] Error starting");

        List<LogRing.Line> all = ring.lines(0, null, null, 100);
        assertEquals(5, all.size());
        LogRing.Line first = all.get(0);
        assertEquals(1, first.seq());
        assertEquals("2026-12-06 16:13:08.123", first.time());
        assertEquals("qtp-12 worker", first.thread());
        assertEquals("INFO", first.level());
        assertEquals("dev.atrium.operations.internal.FeatureSwitch", first.logger());
        assertEquals("feature memories disabled", first.message());
        assertEquals("ERROR", all.get(2).level());
        assertEquals("dev.atrium.kernel.X", all.get(3).logger());
        assertEquals("stderr", all.get(4).logger(), "the framework's own output is not SLF4J's");
        assertEquals("ERROR", all.get(4).level());
    }

    @Test
    void filtersTakeALevelAndAboveALoggerByPartOfItsNameAndLinesAfterASeq() {
        LogRing ring = new LogRing(false);
        ring.add(INFO_LINE);
        ring.add("2026-12-06 16:13:09.000 [main] WARN dev.atrium.kernel.X - careful");
        ring.add("2026-12-06 16:13:09.000 [main] DEBUG dev.atrium.kernel.X - detail");

        assertEquals(
                List.of(2L),
                ring.lines(0, "WARN", null, 100).stream().map(LogRing.Line::seq).toList());
        assertEquals(
                List.of(1L),
                ring.lines(0, null, "featureswitch", 100).stream()
                        .map(LogRing.Line::seq)
                        .toList());
        assertEquals(
                List.of(2L, 3L),
                ring.lines(1, null, null, 100).stream().map(LogRing.Line::seq).toList());
        assertEquals(
                List.of(3L),
                ring.lines(0, null, null, 1).stream().map(LogRing.Line::seq).toList(),
                "the newest");
        LogRing.Tail tail = ring.tail(0, "ERROR", null, 100);
        assertTrue(tail.lines().isEmpty());
        assertEquals(3, tail.last(), "lines filtered out are not read again");
    }

    @Test
    void theRingDropsItsOldestLinesPastItsBound() {
        LogRing ring = new LogRing(false);
        for (int i = 0; i < LogRing.MAX_LINES + 10; i++) {
            ring.add("line " + i);
        }
        List<LogRing.Line> all = ring.lines(0, null, null, LogRing.MAX_LINES * 2);
        assertEquals(LogRing.MAX_LINES, all.size());
        assertEquals(11, all.get(0).seq());
        ring.add("x".repeat(LogRing.MAX_LINE_CHARS * 3));
        assertTrue(ring.lines(0, null, null, 1).get(0).message().length() < LogRing.MAX_LINE_CHARS + 5);
    }

    @Test
    void linesWrittenToStandardErrorAreKeptAndStillPassedOnAndTheStreamIsPutBackOnStop() {
        PrintStream before = System.err;
        LogRing ring = new LogRing(true);
        try {
            assertNotSame(before, System.err);
            System.err.println(INFO_LINE);
            System.err.print("half a ");
            System.err.println("line");
            List<LogRing.Line> lines = ring.lines(0, null, null, 10);
            assertEquals("feature memories disabled", lines.get(0).message());
            assertEquals("half a line", lines.get(1).message());
        } finally {
            ring.stop();
        }
        assertSame(before, System.err);
    }

    @Test
    void badQueryValuesAre400s() {
        for (Runnable bad : List.<Runnable>of(
                () -> LogResource.after("-1"),
                () -> LogResource.after("x"),
                () -> LogResource.level("info"),
                () -> LogResource.level("FATAL"),
                () -> LogResource.limit("0", 1),
                () -> LogResource.limit("10001", 1),
                () -> LogResource.logger("x".repeat(201)))) {
            assertEquals(400, assertThrows(ApiException.class, bad::run).status());
        }
        assertEquals(500, LogResource.limit(null, 500));
        assertEquals(7, LogResource.after("7"));
    }
}
