package dev.atrium.kernel.internal.edge;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.server.Request;

/**
 * The slowest a request body may arrive on the servlet path, as its {@link BodyPace} counts it: a body too slow fails
 * the next read that finds nothing with a 408 ({@link TooSlow}): the route sees its body cut (as when the client goes),
 * the envelope answers a text body's 408, and the connection is closed. Jetty 12.0 keeps
 * {@code HttpConfiguration.setMinRequestDataRate} but no longer enforces it; the idle timeout alone lets a client
 * trickle a byte every few seconds for good. A body that stops altogether is the idle timeout's.
 */
final class BodyRate implements HttpConfiguration.Customizer {

    private final LongSupplier minBytesPerSecond;
    private final LongSupplier graceMillis;

    BodyRate(LongSupplier minBytesPerSecond, LongSupplier graceMillis) {
        this.minBytesPerSecond = minBytesPerSecond;
        this.graceMillis = graceMillis;
    }

    @Override
    public Request customize(Request request, HttpFields.Mutable responseHeaders) {
        long min = minBytesPerSecond.getAsLong();
        // a request without a body (most of them) needs no meter
        if (min > 0 && (request.getLength() > 0 || request.getHeaders().contains(HttpHeader.TRANSFER_ENCODING))) {
            long grace = TimeUnit.MILLISECONDS.toNanos(graceMillis.getAsLong());
            request.addHttpStreamWrapper(stream -> new Metered(stream, min, grace));
        }
        return request;
    }

    private static final class Metered extends HttpStream.Wrapper {
        private final BodyPace pace;
        private Content.Chunk failure;

        Metered(HttpStream stream, long min, long graceNanos) {
            super(stream);
            this.pace = new BodyPace(min, graceNanos);
        }

        @Override
        public Content.Chunk read() {
            if (failure != null) {
                return failure;
            }
            Content.Chunk chunk = super.read();
            long now = System.nanoTime();
            if (chunk != null) {
                pace.arrived(chunk.remaining(), now);
                return chunk;
            }
            pace.stopWaiting(now);
            if (pace.tooSlow(now)) {
                failure = Content.Chunk.from(new TooSlow(pace.minBytesPerSecond()));
                return failure;
            }
            pace.waiting(now);
            return null;
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
