package dev.atrium.metrics.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code GET /metrics}: every meter in the Prometheus text format, for the operator (token) or a scraper holding it. */
@KernelResource
@Component(service = MetricsResource.class)
@Path("/metrics")
public class MetricsResource {

    static final String TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8";

    private final Metrics metrics;

    @Activate
    public MetricsResource(@Reference Metrics metrics) {
        this.metrics = metrics;
    }

    @GET
    @OperatorOnly
    @Produces(TEXT_FORMAT)
    public String scrape() {
        if (!metrics.enabled()) {
            throw ApiException.notFound("metrics are off (ATRIUM_METRICS=false)");
        }
        return metrics.scrape();
    }
}
