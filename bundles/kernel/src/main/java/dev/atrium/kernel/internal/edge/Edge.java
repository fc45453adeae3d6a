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
 * registers: a stopping server's 503 ({@link ServerStop}), the count of requests in flight the stop waits for, then the
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
        if (!stop.enter()) {
            response.setStatus(503);
            response.getHeaders().put(JSON_TYPE);
            response.getHeaders().put(RETRY_AFTER);
            response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, STOPPING.length);
            response.write(true, ByteBuffer.wrap(STOPPING), callback);
            return true;
        }
        try {
            for (EdgeHandlers.Named h : handlers.ordered()) {
                if (h.handler().handle(request, response, callback)) {
                    return true;
                }
            }
            return super.handle(request, response, callback);
        } finally {
            stop.exit();
        }
    }
}
