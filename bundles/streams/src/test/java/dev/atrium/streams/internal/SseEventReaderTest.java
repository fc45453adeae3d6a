package dev.atrium.streams.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.atrium.streams.api.ServerSentEvent;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The client side of event streams: what a model provider's or an MCP server's stream is read as. */
class SseEventReaderTest {

    private static SseEventReader reader(String text, int max) {
        return new SseEventReader(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), max);
    }

    @Test
    void eventsAreSplitAtBlankLinesWithAnyLineEndingAndMultiLineDataJoined() throws IOException {
        SseEventReader r = reader(
                ": comment\r\nevent: endpoint\r\ndata: /message?sessionId=1\r\n\r\nid: 7\ndata: {\"a\":\ndata: 1}\n\nevent: x\rdata:raw\r\r",
                1000);
        ServerSentEvent e = r.next();
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
        assertThrows(
                IOException.class,
                () -> reader("data: " + "x".repeat(5000) + "\n\n", 1000).next());
        assertThrows(
                IOException.class,
                () -> reader("data: 1\n".repeat(500) + "\n", 1000).next());
    }

    @Test
    void eventsWithoutANameAreMessagesAndOneTheStreamEndsInIsNotDispatched() throws IOException {
        SseEventReader r =
                reader(": comment\nevent: a\ndata: one\ndata: two\n\ndata:three\n\nevent: b\ndata: {}", 1000);
        List<String> seen = new ArrayList<>();
        r.forEach(e -> seen.add(e.name() + "=" + e.data()));
        assertEquals(List.of("a=one\ntwo", "message=three"), seen, "the stream ended in the middle of b");
        List<String> first = new ArrayList<>();
        reader("data: 1\n\ndata: 2\n\n", 1000).forEach(e -> first.add(e.data()) && false);
        assertEquals(List.of("1"), first, "a handler that says stop gets nothing more");
    }
}
