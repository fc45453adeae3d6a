package dev.atrium.containers.podman.internal;

import dev.atrium.runner.api.ContainerSpec;
import dev.atrium.runner.api.JobContainer;
import dev.atrium.runner.api.RunnerException;
import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A job's running container: commands run in it as execs, their output streamed as it comes. */
final class PodmanContainer implements JobContainer {

    /** What a command killed with the container ends with (128 + SIGKILL), when podman saw no status. */
    static final int KILLED = 137;

    private static final Logger LOG = LoggerFactory.getLogger(PodmanContainer.class);

    private final String id;
    private final String name;
    private final Map<String, String> env;
    private final DockerApi api;
    private final PodmanService service;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    PodmanContainer(String id, String name, Map<String, String> env, DockerApi api, PodmanService service) {
        this.id = id;
        this.name = name;
        this.env = env;
        this.api = api;
        this.service = service;
    }

    @Override
    public String id() {
        return id;
    }

    String name() {
        return name;
    }

    @Override
    public int exec(List<String> command, Map<String, String> env, String workdir, Output output)
            throws RunnerException, InterruptedException {
        if (command.isEmpty()) {
            throw new IllegalArgumentException("no command");
        }
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (stopped.get()) {
            throw new RunnerException("the container " + name + " is stopped");
        }
        Map<String, String> merged = new LinkedHashMap<>(this.env);
        if (env != null) {
            merged.putAll(env);
        }
        List<String> environment = new ArrayList<>();
        merged.forEach((k, v) -> environment.add(k + "=" + v));
        String execId;
        try {
            execId = api.createExec(id, command, environment, workdir == null ? ContainerSpec.WORKSPACE : workdir);
            api.runExec(execId, output);
        } catch (ClosedByInterruptException e) {
            // the command goes on in the container until stop(), as the SPI says
            throw interrupted(e);
        } catch (IOException e) {
            if (stopped.get()) {
                return KILLED;
            }
            throw new RunnerException("cannot run " + command.get(0) + " in " + name + ": " + e.getMessage(), e);
        }
        return exitCode(execId, command);
    }

    private int exitCode(String execId, List<String> command) throws RunnerException, InterruptedException {
        try {
            // the stream ends as the process does; podman records its status a moment later at most
            for (int attempt = 0; attempt < 100; attempt++) {
                Integer code = api.execExitCode(execId);
                if (code != null) {
                    return code;
                }
                if (stopped.get()) {
                    return KILLED;
                }
                Thread.sleep(10);
            }
        } catch (ClosedByInterruptException e) {
            throw interrupted(e);
        } catch (IOException e) {
            if (stopped.get()) {
                return KILLED;
            }
            throw new RunnerException(
                    "lost the exit status of " + command.get(0) + " in " + name + ": " + e.getMessage(), e);
        }
        if (stopped.get()) {
            return KILLED;
        }
        throw new RunnerException("podman gave no exit status for " + command.get(0) + " in " + name);
    }

    private static InterruptedException interrupted(ClosedByInterruptException cause) {
        InterruptedException e = new InterruptedException("interrupted while a command ran");
        e.initCause(cause);
        return e;
    }

    @Override
    public void pause() throws RunnerException {
        pause(true);
    }

    @Override
    public void resume() throws RunnerException {
        pause(false);
    }

    private void pause(boolean pause) throws RunnerException {
        try {
            api.pause(id, pause);
        } catch (IOException e) {
            throw new RunnerException(
                    "cannot " + (pause ? "pause" : "resume") + " container " + name + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void stop() {
        if (!stopped.compareAndSet(false, true)) {
            return;
        }
        // SIGKILL to every process: the execs' streams end as their processes do
        boolean interrupted = Thread.interrupted(); // an interrupted caller must still reach the API
        try {
            api.kill(id);
        } catch (IOException e) {
            LOG.warn("cannot kill container {}: {}", name, e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        long t0 = System.nanoTime();
        stop();
        boolean interrupted = Thread.interrupted();
        try {
            api.remove(id);

        } catch (IOException e) {
            LOG.warn("cannot remove container {}: {}", name, e.getMessage());
        } catch (RuntimeException e) {
            LOG.warn("cannot remove container {}", name, e);
        } finally {
            service.forget(id);
            LOG.debug("container {} removed in {} ms", name, (System.nanoTime() - t0) / 1_000_000);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
