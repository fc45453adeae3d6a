package dev.atrium.runs.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.regex.Pattern;

/**
 * What a model provider's refusal may tell the run's owner. The run's {@code error} is shown to the workspace's
 * Principal, but the provider's key is the operator's: an error body can echo it (or part of it) back, or carry
 * whatever an upstream proxy put there. So only the provider's own message is kept ({@code error.message}, as the
 * OpenAI and Anthropic APIs send it), bounded, with anything that looks like a key replaced.
 */
final class ProviderErrors {

    static final int MAX_MESSAGE = 300;
    /** API-key shapes: OpenAI/Anthropic style prefixes and long opaque tokens. */
    private static final Pattern KEYISH = Pattern.compile(
            "(?i)\\b(sk|pk|rk|key|api|ant|org|sess)[-_][A-Za-z0-9_\\-*.]{6,}|\\b[A-Za-z0-9_\\-]{32,}\\b");

    private ProviderErrors() {}

    /** A run error for a non-2xx answer: {@code "<provider> answered <status>: <message>"}. */
    static String describe(String provider, int status, byte[] body, String apiKey) {
        String message = message(body);
        return provider + " answered " + status + (message.isEmpty() ? "" : ": " + redact(message, apiKey));
    }

    /** A message from inside an otherwise successful stream ({@code error.message} of a chunk). */
    static String describeStreamError(String provider, String message, String apiKey) {
        String m = message == null ? "" : message.strip();
        return provider + " stream error" + (m.isEmpty() ? "" : ": " + redact(m, apiKey));
    }

    static String message(byte[] body) {
        if (body == null || body.length == 0) {
            return "";
        }
        try {
            JsonNode json = RunStore.JSON.readTree(body);
            JsonNode m = json.path("error").path("message");
            if (!m.isTextual()) {
                m = json.path("message");
            }
            if (!m.isTextual() && json.path("error").isTextual()) {
                m = json.path("error");
            }
            return m.isTextual() ? m.asText().strip() : "";
        } catch (java.io.IOException | RuntimeException e) {
            return ""; // not JSON: an HTML error page of a proxy, say; the status says enough
        }
    }

    static String redact(String message, String apiKey) {
        String m = message;
        if (apiKey != null && apiKey.length() >= 8) {
            m = m.replace(apiKey, "[redacted]");
            // providers often echo a masked key ("sk-abc***xyz"): its visible ends are the key's too
            m = m.replace(apiKey.substring(0, Math.min(apiKey.length(), 12)), "[redacted]");
        }
        m = KEYISH.matcher(m).replaceAll("[redacted]");
        m = m.replaceAll("\\p{Cntrl}", " ");
        if (m.length() > MAX_MESSAGE) {
            m = m.substring(0, MAX_MESSAGE) + "…";
        }
        return m;
    }

    static byte[] read(java.io.InputStream in) throws java.io.IOException {
        return in.readNBytes(16 * 1024);
    }
}
