package dev.atrium.streams.api;

import java.io.IOException;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A capability's live streams on this instance. Every subscriber gets its stream's events after the position it
 * resumes from, each once and in position order, whichever instance committed them: the backlog from the
 * {@link Feed}, then live events as they commit here ({@link #committed}) or are announced on the hub's channel.
 * Writes never block the thread that fans an event out. The capability closes its hub when its component stops:
 * SSE clients see their response end, WebSocket clients a 1012, and both resume on the next version.
 *
 * @param <E> the capability's event
 */
@ProviderType
public interface StreamHub<E> extends AutoCloseable {

    /** An event this instance committed: its subscribers here get it now, from memory, not from the table. */
    void committed(E event);

    /**
     * Answers the request with the stream {@code key} as Server-Sent Events after position {@code after}
     * ({@code id} the position, {@code event} the type, {@code data} the JSON; comments as heartbeats). The caller has
     * authorised the request; what it owns the hub does not decide.
     *
     * @throws dev.atrium.kernel.api.ApiException 503 when the hub is closed or the HTTP service is not Jetty 12
     */
    void serveSse(HttpServletRequest request, HttpServletResponse response, String key, long after);

    /**
     * Upgrades the request to a WebSocket carrying the stream {@code key} after position {@code after}: one text
     * message (the JSON) per event, pings as heartbeats, 1000 after a terminal event, 1012 when the hub closes.
     *
     * @throws dev.atrium.kernel.api.ApiException 426 without {@code Upgrade: websocket}, 400 for a bad handshake, 503
     *         when the hub is closed or the server has no WebSocket support
     */
    void serveWebSocket(HttpServletRequest request, HttpServletResponse response, String key, long after)
            throws IOException;

    /** The subscribers connected here now. */
    int subscribers();

    /** Ends every stream and stops the hub's threads; later requests are answered 503. */
    @Override
    void close();
}
