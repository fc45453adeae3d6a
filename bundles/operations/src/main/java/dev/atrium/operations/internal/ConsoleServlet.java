package dev.atrium.operations.internal;

import java.io.IOException;
import java.io.InputStream;
import javax.servlet.Servlet;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardServletPattern;

/**
 * The operator console at {@code /admin/console}: a static page and its script. The page holds no data; it
 * asks the admin API with the operator token the operator types in.
 */
@Component(service = Servlet.class)
@HttpWhiteboardServletPattern("/admin/console/*")
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=default)")
public class ConsoleServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String path = req.getPathInfo();
        String resource;
        String type;
        if (path == null || path.equals("/") || path.equals("/index.html")) {
            resource = "/console/index.html";
            type = "text/html;charset=utf-8";
        } else if (path.equals("/console.js") || path.equals("/users.js")) {
            resource = "/console" + path;
            type = "text/javascript;charset=utf-8";
        } else {
            resp.sendError(404);
            return;
        }
        resp.setContentType(type);
        resp.setHeader("Cache-Control", "no-store");
        resp.setHeader("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'");
        resp.setHeader("X-Content-Type-Options", "nosniff");
        resp.setHeader("Referrer-Policy", "no-referrer");
        try (InputStream in = ConsoleServlet.class.getResourceAsStream(resource)) {
            in.transferTo(resp.getOutputStream());
        }
    }
}
