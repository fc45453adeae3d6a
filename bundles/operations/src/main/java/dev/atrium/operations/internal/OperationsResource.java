package dev.atrium.operations.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.AuditLog;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.runtime.ServiceComponentRuntime;

/** The operator's view of capabilities: {@code /admin/features}, {@code /admin/bundles} and {@code /admin/routes}. */
@Component(service = OperationsResource.class)
@KernelResource
@Path("/admin")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class OperationsResource {

    /** Largest jar accepted by an update. */
    static final int MAX_JAR_BYTES = 100 * 1024 * 1024;

    private final FeatureSwitch features;
    private final BundleUpdates updates;
    private final BundleContext context;
    private final RouteCatalog routes;
    private final ServiceComponentRuntime scr;
    private final AuditLog audit;

    @Activate
    public OperationsResource(
            @Reference FeatureSwitch features,
            @Reference BundleUpdates updates,
            @Reference RouteCatalog routes,
            @Reference ServiceComponentRuntime scr,
            @Reference AuditLog audit,
            BundleContext context) {
        this.audit = audit;
        this.features = features;
        this.updates = updates;
        this.routes = routes;
        this.scr = scr;
        this.context = context;
    }

    /** Every route of the running server, from the whiteboards' runtime records (the route-wide test sweep reads it). */
    @GET
    @Path("routes")
    @JsonShape(OperationsJson.Routes.class)
    public Map<String, Object> routes() {
        return Map.of(
                "routes", routes.routes().stream().map(RouteCatalog.Route::json).toList());
    }

    @POST
    @Path("bundles/{symbolicName}/update")
    @dev.atrium.kernel.api.BodyLimit(MAX_JAR_BYTES)
    @Consumes({"application/java-archive", MediaType.APPLICATION_OCTET_STREAM})
    @JsonShape(OperationsJson.OneBundleUpdate.class)
    public Map<String, Object> update(@PathParam("symbolicName") String symbolicName, InputStream body)
            throws IOException {
        byte[] jar = body.readNBytes(MAX_JAR_BYTES + 1);
        if (jar.length > MAX_JAR_BYTES) {
            throw new ApiException(413, "PAYLOAD_TOO_LARGE", "a bundle jar may be at most " + MAX_JAR_BYTES + " bytes");
        }
        Map<String, Object> updated = updates.update(symbolicName, jar);
        audit.record(
                AuditLog.OPERATOR,
                "bundle_updated",
                symbolicName,
                updated.get("previous_version") + " → " + updated.get("version"));
        return Map.of("bundle", updated);
    }

    @GET
    @Path("features")
    @JsonShape(OperationsJson.Features.class)
    public Map<String, Object> features() {
        return Map.of("features", features.features().stream().map(this::json).toList());
    }

    @POST
    @Path("features/{name}/enable")
    @JsonShape(OperationsJson.OneFeature.class)
    public Map<String, Object> enable(@PathParam("name") String name) {
        Map<String, Object> feature = json(features.enable(name));
        audit.record(AuditLog.OPERATOR, "feature_enabled", name, null);
        return Map.of("feature", feature);
    }

    @POST
    @Path("features/{name}/disable")
    @JsonShape(OperationsJson.OneFeature.class)
    public Map<String, Object> disable(@PathParam("name") String name) {
        Map<String, Object> feature = json(features.disable(name));
        audit.record(AuditLog.OPERATOR, "feature_disabled", name, null);
        return Map.of("feature", feature);
    }

    @GET
    @Path("bundles")
    @JsonShape(OperationsJson.Bundles.class)
    public Map<String, Object> bundles() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Bundle b : context.getBundles()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", b.getBundleId());
            m.put("symbolic_name", b.getSymbolicName());
            m.put("version", b.getVersion().toString());
            m.put("state", state(b.getState()));
            m.put("feature", features.featureOf(b).map(Feature::name).orElse(null));
            out.add(m);
        }
        return Map.of("bundles", out);
    }

    private Map<String, Object> json(Feature f) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", f.name());
        m.put("enabled", features.isEnabled(f.name()));
        m.put("description", f.description());
        m.put(
                "conflicts",
                features.features().stream()
                        .filter(f::conflictsWith)
                        .map(Feature::name)
                        .toList());
        List<Map<String, Object>> bundles = new ArrayList<>();
        List<Bundle> installed = features.bundles(f);
        for (Feature.Member member : f.members()) {
            Bundle b = installed.stream()
                    .filter(x -> member.equals(FeatureSwitch.member(f, x).orElse(null)))
                    .findFirst()
                    .orElse(null);
            Map<String, Object> bm = new LinkedHashMap<>();
            bm.put("id", member.id());
            bm.put("symbolic_name", b == null ? null : b.getSymbolicName());
            bm.put("state", b == null ? "MISSING" : state(b.getState()));
            bundles.add(bm);
        }
        m.put("bundles", bundles);
        boolean enabled = features.isEnabled(f.name());
        boolean configured = installed.stream().noneMatch(this::awaitsConfiguration);
        m.put("configured", configured);
        m.put("status", !enabled ? "disabled" : configured ? "enabled" : "enabled, not configured");
        return m;
    }

    /**
     * Whether an active bundle does nothing until an operator configures it: each of its components requires a
     * configuration and none has one (an optional backend such as S3 blobs, Redis kv or NATS queues).
     */
    private boolean awaitsConfiguration(Bundle b) {
        if (b.getState() != Bundle.ACTIVE) {
            return false;
        }
        var components = scr.getComponentDescriptionDTOs(b);
        return !components.isEmpty()
                && components.stream()
                        .allMatch(d -> "require".equals(d.configurationPolicy)
                                && scr.getComponentConfigurationDTOs(d).isEmpty());
    }

    static String state(int state) {
        return switch (state) {
            case Bundle.UNINSTALLED -> "UNINSTALLED";
            case Bundle.INSTALLED -> "INSTALLED";
            case Bundle.RESOLVED -> "RESOLVED";
            case Bundle.STARTING -> "STARTING";
            case Bundle.STOPPING -> "STOPPING";
            case Bundle.ACTIVE -> "ACTIVE";
            default -> String.valueOf(state);
        };
    }
}
