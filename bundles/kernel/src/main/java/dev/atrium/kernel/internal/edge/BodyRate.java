package dev.atrium.kernel.internal.edge;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.server.Request;

/**
 * The slowest a request body may arrive: after a grace period counted from the first read, a body whose average rate
 * falls below the minimum fails the read with a 408, so the route sees its body cut (as when the client goes), the
 * envelope answers a text body's 408, and the connection is closed. Jetty 12.0 keeps {@code HttpConfiguration.setMinRequestDataRate} but no longer enforces it; the idle
 * timeout alone lets a client trickle a byte every few seconds for good. A body that stops altogether is the idle
 * timeout's.
 */
final class BodyRate implements HttpConfiguration.Customizer {

    private final long minBytesPerSecond;
    private final long graceNanos;

    BodyRate(long minBytesPerSecond, long graceMillis) {
        this.minBytesPerSecond = minBytesPerSecond;
        this.graceNanos = TimeUnit.MILLISECONDS.toNanos(graceMillis);
    }

    @Override
    public Request customize(Request request, HttpFields.Mutable responseHeaders) {
        if (minBytesPerSecond > 0) {
            request.addHttpStreamWrapper(Metered::new);
        }
        return request;
    }

    private final class Metered extends HttpStream.Wrapper {
        private long started;
        private long bytes;
        private Content.Chunk failure;

        Metered(HttpStream stream) {
            super(stream);
        }

        @Override
        public Content.Chunk read() {
            if (failure != null) {
                return failure;
            }
            long now = System.nanoTime();
            if (started == 0) {
                started = now;
            }
            Content.Chunk chunk = super.read();
            if (chunk != null) {
                bytes += chunk.remaining();
                if (chunk.isLast()) {
                    return chunk;
                }
            }
            long elapsed = now - started;
            if (elapsed > graceNanos && bytes * TimeUnit.SECONDS.toNanos(1) / elapsed < minBytesPerSecond) {
                if (chunk != null) {
                    chunk.release();
                }
                failure = Content.Chunk.from(new TooSlow(minBytesPerSecond));
                return failure;
            }
            return chunk;
        }
    }

    /**
     * The body's failure: an {@link IOException}, so a route reading a binary body sees it as a client that went, and a
     * 408 for whoever answers (the envelope, for a text body).
     */
    static final class TooSlow extends IOException implements HttpException {
        private static final long serialVersionUID = 1L;

        TooSlow(long minBytesPerSecond) {
            super("the request body arrived slower than " + minBytesPerSecond + " bytes per second");
        }

        @Override
        public int getCode() {
            return HttpStatus.REQUEST_TIMEOUT_408;
        }

        @Override
        public String getReason() {
            return getMessage();
        }
    }
}
