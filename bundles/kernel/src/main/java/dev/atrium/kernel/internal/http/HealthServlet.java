package dev.atrium.kernel.internal.http;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.servlet.Servlet;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardServletPattern;

/** {@code GET /healthz}: 200 once everything is ready, 503 naming what is not. Served outside JAX-RS on purpose. */
@Component(service = Servlet.class)
@HttpWhiteboardServletPattern("/healthz")
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=default)")
public class HealthServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    private final transient Readiness readiness;
    private final transient DatabaseHealth database;

    @Activate
    public HealthServlet(@Reference Readiness readiness, @Reference DatabaseHealth database) {
        this.readiness = readiness;
        this.database = database;
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        List<String> problems = database.withDatabase(readiness.notReady());
        resp.setHeader("Cache-Control", "no-store");
        if (problems.isEmpty()) {
            byte[] body = "{\"status\":\"ok\"}".getBytes(StandardCharsets.UTF_8);
            resp.setContentType("application/json");
            resp.setContentLength(body.length);
            resp.getOutputStream().write(body);
        } else {
            RequestEnvelope.writeError(resp, 503, "not ready: " + String.join("; ", problems));
        }
    }
}
