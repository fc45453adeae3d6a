package dev.atrium.streams.internal;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.Consumer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.ConnectionMetaData;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The response on Jetty's connection. The headers go out through Jetty's response; on a persistent HTTP/1.1
 * connection (the usual case, where Jetty frames the body as chunks) every frame after them goes straight to the
 * connection's {@link EndPoint} ({@link ChunkedEndPointOutput}). Through Jetty's response each write also passed its
 * channel state, its chunk generator and a pooled header buffer, and the socket write copied the frame out of the
 * heap: at a thousand subscribers per event that was about a third of the fan-out's CPU. Jetty still ends the
 * response (the last chunk), so the connection stays usable; on any other framing (HTTP/1.0, {@code Connection:
 * close}, HTTP/2) every write goes through Jetty's response.
 */
final class JettyOutput implements Output {
    private static final ByteBuffer NOTHING = ByteBuffer.allocate(0);
    private final Response response;
    private Callback callback;
    private Runnable done;
    private Consumer<Throwable> failed;
    /** Set once the headers went out, if the body is chunked HTTP/1.1 on a persistent connection. */
    private volatile ChunkedEndPointOutput direct;

    JettyOutput(Response response) {
        this.response = response;
    }

    @Override
    public void bind(Runnable done, Consumer<Throwable> failed) {
        this.done = done;
        this.failed = failed;
        // one stateless callback for all the stream's writes, not one per frame (a thousand per event)
        this.callback = Callback.from(done, failed);
    }

    @Override
    public void open() {
        response.write(
                false,
                NOTHING,
                Callback.from(
                        () -> {
                            EndPoint endPoint = chunkedEndPoint();
                            if (endPoint != null) {
                                ChunkedEndPointOutput out = new ChunkedEndPointOutput(endPoint);
                                out.bind(done, failed);
                                // Jetty fails only its own pending writes on the connection's idle timeout, not ours
                                response.getRequest().addIdleTimeoutListener(out::idleTimedOut);
                                direct = out;
                            }
                            done.run();
                        },
                        failed));
    }

    /**
     * The connection's end point if Jetty chose chunks for this body: HTTP/1.1, persistent, no length (Jetty's
     * {@code HttpGenerator} chunks exactly then). Jetty has written nothing of the body, so it owes no chunk's CRLF.
     */
    private EndPoint chunkedEndPoint() {
        ConnectionMetaData meta = response.getRequest().getConnectionMetaData();
        if (meta.getHttpVersion() != HttpVersion.HTTP_1_1
                || !meta.isPersistent()
                || response.getHeaders().contains(HttpHeader.CONTENT_LENGTH)) {
            return null;
        }
        return meta.getConnection().getEndPoint();
    }

    @Override
    public void write(Frame frame) {
        ChunkedEndPointOutput d = direct;
        if (d != null) {
            d.write(frame);
        } else {
            response.write(false, ByteBuffer.wrap(frame.text), callback);
        }
    }

    @Override
    public void write(List<Frame> frames) {
        ChunkedEndPointOutput d = direct;
        if (d != null) {
            d.write(frames);
            return;
        }
        int size = 0;
        for (Frame f : frames) {
            size += f.text.length;
        }
        ByteBuffer batch = ByteBuffer.allocate(size);
        for (Frame f : frames) {
            batch.put(f.text);
        }
        response.write(false, batch.flip(), callback);
    }
}
