package dev.atrium.containers.podman.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.runner.api.JobRunner.Availability;
import dev.atrium.runner.api.RunnerException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Supervises one {@code podman system service} child process: rootful, on a unix socket in a 0700 directory (on TCP
 * its API would give any local process root), with its own storage and a {@code containers.conf} this class writes.
 * Started at the first job, not at activation; started again by the next job after it died. Closing it removes every
 * container and stops the service and the processes it left ({@code conmon} outlives an exec by minutes).
 */
final class PodmanService implements AutoCloseable {

    /**
     * runc, because crun refuses cgroups in hybrid mode; explicit ulimits, because podman's defaults fail to set
     * RLIMIT_NOFILE on such machines.
     */
    static final String CONTAINERS_CONF = """
            [containers]
            default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
            [engine]
            runtime = "runc"
            """;

    private static final Logger LOG = LoggerFactory.getLogger(PodmanService.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_GRACE = Duration.ofSeconds(5);
    private static final long PROBE_RETRY_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final int MAX_SOCKET_PATH = 100;

    private final String binary;
    private final Path directory;
    private final Path storage;
    private final Path socket;
    /** podman's run root and temporary directory: podman refuses a run root of more than 50 characters. */
    private final Path runtime;

    private final ScheduledThreadPoolExecutor timer;
    private final DockerApi api;
    /** The containers of this service's jobs that are not closed yet. */
    private final Set<String> containers = ConcurrentHashMap.newKeySet();

    /** Volatile, as {@link #availability} reads it without the lock a starting service holds. */
    private volatile Process process;

    private Thread stderrReader;
    private volatile String lastStderr = "";
    private volatile Probe probe;
    private boolean started;
    private volatile boolean closed;

    /** What {@code podman --version} said, and when. */
    private record Probe(boolean found, String description, long atNanos) {}

    /**
     * @param binary the podman binary: a path, or a name the PATH has
     * @param directory the service's own directory ({@code <data>/runner-podman}): socket, storage, configuration
     */
    PodmanService(String binary, Path directory) {
        this.binary = binary;
        this.directory = directory.toAbsolutePath().normalize();
        this.storage = this.directory.resolve("storage");
        this.runtime = runtimeDirectory(this.directory);
        Path inData = this.directory.resolve("podman.sock");
        // a unix socket's path has at most 107 bytes; a deep data directory gets it in the (short) runtime directory
        this.socket = inData.toString().getBytes(StandardCharsets.UTF_8).length <= MAX_SOCKET_PATH
                ? inData
                : runtime.resolve("podman.sock");
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "podman-api-timeouts");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        timer.setKeepAliveTime(10, TimeUnit.SECONDS);
        timer.allowCoreThreadTimeOut(true);
        this.api = new DockerApi(new UnixHttp(socket, timer), new ObjectMapper());
    }

    Path socket() {
        return socket;
    }

    Path storage() {
        return storage;
    }

    Path runtime() {
        return runtime;
    }

    Path directory() {
        return directory;
    }

    /** Whether jobs can start; cheap: {@code podman --version} is asked once (again every 10 s while it fails). */
    Availability availability() {
        if (closed) {
            return new Availability(false, "the podman runner is stopped");
        }
        Process p = process;
        if (p != null && !p.isAlive()) {
            return new Availability(
                    false, "the podman service stopped: " + exitReason(p) + " (the next job starts it again)");
        }
        Probe found = probe();
        return new Availability(found.found(), found.description());
    }

    private Probe probe() {
        Probe p = probe;
        if (p != null && (p.found() || System.nanoTime() - p.atNanos() < PROBE_RETRY_NANOS)) {
            return p;
        }
        p = new Probe(false, binary + " not found", System.nanoTime());
        try {
            Process version = new ProcessBuilder(binary, "--version")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (version.waitFor(10, TimeUnit.SECONDS) && version.exitValue() == 0) {
                // "podman version 4.3.1"
                String v = out.replaceFirst("(?s)^podman version\\s+", "")
                        .lines()
                        .findFirst()
                        .orElse(out);
                p = new Probe(true, "podman " + v + ", runc", System.nanoTime());
            } else {
                version.destroyForcibly();
                p = new Probe(false, binary + " --version failed: " + out, System.nanoTime());
            }
        } catch (IOException e) {
            p = new Probe(
                    false,
                    binary.contains("/") ? "podman not found at " + binary : "podman not found on PATH",
                    System.nanoTime());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Probe(false, "interrupted while asking " + binary + " --version", 0);
        }
        probe = p;
        return p;
    }

