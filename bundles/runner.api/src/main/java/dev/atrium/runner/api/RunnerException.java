package dev.atrium.runner.api;

/** A job's container could not be started or used; the message says why in words an operator can act on. */
public class RunnerException extends Exception {

    private static final long serialVersionUID = 1L;

    public RunnerException(String message) {
        super(message);
    }

    public RunnerException(String message, Throwable cause) {
        super(message, cause);
    }
}
