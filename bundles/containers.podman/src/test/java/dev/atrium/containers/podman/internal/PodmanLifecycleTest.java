package dev.atrium.containers.podman.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.runner.api.ContainerSpec;
import dev.atrium.runner.api.JobContainer;
import dev.atrium.runner.api.JobRunner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The podman service's life: started by the first job, started again after it died, gone after deactivation. */
class PodmanLifecycleTest {

    @TempDir
    Path workspace;

    private ContainerSpec spec() {
        return new ContainerSpec("busybox", workspace, Map.of(), 0, 0, 0, Map.of());
    }

    private static List<ProcessHandle> services(PodmanRunner runner) {
        return Strays.find(List.of("unix://" + runner.service().socket()));
    }

    /** The containers podman's storage holds, asked of the podman CLI (no service runs). */
    private static String containersInStorage(PodmanService service) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(
                        "podman",
                        "--root",
                        service.storage().toString(),
                        "--runroot",
                        service.runtime().resolve("run").toString(),
                        "--tmpdir",
                        service.runtime().resolve("tmp").toString(),
                        "--storage-opt",
                        "overlay.skip_mount_home=true",
                        "ps",
                        "-aq")
                .redirectErrorStream(true);
        pb.environment()
                .put(
                        "CONTAINERS_CONF",
                        service.directory().resolve("containers.conf").toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    @Test
    void activationStartsNothingAndDeactivationLeavesNoProcessThreadSocketOrContainer() throws Exception {
        PodmanRunner runner = Podman.runner(Path.of("target", "podman-lifecycle"));
        JobRunner.Availability availability = runner.availability();
        assertTrue(availability.ready(), availability.reason() + ": run ./atrium test (it installs podman and runc)");
        assertEquals(List.of(), services(runner), "no service before the first job");

        JobContainer running = runner.start(spec());
        assertEquals(1, services(runner).size());
        CompletableFuture<String> exec = CompletableFuture.supplyAsync(() -> {
            try {
                return "exit " + running.exec(List.of("sleep", "60"), Map.of(), null, (e, b, o, l) -> {});
            } catch (Exception e) {
                return e.toString();
            }
        });
        Thread.sleep(300); // the exec runs
        long t0 = System.nanoTime();
        runner.deactivate();
        System.out.printf(
                "deactivation with a running job: %d ms (%s)%n",
                (System.nanoTime() - t0) / 1_000_000, exec.get(5, TimeUnit.SECONDS));

        assertEquals(List.of(), services(runner), "no podman service");
        assertEquals(List.of(), Strays.find(List.of(runner.service().storage().toString())), "no conmon");
        assertFalse(Files.exists(runner.service().socket()), "no socket file");
        assertFalse(Files.exists(runner.service().runtime()), "no run root in /run");
        assertEquals(
                List.of(),
                Thread.getAllStackTraces().keySet().stream()
                        .filter(Thread::isAlive)
                        .map(Thread::getName)
                        .filter(n -> n.startsWith("podman-"))
                        .toList(),
                "no thread of the runner");
        assertEquals("", containersInStorage(runner.service()), "no container");
        // the podman CLI just made a run root again
        try (java.util.stream.Stream<Path> files = Files.walk(runner.service().runtime())) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        }
        assertFalse(runner.availability().ready());
    }

    @Test
    void aServiceThatDiedIsReportedAndTheNextJobStartsItAgain() throws Exception {
        PodmanRunner runner = Podman.runner(Path.of("target", "podman-restart"));
        try {
            runner.start(spec()).close();
            ProcessHandle service = services(runner).get(0);
            service.destroyForcibly();
            service.onExit().get(5, TimeUnit.SECONDS);
            JobRunner.Availability dead = runner.availability();
            assertFalse(dead.ready());
            assertTrue(dead.reason().startsWith("the podman service stopped"), dead.reason());

            try (JobContainer again = runner.start(spec())) {
                assertEquals(0, again.exec(List.of("true"), Map.of(), null, (e, b, o, l) -> {}));
            }
            assertTrue(runner.availability().ready());
        } finally {
            runner.deactivate();
        }
    }

    @Test
    void containersACrashedRunLeftAreRemovedWhenTheServiceStarts() throws Exception {
        Path data = Path.of("target", "podman-crash");
        PodmanRunner crashed = Podman.runner(data);
        PodmanRunner next = null;
        try {
            JobContainer left = crashed.start(spec());
            // the JVM dies: the service with it (kill -9), the container and its conmon stay
            ProcessHandle service = services(crashed).get(0);
            service.destroyForcibly();
            service.onExit().get(5, TimeUnit.SECONDS);
            assertFalse(Strays.find(List.of(left.id())).isEmpty(), "the container's conmon outlives the service");

            // the next process, made only now: made beside the first, its start-up cleaning killed the first's service
            // (one storage has one service, as one server has one PodmanHost)
            next = Podman.runner(data);

            try (JobContainer fresh = next.start(spec())) {
                List<String> containers = next.service().api().containers();
                assertEquals(List.of(fresh.id()), containers);
                assertEquals(List.of(), Strays.find(List.of(left.id())), "nothing of the old container runs");
            }
        } finally {
            if (next != null) {
                next.deactivate();
            }
            crashed.deactivate();
        }
    }
}