    /** The API of a running service, started first if it is not (or no longer) running. */
    synchronized DockerApi api() throws RunnerException {
        if (closed) {
            throw new RunnerException("the podman runner is stopped");
        }
        if (process != null && process.isAlive()) {
            return api;
        }
        if (process != null) {
            LOG.warn("the podman service stopped: {}; starting it again", exitReason(process));
            joinReader();
        }
        Probe p = probe();
        if (!p.found()) {
            throw new RunnerException(p.description());
        }
        try {
            start();
        } catch (IOException e) {
            throw new RunnerException("cannot start the podman service: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopProcess();
            throw new RunnerException("interrupted while the podman service started", e);
        }
        return api;
    }

    private void start() throws IOException, InterruptedException, RunnerException {
        long t0 = System.nanoTime();
        Files.createDirectories(directory);
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx------"));
        Files.createDirectories(storage);
        Files.createDirectories(runtime);
        Files.setPosixFilePermissions(runtime, PosixFilePermissions.fromString("rwx------"));
        Files.createDirectories(runtime.resolve("run"));
        Files.createDirectories(runtime.resolve("tmp"));
        Path conf = directory.resolve("containers.conf");
        Files.writeString(conf, CONTAINERS_CONF, StandardCharsets.UTF_8);
        // a service a crashed JVM left on this socket and storage: two services on one storage would step on each other
        Strays.kill(Strays.find(List.of(socketUri())));
        if (!started) {
            // conmon processes of a crashed run's containers, which are removed below
            Strays.kill(Strays.find(List.of(storage.toString())));
        }
        Files.deleteIfExists(socket);
        ProcessBuilder pb = new ProcessBuilder(
                        binary,
                        "--root",
                        storage.toString(),
                        "--runroot",
                        runtime.resolve("run").toString(),
                        "--tmpdir",
                        runtime.resolve("tmp").toString(),
                        // no private mount of the storage directory left behind after the service stops
                        "--storage-opt",
                        "overlay.skip_mount_home=true",
                        "system",
                        "service",
                        "--time=0",
                        socketUri())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("CONTAINERS_CONF", conf.toString());
        lastStderr = "";
        Process p = pb.start();
        process = p;
        stderrReader = new Thread(() -> readStderr(p), "podman-service-stderr");
        stderrReader.setDaemon(true);
        stderrReader.start();
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (!(Files.exists(socket) && api.ping(Duration.ofSeconds(2)))) {
            if (!p.isAlive()) {
                joinReader();
                throw new RunnerException("the podman service exited at start: " + exitReason(p));
            }
            if (System.nanoTime() > deadline) {
                stopProcess();
                throw new RunnerException(
                        "the podman service did not answer within " + START_TIMEOUT.toSeconds() + " s: " + lastStderr);
            }
            Thread.sleep(10);
        }
        long ready = System.nanoTime();
        // containers of a previous run in this storage (a crash, a kill -9): no job owns them any more
        for (String id : api.containers()) {
            if (!containers.contains(id)) {
                LOG.info("removing container {} left by a previous run", id);
                api.remove(id);
            }
        }
        started = true;
        LOG.info(
                "podman service started on {} in {} ms (leftovers checked in {} ms)",
                socket,
                (ready - t0) / 1_000_000,
                (System.nanoTime() - ready) / 1_000_000);
    }

    /**
     * {@code /run/atrium-podman-<12 hex of the directory's SHA-256>} (root's tmpfs, where podman keeps its run root
     * itself), else the same name in {@code java.io.tmpdir}: one per data directory, short enough for podman.
     */
    private static Path runtimeDirectory(Path directory) {
        String hex;
        try {
            hex = java.util.HexFormat.of()
                    .formatHex(java.security.MessageDigest.getInstance("SHA-256")
                            .digest(directory.toString().getBytes(StandardCharsets.UTF_8)))
                    .substring(0, 12);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        Path run = Path.of("/run");
        Path base =
                Files.isDirectory(run) && Files.isWritable(run) ? run : Path.of(System.getProperty("java.io.tmpdir"));
        return base.resolve("atrium-podman-" + hex);
    }

    /** Its last line on stderr, else how it ended. */
    private String exitReason(Process p) {
        int exit = p.exitValue();
        String how = exit > 128 ? "killed by signal " + (exit - 128) : "exit " + exit;
        return lastStderr.isEmpty() ? how : lastStderr + " (" + how + ")";
    }

    private String socketUri() {
        return "unix://" + socket;
    }

    private void readStderr(Process p) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (!line.isBlank()) {
                    lastStderr = line.strip();
                    LOG.debug("podman: {}", line);
                }
            }
        } catch (IOException e) {
            // the process is gone
        }
    }

    private void joinReader() {
        Thread t = stderrReader;
        if (t != null) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            stderrReader = null;
        }
    }

    /** The containers tracked now (not yet closed). */
    Set<String> tracked() {
        return Set.copyOf(containers);
    }

    void track(String id) {
        containers.add(id);
    }

    /** Forgets a closed container and ends the {@code conmon} processes its execs left (they linger for minutes). */
    void forget(String id) {
        containers.remove(id);
        Strays.kill(Strays.find(List.of(id, storage.toString())));
    }

    /** Removes every container, stops the service and every process it left; waits for them. Never throws. */
    @Override
    public void close() {
        List<String> ids;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            ids = new ArrayList<>(containers);
        }
        synchronized (this) {
            if (process != null && process.isAlive()) {
                for (String id : ids) {
                    try {
                        api.kill(id);
                    } catch (IOException e) {
                        LOG.warn("cannot kill container {}: {}", id, e.getMessage());
                    }
                }
                try {
                    List<String> all = new ArrayList<>(ids);
                    all.addAll(api.containers());
                    for (String id : all.stream().distinct().toList()) {
                        api.remove(id);
                    }
                } catch (IOException e) {
                    LOG.warn("cannot remove the containers: {}", e.getMessage());
                }
            }
            containers.clear();
            stopProcess();
            try {
                Files.deleteIfExists(socket);
            } catch (IOException e) {
                LOG.debug("cannot delete {}: {}", socket, e.toString());
            }
            removeRuntime();
            // conmon and the processes of containers the service could not remove
            Strays.kill(Strays.find(List.of(storage.toString())));
            Strays.kill(Strays.find(List.of(socketUri())));
            timer.shutdownNow();
            try {
                timer.awaitTermination(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Removes the run root in /run: state of this service's life only (a missing one makes the next podman start as
     * after a reboot). Left alone while anything is still mounted under it.
     */
    private void removeRuntime() {
        Process p = process;
        if (p != null && p.isAlive()) {
            return;
        }
        try {
            if (Files.readString(Path.of("/proc/self/mounts")).contains(runtime.toString())) {
                LOG.warn("{} still has mounts; left in place", runtime);
                return;
            }
            if (!Files.isDirectory(runtime, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
            try (java.util.stream.Stream<Path> files = Files.walk(runtime)) {
                for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(f);
                }
            }
        } catch (IOException e) {
            LOG.debug("cannot remove {}: {}", runtime, e.toString());
        }
    }

    private void stopProcess() {
        Process p = process;
        if (p == null) {
            return;
        }
        try {
            List<ProcessHandle> children = p.toHandle().descendants().toList();
            p.destroy(); // SIGTERM: podman shuts its API down cleanly
            if (!p.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("the podman service did not stop within {} s; killing it", STOP_GRACE.toSeconds());
                p.destroyForcibly();
                p.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
            Strays.kill(children);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
        }
        joinReader();
    }
}
