package dev.atrium.browser.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.browser.internal.BrowserAction.Target;
import dev.atrium.kernel.api.ApiException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A session's page as the DevTools protocol reaches it (one flat target session): finding elements, running the
 * {@link Scripts} on them, input events, the accessibility tree. A script that throws is the caller's mistake when a
 * selector does not parse (400), else the page's state (409).
 */
final class Page {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);

    private final Cdp cdp;
    private final String session;

    Page(Cdp cdp, String session) {
        this.cdp = cdp;
        this.session = session;
    }

    void mouse(String type, double x, double y) throws IOException {
        cdp.call(
                "Input.dispatchMouseEvent",
                Map.of("type", type, "x", x, "y", y, "button", "left", "clickCount", 1),
                session,
                COMMAND_TIMEOUT);
    }

    void key(BrowserAction.Key key) throws IOException {
        Map<String, Object> down = new LinkedHashMap<>();
        down.put("type", key.text() != null ? "keyDown" : "rawKeyDown");
        down.put("key", key.key());
        down.put("code", key.code());
        down.put("windowsVirtualKeyCode", key.keyCode());
        if (key.text() != null) {
            down.put("text", key.text());
        }
        cdp.call("Input.dispatchKeyEvent", down, session, COMMAND_TIMEOUT);
        cdp.call(
                "Input.dispatchKeyEvent",
                Map.of("type", "keyUp", "key", key.key(), "code", key.code(), "windowsVirtualKeyCode", key.keyCode()),
                session,
                COMMAND_TIMEOUT);
    }

    /** The element's remote object id, waiting up to {@code timeoutMs} for it; 409 when none turns up. */
    String locate(Target target, int timeoutMs, boolean visibleOnly) throws IOException {
        String expression = "(" + Scripts.LOCATE + ")(" + Cdp.JSON.writeValueAsString(target.toJson()) + ", "
                + timeoutMs + ", " + visibleOnly + ")";
        JsonNode answer = cdp.call(
                "Runtime.evaluate",
                Map.of("expression", expression, "awaitPromise", true, "returnByValue", false),
                session,
                Duration.ofMillis(timeoutMs + 10_000L));
        failOnException(answer, target);
        JsonNode result = answer.path("result");
        if (!result.hasNonNull("objectId")
                || "null".equals(result.path("subtype").asText())) {
            throw ApiException.conflict("no element matches " + target.describe() + " within " + timeoutMs + " ms");
        }
        return result.path("objectId").asText();
    }

    String evaluateHandle(String expression) throws IOException {
        JsonNode answer = cdp.call(
                "Runtime.evaluate", Map.of("expression", expression, "returnByValue", false), session, COMMAND_TIMEOUT);
        failOnException(answer, null);
        String objectId = answer.path("result").path("objectId").asText(null);
        if (objectId == null) {
            throw ApiException.conflict("the page has no document");
        }
        return objectId;
    }

    JsonNode evaluate(String expression, boolean awaitPromise) throws IOException {
        JsonNode answer = cdp.call(
                "Runtime.evaluate",
                Map.of("expression", expression, "awaitPromise", awaitPromise, "returnByValue", true),
                session,
                COMMAND_TIMEOUT);
        failOnException(answer, null);
        return answer.path("result").path("value");
    }

    JsonNode callOn(String objectId, String function, Object... arguments) throws IOException {
        List<Map<String, Object>> args = new ArrayList<>();
        for (Object a : arguments) {
            args.add(Map.of("value", a));
        }
        JsonNode answer = cdp.call(
                "Runtime.callFunctionOn",
                Map.of("objectId", objectId, "functionDeclaration", function, "arguments", args, "returnByValue", true),
                session,
                COMMAND_TIMEOUT);
        failOnException(answer, null);
        return answer.path("result").path("value");
    }

    /** A script that threw: a bad selector is the caller's mistake (400); anything else the page's state (409). */
    static void failOnException(JsonNode answer, Target target) {
        JsonNode details = answer.get("exceptionDetails");
        if (details == null) {
            return;
        }
        String description = details.path("exception")
                .path("description")
                .asText(details.path("text").asText());
        String firstLine = description.lines().findFirst().orElse("error");
        if (target != null && target.selector() != null && firstLine.startsWith("SyntaxError")) {
            throw ApiException.badRequest(
                    "selector is not a valid CSS selector: " + BrowserSession.abbreviate(target.selector(), 200));
        }
        throw ApiException.conflict("the page's script failed: " + BrowserSession.abbreviate(firstLine, 300));
    }

    /** The accessibility tree, or the subtree of {@code root}: nodes with their role and name, at most 5000. */
    List<Map<String, Object>> accessibility(String root) throws IOException {
        JsonNode nodes = root == null
                ? cdp.call("Accessibility.getFullAXTree", Map.of(), session, COMMAND_TIMEOUT)
                        .path("nodes")
                : cdp.call("Accessibility.queryAXTree", Map.of("objectId", root), session, COMMAND_TIMEOUT)
                        .path("nodes");
        List<Map<String, Object>> out = new ArrayList<>();
        for (JsonNode node : nodes) {
            if (node.path("ignored").asBoolean(false)) {
                continue;
            }
            String role = node.path("role").path("value").asText("");
            String name = node.path("name").path("value").asText("");
            if (role.isEmpty() || "none".equals(role) || "generic".equals(role) || "InlineTextBox".equals(role)) {
                continue;
            }
            if ("StaticText".equals(role) && name.isBlank()) {
                continue;
            }
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("role", role);
            one.put("name", name);
            JsonNode value = node.path("value").path("value");
            if (!value.isMissingNode() && !value.isNull()) {
                one.put("value", value.asText());
            }
            for (JsonNode property : node.path("properties")) {
                String p = property.path("name").asText();
                if (p.equals("level") || p.equals("checked") || p.equals("disabled") || p.equals("focused")) {
                    one.put(p, Cdp.JSON.convertValue(property.path("value").path("value"), Object.class));
                }
            }
            out.add(one);
            if (out.size() >= 5_000) {
                break;
            }
        }
        return out;
    }
}
