package dev.atrium.streams.internal;

import dev.atrium.kernel.api.ApiException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletRequestWrapper;
import javax.servlet.ServletResponse;
import javax.servlet.ServletResponseWrapper;
import org.eclipse.jetty.ee10.servlet.ServletContextResponse;
import org.eclipse.jetty.server.Response;

/**
 * The container's exchange under the whiteboard's javax wrappers (the kernel's, then Felix's wrapper of the jakarta
 * request and response): streams write to Jetty's connection and upgrade Jetty's exchange, past every wrapper.
 */
final class Exchanges {

    private Exchanges() {}

    static jakarta.servlet.http.HttpServletRequest jakartaRequest(ServletRequest req) {
        ServletRequest r = req;
        while (r instanceof ServletRequestWrapper w) {
            r = w.getRequest();
        }
        try {
            var felix = (org.apache.felix.http.javaxwrappers.ServletRequestWrapper) r;
            return (jakarta.servlet.http.HttpServletRequest) felix.getRequest();
        } catch (ClassCastException | LinkageError e) {
            throw notJetty();
        }
    }

    static jakarta.servlet.http.HttpServletResponse jakartaResponse(ServletResponse res) {
        ServletResponse r = res;
        while (r instanceof ServletResponseWrapper w) {
            r = w.getResponse();
        }
        try {
            var felix = (org.apache.felix.http.javaxwrappers.ServletResponseWrapper) r;
            return (jakarta.servlet.http.HttpServletResponse) felix.getResponse();
        } catch (ClassCastException | LinkageError e) {
            throw notJetty();
        }
    }

    /** The connection's own Jetty response: raw frames need no context scope or wrapper on every write. */
    static Response connectionOf(ServletResponse res) {
        try {
            Response r = ServletContextResponse.getServletContextResponse(jakartaResponse(res));
            while (r instanceof Response.Wrapper w) {
                r = w.getWrapped();
            }
            return r;
        } catch (RuntimeException | LinkageError e) {
            if (e instanceof ApiException a) {
                throw a;
            }
            throw notJetty();
        }
    }

    private static ApiException notJetty() {
        return new ApiException(503, "SERVICE_UNAVAILABLE", "event streams are not available on this HTTP service");
    }
}
