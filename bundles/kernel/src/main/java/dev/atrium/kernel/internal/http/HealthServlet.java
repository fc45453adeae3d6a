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

    /** What capabilities say they run on (Actions' job runner): shown, never a reason to be unready. */
    @Reference(
            service = dev.atrium.kernel.api.HealthDetail.class,
            cardinality = org.osgi.service.component.annotations.ReferenceCardinality.MULTIPLE,
            policy = org.osgi.service.component.annotations.ReferencePolicy.DYNAMIC,
            policyOption = org.osgi.service.component.annotations.ReferencePolicyOption.GREEDY,
            fieldOption = org.osgi.service.component.annotations.FieldOption.UPDATE)
    private final transient java.util.List<dev.atrium.kernel.api.HealthDetail> details =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    @Activate
    public HealthServlet(@Reference Readiness readiness, @Reference DatabaseHealth database) {
        this.readiness = readiness;
        this.database = database;
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        req.setAttribute(dev.atrium.kernel.api.KernelExtensions.ROUTE_ATTRIBUTE, "/healthz");
        List<String> problems = database.withDatabase(readiness.notReady());
        resp.setHeader("Cache-Control", "no-store");
        if (problems.isEmpty()) {
            byte[] body = okBody().getBytes(StandardCharsets.UTF_8);
            resp.setContentType("application/json");
            resp.setContentLength(body.length);
            resp.getOutputStream().write(body);
        } else {
            RequestEnvelope.writeError(resp, 503, "not ready: " + String.join("; ", problems));
        }
    }

    /** {@code {"status":"ok"}}, with {@code details} when a capability gives any. */
    private String okBody() {
        java.util.Map<String, String> named = new java.util.TreeMap<>();
        for (dev.atrium.kernel.api.HealthDetail d : details) {
            try {
                named.put(d.name(), d.detail());
            } catch (RuntimeException e) {
                named.put(d.name(), "unknown: " + e.getMessage());
            }
        }
        if (named.isEmpty()) {
            return "{\"status\":\"ok\"}";
        }
        com.fasterxml.jackson.databind.node.ObjectNode body = JSON.createObjectNode();
        body.put("status", "ok");
        com.fasterxml.jackson.databind.node.ObjectNode d = body.putObject("details");
        named.forEach(d::put);
        return body.toString();
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
            new com.fasterxml.jackson.databind.ObjectMapper();
}
