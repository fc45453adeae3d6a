package dev.atrium.resource.api;

/**
 * A failure a provider reports to the API client. The core answers with the status of its {@link Kind} and shows the
 * message, so it must say what was wrong and never carry a secret or another resource's data.
 */
public class ResourceException extends Exception {

    private static final long serialVersionUID = 1L;

    /** Whose fault it is, and so the HTTP status the client gets. */
    public enum Kind {
        /** 400: the input was wrong (a malformed key, a bad query, a config the backend refuses). */
        BAD_INPUT,
        /** 403: the call needs more than {@link ResourceContext#access()} allows. */
        FORBIDDEN,
        /** 404: what the call named (a key, an object, a table) does not exist. */
        NOT_FOUND,
        /** 409: the call conflicts with the current state. */
        CONFLICT,
        /** 413: the value or result is larger than the provider accepts. */
        TOO_LARGE,
        /** 503: the backend does not answer now; a retry may succeed. */
        UNAVAILABLE
    }

    private final Kind kind;

    public ResourceException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public ResourceException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    public static ResourceException badInput(String message) {
        return new ResourceException(Kind.BAD_INPUT, message);
    }

    public static ResourceException notFound(String message) {
        return new ResourceException(Kind.NOT_FOUND, message);
    }

    public static ResourceException unavailable(String message, Throwable cause) {
        return new ResourceException(Kind.UNAVAILABLE, message, cause);
    }
}
