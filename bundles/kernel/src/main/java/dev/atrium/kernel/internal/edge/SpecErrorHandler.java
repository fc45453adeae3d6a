package dev.atrium.kernel.internal.edge;

import dev.atrium.kernel.internal.http.ErrorBody;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * The server-wide error handler: what Jetty answers itself, before any servlet or filter of the application sees the
 * request (a request line or header its parser refuses, a target too long, headers too large, a bad
 * {@code Content-Length} or chunk), is the spec's error body too. Its message is Jetty's short reason ("Bad Request",
 * "URI Too Long", "Invalid content length"), never a stack trace. The servlet context keeps its own error handler; the
 * request envelope makes those answers the spec's.
 */
final class SpecErrorHandler extends ErrorHandler {

    private static final HttpField JSON_TYPE = new PreEncodedHttpField(HttpHeader.CONTENT_TYPE, "application/json");

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        int status = response.getStatus();
        String message = (String) request.getAttribute(ERROR_MESSAGE);
        Throwable cause = (Throwable) request.getAttribute(ERROR_EXCEPTION);
        if (cause instanceof HttpException http) {
            status = http.getCode();
            response.setStatus(status);
            if (message == null) {
                message = http.getReason();
            }
        }
        if (status < 400) {
            status = 500;
            response.setStatus(status);
        }
        if (HttpStatus.hasNoBody(status) || HttpMethod.HEAD.is(request.getMethod())) {
            callback.succeeded();
            return true;
        }
        if (message == null || message.isBlank()) {
            message = HttpStatus.getMessage(status);
        }
        byte[] body = ErrorBody.bytes(status, status >= 500 ? HttpStatus.getMessage(status) : message);
        response.getHeaders().put(JSON_TYPE);
        response.getHeaders().put(ERROR_CACHE_CONTROL);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
        return true;
    }
}
