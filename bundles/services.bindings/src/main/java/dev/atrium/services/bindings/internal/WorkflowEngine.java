package dev.atrium.services.bindings.internal;

import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.resource.api.ResourceDirectory;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.WorkflowFacet;
import dev.atrium.services.api.ServiceRoutes;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the instances of the {@code workflow} resources bound to the services this server runs: every
 * {@value #TICK_MILLIS} ms it claims, for each service's current deployment and each of its workflow bindings that
 * {@link WorkflowPacing} says is due (every tick while there is work, less often while idle), the instances created by
 * that service that are due (the provider's {@code SELECT … FOR UPDATE SKIP LOCKED} with a lease,
 * so several servers share the work), and sends each to the deployment's workflow runner
 * ({@code endpoint(<runtime id>#workflows)}, {@code POST /run}, with the binding's secret header) without holding a
 * thread while it runs. The lease is renewed while the request is open; when the runner cannot be reached or the
 * request fails (the workerd child died), the lease is released and the instance runs again at once, from the start:
 * the steps it completed answer from the store. The threads stop when the component does.
 */
@Component(immediate = true)
public class WorkflowEngine {

    private static final Logger LOG = LoggerFactory.getLogger(WorkflowEngine.class);
    static final long TICK_MILLIS = 200;
    static final Duration LEASE = Duration.ofSeconds(30);
    static final int MAX_IN_FLIGHT = 64;

    private final ServiceRoutes services;
    private final ResourceDirectory directory;
    private final WorkflowPacing pacing;
    private final ScheduledExecutorService timer = NamedThreads.scheduler("atrium-workflows");
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .executor(Executors.newCachedThreadPool(NamedThreads.factory("atrium-workflows-http")))
            .build();
    /** Runs in flight on this server, by instance key. */
    private final Map<String, Running> running = new ConcurrentHashMap<>();
    /** The workflow bindings of a runtime id (fixed for its life), to avoid asking every tick. */
    private final Map<String, List<String>> bindingsOf = new ConcurrentHashMap<>();

    private volatile boolean active = true;
    private long lastRenew;

    record Running(
            ServiceRoutes.Target target,
            String binding,
            String instanceId,
            String lease,
            java.util.concurrent.CompletableFuture<?> request) {}

    @Activate
    public WorkflowEngine(
            @Reference ServiceRoutes services,
            @Reference ResourceDirectory directory,
            @Reference WorkflowPacing pacing) {
        this.services = services;
        this.directory = directory;
        this.pacing = pacing;
        NamedThreads.repeat(timer, this::tick, Duration.ofMillis(TICK_MILLIS), Duration.ofMillis(TICK_MILLIS));
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        active = false;
        timer.shutdownNow();
        timer.awaitTermination(10, TimeUnit.SECONDS);
        for (Running r : running.values()) {
            r.request().cancel(true);
            release(r);
        }
        running.clear();
        ((java.util.concurrent.ExecutorService) http.executor().orElseThrow()).shutdownNow();
    }

    private void tick() {
        try {
            ServiceRoutes.Routes routes = services.routes();
            bindingsOf.keySet().retainAll(routes.byRuntimeId().keySet());
            pacing.retain(routes.byRuntimeId().values().stream()
                    .map(ServiceRoutes.Target::serviceId)
                    .collect(java.util.stream.Collectors.toSet()));
            for (ServiceRoutes.Route route : routes.bySlug().values()) {
                ServiceRoutes.Target target = routes.byRuntimeId().get(route.runtimeId());
                if (target == null || !active) {
                    continue;
                }
                List<String> names = bindingsOf.computeIfAbsent(
                        route.runtimeId(),
                        id -> directory.bindings(target.serviceId(), target.spaceId()).stream()
                                .filter(b -> "workflow".equals(b.type()))
                                .map(ResourceDirectory.Bound::bindingName)
                                .toList());
                for (String name : names) {
                    claim(route, target, name);
                }
            }
            long now = System.nanoTime();
            if (now - lastRenew > LEASE.toNanos() / 3) {
                lastRenew = now;
                renewAll();
            }
        } catch (RuntimeException e) {
            LOG.warn("workflows: a round of claims failed: {}", e.toString());
        }
    }

    private void claim(ServiceRoutes.Route route, ServiceRoutes.Target target, String binding) {
        int room = MAX_IN_FLIGHT - running.size();
        if (room <= 0 || !pacing.due(target.serviceId(), binding)) {
            return;
        }
        Optional<ResourceDirectory.Opened<WorkflowFacet>> opened =
                directory.open(target.serviceId(), target.spaceId(), binding, WorkflowFacet.class);
        if (opened.isEmpty()) {
            pacing.claimed(target.serviceId(), binding, false);
            return;
        }
        List<WorkflowFacet.Claim> claims;
        try {
            claims = opened.get().facet().claim(opened.get().context(), target.serviceId(), Math.min(room, 16), LEASE);
        } catch (ResourceException e) {
            LOG.warn("workflows: claiming instances of {} failed: {}", binding, e.getMessage());
            pacing.claimed(target.serviceId(), binding, false);
            return;
        }
        pacing.claimed(target.serviceId(), binding, !claims.isEmpty());
        for (WorkflowFacet.Claim c : claims) {
            dispatch(route, target, binding, c);
        }
    }

    private void dispatch(
            ServiceRoutes.Route route, ServiceRoutes.Target target, String binding, WorkflowFacet.Claim c) {
        Optional<URI> endpoint =
                services.provider(route.provider()).flatMap(p -> p.endpoint(route.runtimeId() + "#workflows"));
        String key = target.serviceId() + "/" + binding + "/" + c.instanceId();
        if (endpoint.isEmpty()) {
            release(new Running(target, binding, c.instanceId(), c.lease(), null));
            return;
        }
        Map<String, Object> body = new java.util.LinkedHashMap<>();
        body.put("binding", binding);
        body.put("instanceId", c.instanceId());
        body.put("lease", c.lease());
        body.put("timestamp", c.createdAt().toEpochMilli());
        body.put("workflowName", binding);
        try {
            body.put("payload", c.paramsJson() == null ? null : InternalBindings.JSON.readTree(c.paramsJson()));
            HttpRequest request = HttpRequest.newBuilder(URI.create(endpoint.get() + "/run"))
                    .header(ServiceRoutes.SECRET_HEADER, services.bindingSecret(target.runtimeId()))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(InternalBindings.JSON.writeValueAsBytes(body)))
                    .build();
            var future = http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
            Running r = new Running(target, binding, c.instanceId(), c.lease(), future);
            running.put(key, r);
            var unused = future.whenComplete((response, failure) -> {
                running.remove(key, r);
                // the run may have left a sleep or a retry due soon, or be run again at once (below)
                pacing.nudge(target.serviceId(), binding);
                if (failure != null || response.statusCode() != 200) {
                    LOG.info(
                            "workflows: the run of {} in {} ended without an answer ({}); it runs again",
                            c.instanceId(),
                            target.serviceId(),
                            failure != null ? failure.toString() : "status " + response.statusCode());
                    if (active) {
                        release(r);
                    }
                }
            });
        } catch (java.io.IOException | RuntimeException e) {
            LOG.warn("workflows: the run of {} could not be sent: {}", c.instanceId(), e.toString());
            release(new Running(target, binding, c.instanceId(), c.lease(), null));
        }
    }

    private void renewAll() {
        for (Running r : running.values()) {
            directory
                    .open(r.target().serviceId(), r.target().spaceId(), r.binding(), WorkflowFacet.class)
                    .ifPresent(o -> {
                        try {
                            o.facet().renew(o.context(), r.instanceId(), r.lease(), LEASE);
                        } catch (ResourceException e) {
                            LOG.debug("workflows: renewing {} failed: {}", r.instanceId(), e.getMessage());
                        }
                    });
        }
    }

    private void release(Running r) {
        try {
            Optional<ResourceDirectory.Opened<WorkflowFacet>> o =
                    directory.open(r.target().serviceId(), r.target().spaceId(), r.binding(), WorkflowFacet.class);
            if (o.isPresent()) {
                o.get().facet().release(o.get().context(), r.instanceId(), r.lease());
            }
        } catch (ResourceException | RuntimeException e) {
            LOG.debug("workflows: releasing {} failed: {}", r.instanceId(), e.toString());
        }
    }
}
