package dev.atrium.runner.api;

import java.util.List;
import java.util.Map;
import org.osgi.annotation.versioning.ConsumerType;
import org.osgi.annotation.versioning.ProviderType;

/** A running job container. Closing it removes the container; the workspace directory stays the caller's. */
@ProviderType
public interface JobContainer extends AutoCloseable {

    /** The runner's id of the container. */
    String id();

    /**
     * Runs {@code command} in the container and blocks until it ends, handing its output to {@code output} as it comes
     * (a line may arrive in pieces). Ends early, with the exit status the runner saw, when the container is stopped.
     *
     * @param workdir a directory in the container (null: {@link ContainerSpec#WORKSPACE})
     * @return the command's exit status
     * @throws RunnerException when the command cannot be run, or the runner lost the container
     * @throws InterruptedException when the calling thread is interrupted (the command goes on until {@link #stop})
     */
    int exec(List<String> command, Map<String, String> env, String workdir, Output output)
            throws RunnerException, InterruptedException;

    /**
     * Freezes every process of the container until {@link #resume}: nothing the job started can change its workspace
     * while the caller works on it from outside (the built-in actions do).
     *
     * @throws RunnerException when the runner cannot freeze it (the caller must then not touch the workspace)
     */
    void pause() throws RunnerException;

    /** Lets the processes {@link #pause} froze run again. */
    void resume() throws RunnerException;

    /** Stops the container at once (every command ends); safe to call from any thread, more than once. */
    void stop();

    /** Stops and removes the container; never throws. */
    @Override
    void close();

    /** Where a command's output goes. Called from the runner's thread, in order. */
    @ConsumerType
    interface Output {
        void write(boolean stderr, byte[] bytes, int offset, int length);
    }
}
