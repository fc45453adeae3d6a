package dev.atrium.kernel.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonMappers;
import java.nio.charset.StandardCharsets;

/** The spec's error body {@code {"error":{"code","message"}}} and the code that goes with each status. */
public final class ErrorBody {

    private static final ObjectMapper JSON = JsonMappers.create();

    private ErrorBody() {}

    public static String codeFor(int status) {
        return switch (status) {
            case 400 -> "BAD_REQUEST";
            case 401 -> "UNAUTHORIZED";
            case 403 -> "FORBIDDEN";
            case 404 -> "NOT_FOUND";
            case 405 -> "METHOD_NOT_ALLOWED";
            case 406 -> "NOT_ACCEPTABLE";
            case 409 -> "CONFLICT";
            case 410 -> "GONE";
            case 408 -> "REQUEST_TIMEOUT";
            case 411 -> "LENGTH_REQUIRED";
            case 413 -> "PAYLOAD_TOO_LARGE";
            case 414 -> "URI_TOO_LONG";
            case 415 -> "UNSUPPORTED_MEDIA_TYPE";
            case 429 -> "RATE_LIMITED";
            case 431 -> "REQUEST_HEADER_FIELDS_TOO_LARGE";
            case 503 -> "SERVICE_UNAVAILABLE";
            case 505 -> "HTTP_VERSION_NOT_SUPPORTED";
            case 507 -> "INSUFFICIENT_STORAGE";
            default -> status >= 500 ? "INTERNAL_ERROR" : "BAD_REQUEST";
        };
    }

    public static String json(String code, String message) {
        try {
            return JSON.writeValueAsString(ApiException.body(code, message));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public static byte[] bytes(int status, String message) {
        return json(codeFor(status), message).getBytes(StandardCharsets.UTF_8);
    }

    /** Whether {@code body} already is a spec error body. */
    public static boolean isErrorBody(byte[] body) {
        if (body.length == 0 || body[0] != '{') {
            return false;
        }
        try {
            JsonNode error = JSON.readTree(body).get("error");
            return error != null
                    && error.path("code").isTextual()
                    && error.path("message").isTextual();
        } catch (Exception e) {
            return false;
        }
    }
}
