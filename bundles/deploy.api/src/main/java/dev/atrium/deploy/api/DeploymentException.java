package dev.atrium.deploy.api;

/** A deployment a provider cannot validate or run. Its message is shown to the API client; it carries no secret. */
public class DeploymentException extends Exception {

    private static final long serialVersionUID = 1L;

    /** Whose fault it is. */
    public enum Kind {
        /** The artifact or its settings cannot run (client error, 400). */
        INVALID,
        /** The runtime failed or is not available (503). */
        UNAVAILABLE
    }

    private final Kind kind;

    public DeploymentException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public DeploymentException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
