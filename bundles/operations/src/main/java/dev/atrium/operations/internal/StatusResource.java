package dev.atrium.operations.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.atrium.kernel.api.HealthCheck;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import dev.atrium.kernel.api.ServerReadiness;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import javax.ws.rs.GET;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /admin/status}: what the console's health view shows, worked out per request from what the runtime knows
 * already: the database as its bundle publishes it, the kernel's readiness, each feature's bundles, what capabilities'
 * {@link HealthCheck}s say, the worker and container processes the server started, and the free space of the data
 * directory and of the blobs.
 */
@Component(service = StatusResource.class)
@KernelResource
@javax.ws.rs.Path("/admin/status")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class StatusResource {

    /** The DataSource's service property that says why the database does not answer (the database bundle's). */
    static final String DATABASE_UNREACHABLE = "atrium.database.unreachable";
    /** The BlobStore's service property naming its backend ({@code fs}, {@code s3}). */
    static final String BLOB_BACKEND = "atrium.blob.store";

    private static final String BLOB_STORE = "dev.atrium.blob.api.BlobStore";
    /** Below this share of free space a disk is {@code low}. */
    static final double LOW_SHARE = 0.05;
    /** And below this many free bytes. */
    static final long LOW_BYTES = 1L << 30;

    /** {@code up} or {@code down}, and why it is down. */
    public record DatabaseStatus(String status, String detail) {}

    /**
     * A feature: {@code state} {@code ready}, {@code switching} (being enabled or disabled now, or a bundle of it
     * starting or stopping), {@code not_ready} (enabled, a bundle of it not active: {@code detail} says which) or
     * {@code disabled}.
     */
    public record FeatureStatus(String name, boolean enabled, String state, String detail) {}

    /**
     * What a capability's {@link HealthCheck} says ({@code certificates}: those of custom domains near or past expiry):
     * {@code status} {@code ok}, {@code warning} or {@code failed}, or {@code unknown} when the check itself failed.
     */
    public record CheckStatus(String name, String status, String summary, List<String> details) {}

    /** The processes of a kind the server started and that still run. */
    public record ProcessStatus(String name, int running) {}

    /**
     * A disk: {@code status} {@code ok} or {@code low} (under 5 % or 1 GiB free), or {@code remote} for blobs kept
     * elsewhere (then no sizes).
     */
    public record DiskStatus(
            String name,
            String path,
            @JsonProperty("free_bytes") Long freeBytes,
            @JsonProperty("total_bytes") Long totalBytes,
            String status) {}

    /**
     * The whole: {@code status} {@code ok}, {@code switching} (a feature is changing or the kernel holds requests for
     * one), {@code degraded} (a disk is low) or {@code down} (the database does not answer or something is not ready).
     */
    public record Status(
            String status,
            DatabaseStatus database,
            List<String> problems,
            @JsonProperty("holding_requests") boolean holdingRequests,
            List<FeatureStatus> features,
            List<CheckStatus> checks,
            List<ProcessStatus> processes,
            List<DiskStatus> disks,
            @JsonProperty("checked_at") String checkedAt) {}

    private static final Logger LOG = LoggerFactory.getLogger(StatusResource.class);

    private final BundleContext context;
    private final FeatureSwitch features;

    /** Every capability's checks, as they come and go with their bundles. */
    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    private volatile List<HealthCheck> healthChecks = List.of();

    private final ServerReadiness readiness;

    @Activate
    public StatusResource(
            BundleContext context, @Reference FeatureSwitch features, @Reference ServerReadiness readiness) {
        this.context = context;
        this.features = features;
        this.readiness = readiness;
    }

    @GET
    public Status status() {
        DatabaseStatus database = database();
        List<String> problems = readiness.notReady();
        boolean holding = readiness.holdsRequests();
        List<FeatureStatus> featureStates = features();
        List<DiskStatus> disks = disks();
        List<CheckStatus> checks = checks();
        String status = "ok";
        if (database.status().equals("down")) {
            status = "down";
        } else if (holding || featureStates.stream().anyMatch(f -> f.state().equals("switching"))) {
            // a switch makes the kernel's readiness wait for the whiteboard too: that is the switch, not an outage
            status = "switching";
        } else if (!problems.isEmpty()) {
            status = "down";
        } else if (disks.stream().anyMatch(d -> d.status().equals("low"))
                || featureStates.stream().anyMatch(f -> f.state().equals("not_ready"))
                || checks.stream().anyMatch(c -> !c.status().equals(HealthCheck.Result.OK))) {
            status = "degraded";
        }
        return new Status(
                status,
                database,
                problems,
                holding,
                featureStates,
                checks,
                processes(),
                disks,
                Instant.now().toString());
    }

    private List<CheckStatus> checks() {
        List<CheckStatus> out = new ArrayList<>();
        for (HealthCheck c : healthChecks) {
            String name = c.name();
            try {
                HealthCheck.Result r = c.check();
                out.add(new CheckStatus(name, r.status(), r.summary(), r.details()));
            } catch (RuntimeException e) {
                // a check that throws (its bundle stopping) is reported, not the whole answer lost; at debug, since the
                // console asks every 2 s and the answer says it
                LOG.debug("health check {} failed", name, e);
                out.add(new CheckStatus(name, "unknown", "the check failed: " + e, List.of()));
            }
        }
        out.sort(java.util.Comparator.comparing(CheckStatus::name));
        return out;
    }

    private DatabaseStatus database() {
        ServiceReference<?> ref = context.getServiceReference("javax.sql.DataSource");
        if (ref == null) {
            return new DatabaseStatus("down", "no database connection pool is running");
        }
        Object why = ref.getProperty(DATABASE_UNREACHABLE);
        return why == null ? new DatabaseStatus("up", null) : new DatabaseStatus("down", why.toString());
    }

    private List<FeatureStatus> features() {
        Optional<String> switching = features.switching();
        List<FeatureStatus> out = new ArrayList<>();
        for (Feature f : features.features()) {
            boolean enabled = features.isEnabled(f.name());
            if (switching.isPresent() && switching.get().equals(f.name())) {
                out.add(new FeatureStatus(f.name(), enabled, "switching", enabled ? "starting" : "stopping"));
                continue;
            }
            String changing = null;
            String inactive = null;
            for (Bundle b : features.bundles(f)) {
                boolean api =
                        FeatureSwitch.member(f, b).map(Feature.Member::api).orElse(false);
                int state = b.getState();
                if (state == Bundle.STARTING || state == Bundle.STOPPING) {
                    changing = b.getSymbolicName() + " is " + OperationsResource.state(state);
                } else if (enabled && !api && state != Bundle.ACTIVE && inactive == null) {
                    inactive = b.getSymbolicName() + " is " + OperationsResource.state(state);
                }
            }
            if (changing != null) {
                out.add(new FeatureStatus(f.name(), enabled, "switching", changing));
            } else if (!enabled) {
                out.add(new FeatureStatus(f.name(), false, "disabled", null));
            } else if (inactive != null) {
                out.add(new FeatureStatus(f.name(), true, "not_ready", inactive));
            } else {
                out.add(new FeatureStatus(f.name(), true, "ready", null));
            }
        }
        return out;
    }

    /** workerd and podman processes among the server's descendants (podman's conmon monitors count as podman). */
    static List<ProcessStatus> processes() {
        Map<String, Integer> running = new TreeMap<>(Map.of("workerd", 0, "podman", 0));
        ProcessHandle.current()
                .descendants()
                .forEach(p -> p.info().command().ifPresent(command -> {
                    String name = java.nio.file.Path.of(command).getFileName().toString();
                    if (name.equals("workerd")) {
                        running.merge("workerd", 1, Integer::sum);
                    } else if (name.equals("podman") || name.equals("conmon")) {
                        running.merge("podman", 1, Integer::sum);
                    }
                }));
        List<ProcessStatus> out = new ArrayList<>();
        running.forEach((name, count) -> out.add(new ProcessStatus(name, count)));
        return out;
    }

    private List<DiskStatus> disks() {
        List<DiskStatus> out = new ArrayList<>();
        java.nio.file.Path data = features.dataDirectory();
        out.add(disk("data", data));
        String backend = blobBackend();
        if ("fs".equals(backend)) {
            java.nio.file.Path blobs = data.resolve("blobs");
            out.add(disk("blobs", Files.isDirectory(blobs) ? blobs : data));
        } else if (backend != null) {
            out.add(new DiskStatus("blobs", backend, null, null, "remote"));
        }
        return out;
    }

    private String blobBackend() {
        try {
            ServiceReference<?>[] refs = context.getServiceReferences(BLOB_STORE, null);
            if (refs == null || refs.length == 0) {
                return null;
            }
            // the one consumers get: highest ranking first
            java.util.Arrays.sort(refs);
            Object backend = refs[refs.length - 1].getProperty(BLOB_BACKEND);
            return backend == null ? "unknown" : backend.toString();
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static DiskStatus disk(String name, java.nio.file.Path path) {
        try {
            FileStore store = Files.getFileStore(Files.exists(path) ? path : path.getParent());
            long free = store.getUsableSpace();
            long total = store.getTotalSpace();
            boolean low = free < LOW_BYTES || (total > 0 && free < total * LOW_SHARE);
            return new DiskStatus(name, path.toString(), free, total, low ? "low" : "ok");
        } catch (IOException | RuntimeException e) {
            return new DiskStatus(name, path.toString(), null, null, "unknown");
        }
    }
}
