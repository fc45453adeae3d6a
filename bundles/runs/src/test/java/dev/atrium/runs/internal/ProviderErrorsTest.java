package dev.atrium.runs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ProviderErrorsTest {

    static final String KEY = "sk-proj-9f8e7d6c5b4a39281706f5e4d3c2b1a0";

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theProvidersOwnMessageIsKeptAndTheOperatorsKeyNeverReachesTheRunsOwner() {
        String e = ProviderErrors.describe(
                "openai",
                401,
                b("{\"error\":{\"message\":\"Incorrect API key provided: " + KEY
                        + ". You can find your API key at https://x\",\"type\":\"invalid_request_error\"}}"),
                KEY);
        assertTrue(e.startsWith("openai answered 401: Incorrect API key provided: "), e);
        assertFalse(e.contains(KEY), e);
        assertFalse(e.contains("9f8e7d6c5b4a3928"), e);
        assertFalse(e.contains("invalid_request_error"), "only the message, not the rest of the body: " + e);
    }

    @Test
    void aMaskedEchoOfTheKeyIsRedactedToo() {
        String e = ProviderErrors.describe(
                "openai",
                401,
                b("{\"error\":{\"message\":\"Incorrect API key provided: sk-proj-9f8e****b1a0.\"}}"),
                KEY);
        assertFalse(e.contains("sk-proj-9f8e"), e);
    }

    @Test
    void aBodyThatIsNotTheProvidersJsonShowsOnlyTheStatus() {
        assertEquals(
                "anthropic answered 502",
                ProviderErrors.describe(
                        "anthropic",
                        502,
                        b("<html><body>upstream proxy secret-internal-host.corp:8443 failed</body></html>"),
                        KEY));
        assertEquals("anthropic answered 500", ProviderErrors.describe("anthropic", 500, new byte[0], KEY));
    }

    @Test
    void longMessagesAreBoundedAndControlCharactersFlattened() {
        String e = ProviderErrors.describe(
                "anthropic",
                400,
                b("{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\""
                        + "line one\\nline two " + "x ".repeat(400) + "\"}}"),
                "");
        assertTrue(e.length() <= "anthropic answered 400: ".length() + ProviderErrors.MAX_MESSAGE + 1, e);
        assertTrue(e.contains("line one line two"), e);
    }
}
