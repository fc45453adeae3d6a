package dev.atrium.containers.podman.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.atrium.runner.api.ContainerSpec;
import dev.atrium.runner.api.JobRunner;
import dev.atrium.runner.api.RunnerException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AvailabilityTest {

    @TempDir
    Path dir;

    private PodmanRunner runner(String binary) {
        return new PodmanRunner(new PodmanRunner.Settings(
                binary, dir.resolve("runner-podman"), dir, "", 1L << 30, 1.0, 512, "1000:1000", "none"));
    }

    @Test
    void withoutPodmanTheRunnerSaysSoAndStartsNothing() throws Exception {
        PodmanRunner onPath = runner("atrium-no-such-podman");
        JobRunner.Availability a = onPath.availability();
        assertFalse(a.ready());
        assertEquals("podman not found on PATH", a.reason());
        RunnerException e = assertThrows(
                RunnerException.class,
                () -> onPath.start(new ContainerSpec("busybox", dir, Map.of(), 0, 0, 0, Map.of())));
        assertEquals("podman not found on PATH", e.getMessage());
        onPath.deactivate();

        PodmanRunner atPath = runner("/nonexistent/podman");
        assertEquals(
                "podman not found at /nonexistent/podman", atPath.availability().reason());
        atPath.deactivate();
        assertEquals("the podman runner is stopped", atPath.availability().reason());
    }
}
