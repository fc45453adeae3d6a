package dev.atrium.kernel.internal.edge;

import dev.atrium.kernel.internal.http.ErrorBody;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The kernel's Jetty handler in front of the servlet whiteboard, so first for every request whatever a bundle
 * registers: a stopping server's 503 ({@link ServerStop}), the count of answers in flight the stop waits for, then the
 * {@link EdgeHandlers} in the order of their names, then the servlets (and there the kernel's envelope, the first
 * filter).
 */
final class Edge extends Handler.Wrapper {

    private static final HttpField JSON_TYPE = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");
    private static final HttpField RETRY_AFTER = new PreEncodedHttpField(HttpHeader.RETRY_AFTER, "5");
    private static final byte[] STOPPING = ErrorBody.bytes(503, "the server is stopping; try again shortly");

    private final ServerStop stop;
    private final EdgeHandlers handlers;

    Edge(Handler servlets, ServerStop stop, EdgeHandlers handlers) {
        super(servlets);
        this.stop = stop;
        this.handlers = handlers;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        ServerStop.Flight flight = stop.enter(request, response);
        if (flight == null) {
            response.setStatus(503);
            response.getHeaders().put(JSON_TYPE);
            response.getHeaders().put(RETRY_AFTER);
            response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, STOPPING.length);
            response.write(true, ByteBuffer.wrap(STOPPING), callback);
            return true;
        }
        // counted out when the response is complete (its last bytes written), not when handle returns: the stop must
        // not close a connection under the end of an answer
        Callback counted = new Callback.Nested(callback) {
            @Override
            public void completed() {
                stop.exit(flight);
            }
        };
        boolean handled = false;
        try {
            for (EdgeHandlers.Named h : handlers.ordered()) {
                if (h.handler().handle(request, response, counted)) {
                    handled = true;
                    return true;
                }
            }
            handled = super.handle(request, response, counted);
            return handled;
        } finally {
            if (!handled) {
                // not taken, or thrown: Jetty answers with the callback it holds, not this one
                stop.exit(flight);
            }
        }
    }
}
