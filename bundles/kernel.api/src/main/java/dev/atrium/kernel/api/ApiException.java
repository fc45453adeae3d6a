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

    /**
     * The spec's error body, {@code {"error":{"code","message"}}}, with its keys always in that order.
     *
     * @since 2.17
     */
    public static java.util.Map<String, Object> body(String code, String message) {
        java.util.Map<String, Object> error = new java.util.LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        return java.util.Map.of("error", error);
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
