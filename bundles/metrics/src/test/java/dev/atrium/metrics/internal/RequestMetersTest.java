package dev.atrium.metrics.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RequestMetersTest {

    @Test
    void labelValuesComeFromFewFixedSets() {
        assertEquals("GET", RequestMeters.method("GET"));
        assertEquals("OTHER", RequestMeters.method("BREW"));
        assertEquals("none", RequestMeters.route(null));
        assertEquals("/api/repos/{repoId}", RequestMeters.route("/api/repos/{repoId}"));
        assertEquals("2xx", RequestMeters.statusClass(204));
        assertEquals("5xx", RequestMeters.statusClass(503));
        assertEquals("none", RequestMeters.statusClass(0));
    }

    @Test
    void theCapabilityIsTheServingBundleWithoutItsPrefixOrVersion() {
        assertEquals("repos", RequestMeters.capability("dev.atrium.repos/0.1.0.SNAPSHOT"));
        assertEquals("agent-tasks", RequestMeters.capability("dev.atrium.agent-tasks/1.0.0"));
        assertEquals("org.example.plugin", RequestMeters.capability("org.example.plugin/2.0.0"));
        assertEquals("none", RequestMeters.capability(null));
    }

    @Test
    void cpuSecondsAreUserAndSystemTicksOfProcStat(@TempDir Path tmp) throws Exception {
        Path stat = tmp.resolve("stat");
        // a command name with spaces and a parenthesis, as /proc/self/stat may show one
        Files.writeString(
                stat, "4242 (java (main) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 130 0 0 20 0 40 0 123 456 789");
        assertEquals(3.8, ProcessMemory.cpuSeconds(stat), 1e-9);
        assertTrue(Double.isNaN(ProcessMemory.cpuSeconds(tmp.resolve("missing"))));
    }
}
