package dev.atrium.mcp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class SseReaderTest {

    private static SseReader reader(String text, int max) {
        return new SseReader(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), max);
    }

    @Test
    void eventsAreSplitAtBlankLinesWithAnyLineEndingAndMultiLineDataJoined() throws IOException {
        SseReader r = reader(": comment\r\nevent: endpoint\r\ndata: /message?sessionId=1\r\n\r\nid: 7\ndata: {\"a\":\ndata: 1}\n\nevent: x\rdata:raw\r\r", 1000);
        SseReader.Event e = r.next();
        assertEquals("endpoint", e.name());
        assertEquals("/message?sessionId=1", e.data());
        e = r.next();
        assertEquals("message", e.name());
        assertEquals("{\"a\":\n1}", e.data());
        assertEquals("7", e.id());
        e = r.next();
        assertEquals("x", e.name());
        assertEquals("raw", e.data());
        assertNull(r.next());
    }

    @Test
    void anEventLargerThanTheLimitIsAnErrorNotMemorySpent() {
        assertThrows(IOException.class, () -> reader("data: " + "x".repeat(5000) + "\n\n", 1000).next());
        assertThrows(IOException.class, () -> reader("data: 1\n".repeat(500) + "\n", 1000).next());
    }

    @Test
    void toolNamesAreWhatEveryModelApiAccepts() {
        assertEquals("mcp_everything_get_sum", McpToolSource.toolName("everything", "get-sum"));
        assertEquals("mcp_old_sse_echo", McpToolSource.toolName("old-sse", "echo"));
        assertEquals(64, McpToolSource.toolName("s", "t".repeat(100)).length());
        assertEquals("mcp_s_a_b_c", McpToolSource.toolName("s", "a.b/C"));
    }
}
