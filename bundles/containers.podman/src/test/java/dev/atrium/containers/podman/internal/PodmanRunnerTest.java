package dev.atrium.containers.podman.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.atrium.runner.api.ContainerSpec;
import dev.atrium.runner.api.JobContainer;
import dev.atrium.runner.api.JobRunner;
import dev.atrium.runner.api.RunnerException;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner against the real podman and a real busybox container. {@code ./atrium test} installs podman and runc and
 * builds {@code ~/.cache/atrium/images/busybox.tar}; {@code ./atrium images} builds the images alone.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PodmanRunnerTest {

    private PodmanRunner runner;

    @TempDir
    Path workspace;

    @BeforeAll
    void start() {
        runner = Podman.runner(Path.of("target", "podman-test"));
        JobRunner.Availability availability = runner.availability();
        if (!availability.ready()) {
            fail("podman is not usable (" + availability.reason() + "): run ./atrium test, or install podman and "
                    + "runc (apt-get install podman runc)");
        }
        if (!runner.labels().contains("busybox")) {
            fail("no busybox.tar in " + Podman.images() + ": run ./atrium images (or ./atrium test)");
        }
    }

    @AfterAll
    void stop() throws InterruptedException {
        runner.deactivate();
    }

    private ContainerSpec spec(Map<String, String> env, long memory) {
        return new ContainerSpec("busybox", workspace, env, memory, 0, 0, Map.of("atrium.job", "test"));
    }

    private JobContainer container() throws RunnerException {
        return runner.start(spec(Map.of(), 0));
    }

    @Test
    void availabilityNamesPodmanAndItsRuntime() {
        JobRunner.Availability a = runner.availability();
        assertTrue(a.ready(), a.reason());
        assertTrue(a.reason().matches("podman \\d+\\.\\d+.*, runc"), a.reason());
        assertEquals("podman", runner.name());
    }

    @Test
    void outputArrivesWhileTheCommandStillRuns() throws Exception {
        long started = System.nanoTime();
        try (JobContainer c = container()) {
            System.out.printf("container create + start: %d ms%n", (System.nanoTime() - started) / 1_000_000);
            Capture out = new Capture();
            long t0 = System.nanoTime();
            int code = c.exec(List.of("sh", "-c", "echo a; sleep 2; echo b"), Map.of(), null, out);
            long total = System.nanoTime() - t0;
            assertEquals(0, code);
            assertEquals("a\nb\n", out.stdout());
            long first = out.firstAt() - t0;
            System.out.printf(
                    "exec round trip: first output after %d ms, command of 2 s took %d ms%n",
                    first / 1_000_000, total / 1_000_000);
            assertTrue(first < TimeUnit.SECONDS.toNanos(1), "'a' came after " + first / 1_000_000 + " ms");
            assertTrue(total >= TimeUnit.MILLISECONDS.toNanos(1900));
        }
    }

    @Test
    void theExitStatusAndStreamsAreTheCommands() throws Exception {
        try (JobContainer c = runner.start(spec(Map.of("A", "from-spec", "B", "spec"), 0))) {
            Capture out = new Capture();
            int code = c.exec(
                    List.of("sh", "-c", "echo \"$A $B $(pwd) $(id -u):$(id -g)\"; echo oops >&2; exit 3"),
                    Map.of("A", "from-step"),
                    null,
                    out);
            assertEquals(3, code);
            assertEquals("from-step spec /workspace 1000:1000\n", out.stdout());
            assertEquals("oops\n", out.stderr());
            Capture quick = new Capture();
            long t0 = System.nanoTime();
            assertEquals(0, c.exec(List.of("true"), Map.of(), "/tmp", quick));
            System.out.printf("exec of true: %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        }
    }

    @Test
    void filesWrittenInTheWorkspaceAreOnTheHostAndTheCheckoutIsWritable() throws Exception {
        Files.createDirectories(workspace.resolve("src"));
        Files.writeString(workspace.resolve("src/checked-out.txt"), "root's\n");
        try (JobContainer c = container()) {
            int code = c.exec(
                    List.of("sh", "-ec", "echo built > out.txt; echo more >> src/checked-out.txt; touch src/new"),
                    Map.of(),
                    null,
                    new Capture());
            assertEquals(0, code);
        }
        assertEquals("built\n", Files.readString(workspace.resolve("out.txt")));
        assertEquals("root's\nmore\n", Files.readString(workspace.resolve("src/checked-out.txt")));
        assertTrue(Files.exists(workspace.resolve("src/new")));
    }

    @Test
    void stopEndsARunningCommandWithinFiveSeconds() throws Exception {
        try (JobContainer c = container()) {
            Capture out = new Capture();
            CompletableFuture<Integer> exec = CompletableFuture.supplyAsync(() -> {
                try {
                    return c.exec(List.of("sh", "-c", "echo started; sleep 60"), Map.of(), null, out);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (out.firstAt() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            long t0 = System.nanoTime();
            c.stop();
            int code = exec.get(5, TimeUnit.SECONDS);
            System.out.printf(
                    "stop during sleep 60: exec returned %d after %d ms%n", code, (System.nanoTime() - t0) / 1_000_000);
            assertNotEquals(0, code);
            c.stop(); // again: harmless
            assertThrows(RunnerException.class, () -> c.exec(List.of("true"), Map.of(), null, new Capture()));
        }
    }

    @Test
    void anInterruptedCallerReturnsAndTheCommandGoesOnUntilStop() throws Exception {
        try (JobContainer c = container()) {
            Capture out = new Capture();
            CompletableFuture<String> exec = new CompletableFuture<>();
            Thread caller = new Thread(() -> {
                try {
                    exec.complete("exit " + c.exec(List.of("sh", "-c", "echo go; sleep 60"), Map.of(), null, out));
                } catch (InterruptedException e) {
                    exec.complete("interrupted");
                } catch (RunnerException e) {
                    exec.complete(e.toString());
                }
            });
            caller.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (out.firstAt() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            caller.interrupt();
            assertEquals("interrupted", exec.get(2, TimeUnit.SECONDS));
            Capture ps = new Capture();
            c.exec(List.of("ps", "-o", "args"), Map.of(), null, ps);
            assertTrue(ps.stdout().contains("sleep 60"), ps.stdout());
        }
    }

    @Test
    void theContainerReachesNoPortOfTheHost() throws Exception {
        String host = hostAddress();
        try (ServerSocket listening = new ServerSocket(0, 50, InetAddress.getByName("0.0.0.0"));
                JobContainer c = container()) {
            int port = listening.getLocalPort();
            Capture out = new Capture();
            // PostgreSQL's port, and a port this test listens on, on loopback and on the host's own address
            String script = "for t in 127.0.0.1:5432 127.0.0.1:" + port + " " + host + ":5432 " + host + ":" + port
                    + "; do if nc -w 2 ${t%:*} ${t#*:} </dev/null 2>/dev/null; then echo \"reached $t\";"
                    + " else echo \"refused $t\"; fi; done; ls /sys/class/net";
            assertEquals(0, c.exec(List.of("sh", "-c", script), Map.of(), null, out));
            assertFalse(out.stdout().contains("reached"), out.stdout());
            assertTrue(out.stdout().contains("refused 127.0.0.1:5432"), out.stdout());
            assertEquals("lo", out.stdout().lines().reduce((a, b) -> b).orElse(""), "only loopback: " + out.stdout());
        }
    }

    @Test
    void theMemoryAndProcessLimitsHold() throws Exception {
        try (JobContainer c = runner.start(spec(Map.of(), 32L << 20))) {
            Capture limits = new Capture();
            c.exec(
                    List.of(
                            "sh",
                            "-c",
                            "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max"
                                    + " /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null;"
                                    + " grep CapEff /proc/self/status"),
                    Map.of(),
                    null,
                    limits);
            assertTrue(limits.stdout().contains(Long.toString(32L << 20)), limits.stdout());
            assertTrue(limits.stdout().contains("512"), limits.stdout());
            assertTrue(limits.stdout().contains("CapEff:\t0000000000000000"), limits.stdout());
            // a 64 MiB buffer in a 32 MiB container: the kernel kills it
            Capture dd = new Capture();
            int code = c.exec(List.of("dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"), Map.of(), null, dd);
            assertEquals(137, code, dd.stdout() + dd.stderr());
        }
    }

    @Test
    void closeRemovesTheContainer() throws Exception {
        JobContainer c = container();
        c.exec(List.of("true"), Map.of(), null, new Capture());
        assertTrue(runner.service().api().containers().contains(c.id()));
        long t0 = System.nanoTime();
        c.close();
        System.out.printf("close (kill + remove): %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        assertFalse(runner.service().api().containers().contains(c.id()));
        assertEquals(List.of(), Strays.find(List.of(c.id())), "no conmon of the container is left");
        c.close(); // again: nothing
    }

    @Test
    void aLabelWithoutImageFailsSayingWhichLabelsThereAre() {
        RunnerException e = assertThrows(
                RunnerException.class,
                () -> runner.start(new ContainerSpec("windows-latest", workspace, Map.of(), 0, 0, 0, Map.of())));
        assertTrue(e.getMessage().contains("windows-latest") && e.getMessage().contains("busybox"), e.getMessage());
    }

    @Test
    void anAliasRunsOnTheDefaultImage(@TempDir Path other) throws Exception {
        assertTrue(runner.labels().contains("ubuntu-latest"));
        try (JobContainer c = runner.start(new ContainerSpec("ubuntu-latest", other, Map.of(), 0, 0, 0, Map.of()))) {
            assertEquals(0, c.exec(List.of("true"), Map.of(), null, new Capture()));
        }
    }

    private static String hostAddress() throws IOException {
        for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (nif.isUp() && !nif.isLoopback()) {
                for (InetAddress a : Collections.list(nif.getInetAddresses())) {
                    if (a instanceof Inet4Address) {
                        return a.getHostAddress();
                    }
                }
            }
        }
        return "10.0.2.15";
    }

    /** Collects a command's output and when its first bytes came. */
    static final class Capture implements JobContainer.Output {
        private final StringBuilder out = new StringBuilder();
        private final StringBuilder err = new StringBuilder();
        private volatile long firstAt;

        @Override
        public synchronized void write(boolean stderr, byte[] bytes, int offset, int length) {
            if (firstAt == 0) {
                firstAt = System.nanoTime();
            }
            (stderr ? err : out).append(new String(bytes, offset, length, StandardCharsets.UTF_8));
        }

        synchronized String stdout() {
            return out.toString();
        }

        synchronized String stderr() {
            return err.toString();
        }

        long firstAt() {
            return firstAt;
        }
    }
}
