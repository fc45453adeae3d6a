package dev.atrium.kernel.internal.rest;

import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import dev.atrium.kernel.internal.http.DatabaseHealth;
import dev.atrium.kernel.internal.http.Readiness;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code GET /admin/health}: the operator's view of readiness. Unlike {@code /healthz} (a probe: 200 or 503) it
 * always answers 200 and lists what is not ready.
 */
@Component(service = AdminHealthResource.class)
@KernelResource
@Path("/admin/health")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class AdminHealthResource {

    private final Readiness readiness;
    private final DatabaseHealth database;

    @Activate
    public AdminHealthResource(@Reference Readiness readiness, @Reference DatabaseHealth database) {
        this.readiness = readiness;
        this.database = database;
    }

    @GET
    @JsonShape(KernelJson.Health.class)
    public Map<String, Object> health() {
        List<String> problems = database.withDatabase(readiness.notReady());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("status", problems.isEmpty() ? "ok" : "not_ready");
        m.put("problems", problems);
        m.put(
                "capabilities",
                readiness.activeCapabilities().stream()
                        .map(b -> b.getSymbolicName())
                        .sorted()
                        .toList());
        return m;
    }
}
