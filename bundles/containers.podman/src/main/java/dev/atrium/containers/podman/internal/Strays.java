package dev.atrium.containers.podman.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Processes found by their arguments in {@code /proc}: podman's {@code conmon} processes are not its children (they
 * detach), so neither destroying the service's process tree nor removing a container ends all of them.
 */
final class Strays {

    private Strays() {}

    /** The processes (not this one) having every one of {@code args} among their arguments. */
    static List<ProcessHandle> find(List<String> args) {
        long self = ProcessHandle.current().pid();
        return ProcessHandle.allProcesses()
                .filter(p -> p.pid() != self)
                .filter(p -> arguments(p.pid()).containsAll(args))
                .toList();
    }

    static List<String> arguments(long pid) {
        try {
            byte[] cmdline = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            return Arrays.asList(new String(cmdline, StandardCharsets.UTF_8).split("\0"));
        } catch (IOException e) {
            return List.of(); // gone, or not Linux
        }
    }

    /** Kills them (SIGKILL) and waits up to 2 s for them to go. */
    static void kill(List<ProcessHandle> processes) {
        processes.forEach(ProcessHandle::destroyForcibly);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        // polled rather than onExit(): that would wait on a JDK pool's thread for processes that are not our children
        while (processes.stream().anyMatch(Strays::running) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Whether the process still runs: a zombie does not (it waits for its parent, often init, to reap it, which may
     * take a while on some machines), though {@link ProcessHandle#isAlive} says it is alive.
     */
    static boolean running(ProcessHandle p) {
        if (!p.isAlive()) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"));
            // "pid (comm) S ...": the state follows the last ')'
            int end = stat.lastIndexOf(')');
            return end < 0 || end + 2 >= stat.length() || stat.charAt(end + 2) != 'Z';
        } catch (IOException e) {
            return false;
        }
    }
}
