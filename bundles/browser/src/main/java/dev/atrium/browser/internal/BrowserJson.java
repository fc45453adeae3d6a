package dev.atrium.browser.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/** The JSON the browser-session routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class BrowserJson {

    private BrowserJson() {}

    /** A create: the viewport (default 1280x800) and an idle timeout no longer than the server's. */
    record NewSession(
            Integer width,
            Integer height,
            @JsonProperty("idle_timeout_seconds") Integer idleTimeoutSeconds) {}

    record Viewport(int width, int height) {}

    record BlockedRequest(String url, String reason, String at) {}

    record Session(
            String id,
            @JsonProperty("space_id") String spaceId,
            String status,
            String url,
            Viewport viewport,
            @JsonProperty("idle_timeout_seconds") long idleTimeoutSeconds,
            @JsonProperty("created_at") String createdAt,
            @JsonProperty("last_used_at") String lastUsedAt,
            long pid,
            List<BlockedRequest> blocked) {}

    record OneSession(@JsonProperty("browser_session") Session browserSession) {}

    record Ended(boolean success) {}

    record Goto(String url, @JsonProperty("timeout_ms") Integer timeoutMs) {}

    /** Where the page is after a navigation; {@code error} is Chromium's net error, {@code blocked} what it refused. */
    record Navigated(String url, String title, String error, boolean loaded, List<BlockedRequest> blocked) {}

    record Action(
            String kind,
            String selector,
            String role,
            String name,
            String text,
            Object value,
            String key,
            @JsonProperty("timeout_ms") Integer timeoutMs) {}

    record Acted(boolean ok, String url, String title, Map<String, Object> scroll) {}

    record Extract(String kind, String selector, String role, String name) {}

    /** One of {@code text}, {@code links}, {@code table} ({@code headers}, {@code rows}) or {@code nodes}. */
    record Extracted(
            String kind,
            String text,
            List<Map<String, String>> links,
            Map<String, Object> table,
            List<Map<String, Object>> nodes) {}
}
