package dev.atrium.streams.api;

import java.io.IOException;
import org.osgi.annotation.versioning.ConsumerType;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Reads the events of another server's {@code text/event-stream} body (a model provider's answer, an MCP server's
 * stream), as the WHATWG format has them: lines ending in LF, CRLF or CR; comments skipped; an event dispatched at a
 * blank line, and one the stream ends in the middle of not at all. An event larger than the reader's bound is an
 * {@link IOException}, not memory spent.
 */
@ProviderType
public interface EventStreamReader {

    /** The next event with data, or null at the end of the stream. */
    ServerSentEvent next() throws IOException;

    /** Hands each event to {@code handler} until the stream ends or the handler says stop. */
    default void forEach(Handler handler) throws IOException {
        for (ServerSentEvent e; (e = next()) != null; ) {
            if (!handler.event(e)) {
                return;
            }
        }
    }

    /** What is done with each event. */
    @ConsumerType
    interface Handler {
        /** Returns false to stop reading. */
        boolean event(ServerSentEvent event) throws IOException;
    }
}
