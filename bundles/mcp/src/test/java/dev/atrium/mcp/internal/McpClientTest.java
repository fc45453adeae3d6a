package dev.atrium.mcp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class McpClientTest {

    /** These tests end before any event stream is read. */
    private static final java.util.function.BiFunction<
                    java.io.InputStream, Integer, dev.atrium.streams.api.EventStreamReader>
            NO_STREAMS = (in, max) -> {
                throw new AssertionError("no event stream is read here");
            };

    private static final EgressGuard REFUSES_ALL = uri -> {
        throw ApiException.badRequest("the host " + uri.getHost() + " is not allowed");
    };

    @Test
    void everyUrlPassesTheEgressGuardUnlessTheOperatorAllowsItsHost() throws Exception {
        McpClient client =
                new McpClient(REFUSES_ALL, " Internal-MCP.example , 10.0.0.7", TimeUnit.SECONDS.toNanos(2), NO_STREAMS);
        try {
            ApiException refused = assertThrows(ApiException.class, () -> client.check("https://mcp.example.com/mcp"));
            assertEquals(400, refused.status());
            assertTrue(refused.getMessage().contains("not allowed"));
            assertEquals(
                    "internal-mcp.example",
                    client.check("https://internal-mcp.example/mcp").getHost());
            assertEquals("10.0.0.7", client.check("http://10.0.0.7:8080/mcp").getHost());
            // a listing of a refused host fails before any connection, saying why
            IOException e = assertThrows(
                    IOException.class, () -> client.listTools("https://mcp.example.com/mcp", "streamable_http", null));
            assertTrue(e.getMessage().startsWith("refused:"), e.getMessage());
        } finally {
            client.deactivate();
        }
    }

    @Test
    void aServerUrlMustBeAnAbsoluteHttpUrlWithoutCredentialsOrFragment() throws Exception {
        McpClient client = new McpClient(uri -> java.util.List.of(), "", TimeUnit.SECONDS.toNanos(2), NO_STREAMS);
        try {
            for (String bad : new String[] {
                "ftp://h/mcp",
                "/relative",
                "http://u:p@h/mcp",
                "http://h/mcp#x",
                "http://h:99999/",
                "not a url",
                "http:///nohost"
            }) {
                assertEquals(
                        400,
                        assertThrows(ApiException.class, () -> client.check(bad), bad)
                                .status(),
                        bad);
            }
        } finally {
            client.deactivate();
        }
    }
}
