package dev.atrium.kernel.api;

/**
 * A failure the client is told about, answered by the kernel as {@code {"error":{"code","message"}}}
 * with {@link #status()}. The message must say what was wrong without leaking other Principals' data.
 */
public class ApiException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;
    private final String code;

    public ApiException(int status, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    public static ApiException badRequest(String message) {
        return new ApiException(400, "BAD_REQUEST", message);
    }

    public static ApiException unauthorized(String message) {
        return new ApiException(401, "UNAUTHORIZED", message);
    }

    public static ApiException forbidden(String message) {
        return new ApiException(403, "FORBIDDEN", message);
    }

    public static ApiException notFound(String message) {
        return new ApiException(404, "NOT_FOUND", message);
    }

    public static ApiException conflict(String message) {
        return new ApiException(409, "CONFLICT", message);
    }

    public static ApiException gone(String message) {
        return new ApiException(410, "GONE", message);
    }

    /** 503: the server cannot answer now but may on a retry (a database timeout, a capability restarting). */
    public static ApiException unavailable(String message) {
        return new ApiException(503, "SERVICE_UNAVAILABLE", message);
    }
}
