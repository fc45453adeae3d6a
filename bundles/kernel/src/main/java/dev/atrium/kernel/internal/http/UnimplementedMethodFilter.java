package dev.atrium.kernel.internal.http;

import java.io.IOException;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import javax.servlet.http.HttpServletResponseWrapper;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterAsyncSupported;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterPattern;

/**
 * A method a plain servlet does not implement ({@code PATCH}, or one nobody knows) is the client's mistake: the
 * servlet API's {@code HttpServlet} answers it 501, which the envelope would report as the server's
 * {@code INTERNAL_ERROR} (and log at ERROR). Here it becomes 405 with the spec's body. Ranked below the envelope
 * so that the envelope, outside, sees the 405 and writes the body.
 */
@Component(service = Filter.class, property = "service.ranking:Integer=-100")
@HttpWhiteboardFilterPattern("/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
public class UnimplementedMethodFilter implements Filter {

    @Override
    public void init(javax.servlet.FilterConfig config) {
        // nothing to set up
    }

    @Override
    public void destroy() {
        // nothing held
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        chain.doFilter(req, new HttpServletResponseWrapper((HttpServletResponse) res) {
            @Override
            public void sendError(int sc, String msg) throws IOException {
                if (sc == HttpServletResponse.SC_NOT_IMPLEMENTED) {
                    super.sendError(
                            HttpServletResponse.SC_METHOD_NOT_ALLOWED,
                            "method " + request.getMethod() + " is not allowed on " + request.getRequestURI());
                } else {
                    super.sendError(sc, msg);
                }
            }

            @Override
            public void sendError(int sc) throws IOException {
                sendError(sc, null);
            }
        });
    }
}
