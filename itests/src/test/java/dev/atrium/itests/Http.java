package dev.atrium.itests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A real HTTP client on loopback, speaking JSON; one per caller (token). */
final class Http {

    static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    record Reply(int status, JsonNode json, String body, HttpResponse<String> raw) {
        JsonNode get(String field) {
            return json.get(field);
        }

        String errorCode() {
            return json.path("error").path("code").asText(null);
        }
    }

    private final String base;
    private final String token;

    Http(String base, String token) {
        this.base = base;
        this.token = token;
    }

    Http as(String otherToken) {
        return new Http(base, otherToken);
    }

    String base() {
        return base;
    }

    /** The bearer token this client sends, or null. */
    String token() {
        return token;
    }

    Reply get(String path) {
        return send("GET", path, null, "application/json");
    }

    Reply delete(String path) {
        return send("DELETE", path, null, "application/json");
    }

    Reply post(String path, Object body) {
        return send("POST", path, body, "application/json");
    }

    Reply patch(String path, Object body) {
        return send("PATCH", path, body, "application/json");
    }

    Reply put(String path, Object body) {
        return send("PUT", path, body, "application/json");
    }

    /** Sends {@code body} as is when it is a String (raw JSON text), else as JSON. */
    Reply send(String method, String path, Object body, String contentType) {
        try {
            HttpRequest.Builder b =
                    HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
            if (token != null) {
                b.header("Authorization", "Bearer " + token);
            }
            if (body == null) {
                b.method(method, HttpRequest.BodyPublishers.noBody());
            } else {
                byte[] bytes = body instanceof String s
                        ? s.getBytes()
                        : body instanceof byte[] raw ? raw : JSON.writeValueAsBytes(body);
                b.header("Content-Type", contentType).method(method, HttpRequest.BodyPublishers.ofByteArray(bytes));
            }
            HttpResponse<String> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
            JsonNode json = null;
            try {
                json = r.body().isEmpty() ? null : JSON.readTree(r.body());
            } catch (IOException notJson) {
                // left null: the assertion that needs JSON says so
            }
            return new Reply(r.statusCode(), json, r.body(), r);
        } catch (IOException e) {
            throw new IllegalStateException(method + " " + path + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
