package dev.atrium.operations.internal;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
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

    private static final String JS = "text/javascript;charset=utf-8";
    private static final String UPLOT = "/META-INF/resources/webjars/uplot/1.6.30/";

    /** Nothing inline and nothing from elsewhere: the console acts with the operator's token. */
    static final String CSP =
            "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

    /** What the console serves: its page, its scripts (one per view), and uPlot (for the charts) from its webjar. */
    private static final Map<String, String[]> FILES = Map.ofEntries(
            Map.entry("/console.js", new String[] {"/console/console.js", JS}),
            Map.entry("/health.js", new String[] {"/console/health.js", JS}),
            Map.entry("/charts.js", new String[] {"/console/charts.js", JS}),
            Map.entry("/logs.js", new String[] {"/console/logs.js", JS}),
            Map.entry("/users.js", new String[] {"/console/users.js", JS}),
            Map.entry("/config.js", new String[] {"/console/config.js", JS}),
            Map.entry("/operations.js", new String[] {"/console/operations.js", JS}),
            Map.entry("/jobs.js", new String[] {"/console/jobs.js", JS}),
            Map.entry("/console.css", new String[] {"/console/console.css", "text/css;charset=utf-8"}),
            Map.entry("/views.css", new String[] {"/console/views.css", "text/css;charset=utf-8"}),
            Map.entry("/uPlot.iife.min.js", new String[] {UPLOT + "dist/uPlot.iife.min.js", JS}),
            Map.entry("/uPlot.min.css", new String[] {UPLOT + "dist/uPlot.min.css", "text/css;charset=utf-8"}),
            Map.entry("/uPlot.LICENSE", new String[] {UPLOT + "LICENSE", "text/plain;charset=utf-8"}));

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String path = req.getPathInfo();
        String resource;
        String type;
        if (path == null || path.equals("/") || path.equals("/index.html")) {
            resource = "/console/index.html";
            type = "text/html;charset=utf-8";
        } else if (FILES.containsKey(path)) {
            resource = FILES.get(path)[0];
            type = FILES.get(path)[1];
        } else {
            resp.sendError(404);
            return;
        }
        resp.setContentType(type);
        resp.setHeader("Cache-Control", "no-store");
        resp.setHeader("Content-Security-Policy", CSP);
        resp.setHeader("X-Content-Type-Options", "nosniff");
        resp.setHeader("Referrer-Policy", "no-referrer");
        try (InputStream in = ConsoleServlet.class.getResourceAsStream(resource)) {
            in.transferTo(resp.getOutputStream());
        }
    }
}
