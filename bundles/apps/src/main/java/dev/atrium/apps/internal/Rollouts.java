package dev.atrium.apps.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.apps.internal.AppStore.AppDeployment;
import dev.atrium.apps.internal.AppStore.GroupObject;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.services.api.DeploymentTraffic;
import dev.atrium.services.api.ServiceControl;
import dev.atrium.services.api.ServiceRoutes;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rollout of an app deployment: {@code direct} (completed once applied) or {@code canary}, whose steps give the
 * new version a share of requests, each held for {@code hold_seconds} or, without one, until promoted. States:
 * progressing, paused, completed, aborted, failed, superseded (a later deploy of the group took over). Abort sends
 * every request to the old version (the services drain the new one) and puts the group's inventory back as it was,
 * so that deploying the same version again deploys it again.
 */
@Component(service = Rollouts.class)
public class Rollouts {

    private static final Logger LOG = LoggerFactory.getLogger(Rollouts.class);
    static final Set<String> ACTIVE = Set.of("progressing", "paused");

    private final AppStore store;
    private final ServiceControl services;
    private final Locks locks;
    private final ScheduledExecutorService timer;

    /** What the router saw of the canaries' requests, when the routing bundle runs: the rollout's error gate. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile DeploymentTraffic traffic;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile ServiceRoutes routes;

    /** A canary is judged on at least this many of its requests. */
    static final int MIN_REQUESTS = 20;

    @Activate
    public Rollouts(@Reference AppStore store, @Reference ServiceControl services) {
        this.store = store;
        this.services = services;
        this.locks = new Locks(store.dataSource());
        this.timer = NamedThreads.scheduler("atrium-app-rollouts");
        NamedThreads.repeat(timer, this::advanceDue, java.time.Duration.ofSeconds(1), java.time.Duration.ofSeconds(1));
    }

    @Deactivate
    void stop() throws InterruptedException {
        timer.shutdownNow();
        timer.awaitTermination(10, TimeUnit.SECONDS);
    }

    /** A new rollout's state. */
    static ObjectNode start(String strategy, ArrayNode steps, List<String> canaryServices, List<GroupObject> before) {
        ObjectNode r = AppStore.JSON.createObjectNode();
        boolean canary = "canary".equals(strategy) && !canaryServices.isEmpty();
        r.put("state", canary ? "progressing" : "completed");
        r.put("strategy", strategy);
        r.put("step", 0);
        r.set("steps", canary ? steps : AppStore.JSON.createArrayNode());
        r.put("weight", canary ? steps.get(0).path("weight").asInt() : 100);
        r.put("step_started_at", Instant.now().toString());
        r.put("updated_at", Instant.now().toString());
        ArrayNode svc = r.putArray("services");
        canaryServices.forEach(svc::add);
        ArrayNode prev = r.putArray("previous");
        for (GroupObject o : before) {
            ObjectNode p = prev.addObject();
            p.put("kind", o.kind());
            p.put("key", o.key());
            p.put("object_id", o.objectId());
            p.put("fingerprint", o.fingerprint());
            p.set("detail", o.detail());
        }
        if (!canary && "canary".equals(strategy)) {
            r.put("message", "nothing was running before: deployed directly");
        }
        return r;
    }

    /** The rollout as the API shows it. */
    static ObjectNode view(ObjectNode rollout) {
        ObjectNode v = AppStore.JSON.createObjectNode();
        for (String f : new String[] {"state", "strategy", "step", "steps", "weight", "message", "updated_at"}) {
            if (rollout.has(f)) {
                v.set(f, rollout.get(f));
            }
        }
        return v;
    }

    static String statusOf(String state) {
        return switch (state) {
            case "progressing", "paused" -> "rolling_out";
            case "completed" -> "applied";
            default -> state;
        };
    }

    /** pause, resume, promote or abort, as {@code POST …/rollout/:action} asks. */
    ObjectNode control(AppDeployment d, String action) {
        return locks.with("app-rollout:" + d.id(), () -> {
            AppDeployment fresh = store.deployment(d.spaceId(), d.id())
                    .orElseThrow(() -> ApiException.notFound("app deployment not found"));
            ObjectNode r = fresh.rollout();
            String state = r.path("state").asText();
            if (!ACTIVE.contains(state)) {
                throw ApiException.conflict(
                        "the rollout is " + state + "; only a progressing or paused rollout can " + action);
            }
            switch (action) {
                case "pause" -> r.put("state", "paused");
                case "resume" -> {
                    r.put("state", "progressing");
                    r.put("step_started_at", Instant.now().toString());
                }
                case "promote" -> advance(r);
                default -> abort(fresh, r, "aborted");
            }
            save(fresh, r);
            return r;
        });
    }

    /** Ends an active rollout of a group because a later deploy takes over: its canaries are aborted first. */
    void supersede(AppDeployment d) {
        locks.with("app-rollout:" + d.id(), () -> {
            store.deployment(d.spaceId(), d.id()).ifPresent(fresh -> {
                ObjectNode r = fresh.rollout();
                if (ACTIVE.contains(r.path("state").asText())) {
                    abort(fresh, r, "superseded");
                    save(fresh, r);
                }
            });
            return null;
        });
    }

    private void advance(ObjectNode r) {
        int next = r.path("step").asInt() + 1;
        JsonNode steps = r.path("steps");
        if (next < steps.size()) {
            int weight = steps.get(next).path("weight").asInt();
            for (JsonNode s : r.path("services")) {
                services.setCanaryPercent(s.asText(), weight);
            }
            r.put("step", next);
            r.put("weight", weight);
            r.put("step_started_at", Instant.now().toString());
        } else {
            for (JsonNode s : r.path("services")) {
                endCanary(s.asText(), true);
            }
            r.put("state", "completed");
            r.put("weight", 100);
        }
    }

    private void abort(AppDeployment d, ObjectNode r, String state) {
        for (JsonNode s : r.path("services")) {
            endCanary(s.asText(), false);
        }
        for (JsonNode p : r.path("previous")) {
            if (GroupReconciler.SERVICE.equals(p.path("kind").asText())) {
                store.putObject(unsettled(new GroupObject(
                        d.groupId(),
                        GroupReconciler.SERVICE,
                        p.path("key").asText(),
                        p.path("object_id").asText(),
                        p.path("fingerprint").asText(),
                        (ObjectNode) p.path("detail"))));
            }
        }
        r.put("state", state);
        r.put("weight", 0);
    }

    /**
     * Why the canaries fail the current step's gate: more than its {@code max_error_percent} of their requests (at
     * least {@link #MIN_REQUESTS}) ended in a server error; null when they pass, or nothing can tell.
     */
    private String errorGate(ObjectNode r) {
        DeploymentTraffic t = traffic;
        ServiceRoutes rt = routes;
        JsonNode max = r.path("steps").path(r.path("step").asInt()).path("max_error_percent");
        if (t == null || rt == null || !max.isNumber()) {
            return null;
        }
        long requests = 0;
        long errors = 0;
        ServiceRoutes.Routes table = rt.routes();
        for (JsonNode s : r.path("services")) {
            var service = services.service(s.asText());
            if (service.isEmpty()) {
                continue;
            }
            ServiceRoutes.Route route = table.bySlug().get(service.get().slug());
            if (route == null || route.canaryRuntimeId() == null) {
                continue;
            }
            DeploymentTraffic.Counts c = t.counts(route.canaryRuntimeId());
            requests += c.requests();
            errors += c.serverErrors();
        }
        if (requests < MIN_REQUESTS || errors * 100 <= max.asLong() * requests) {
            return null;
        }
        return "the new version answered " + errors + " of its " + requests + " requests with a server error ("
                + (errors * 100 / requests) + " %), more than the step's " + max.asLong() + " %: aborted, every request"
                + " goes to the previous version";
    }

    /**
     * A service's inventory row as it was before an apply that was undone, with its env and bindings marked unknown:
     * the undone apply wrote the new ones into the service (they are shared by both versions), so the next apply
     * writes them again.
     */
    static GroupObject unsettled(GroupObject was) {
        ObjectNode detail = was.detail().deepCopy();
        detail.put("env", "");
        detail.put("bindings", "");
        detail.put("oauth_env", "");
        return new GroupObject(was.groupId(), was.kind(), was.key(), was.objectId(), "", detail);
    }

    private void endCanary(String serviceId, boolean promote) {
        try {
            services.endCanary(serviceId, promote);
        } catch (ServiceControl.Refused e) {
            // the service lost its canary already (deleted, or ended through /api/services): nothing to end
            LOG.info(
                    "canary of service {} not ended ({}): {}",
                    serviceId,
                    promote ? "promote" : "abort",
                    e.getMessage());
        }
    }

    private void save(AppDeployment d, ObjectNode r) {
        r.put("updated_at", Instant.now().toString());
        store.sql().tx(c -> {
            store.setRollout(c, d.id(), statusOf(r.path("state").asText()), r);
            return null;
        });
    }

    /** Moves on every progressing rollout whose step's hold ended. */
    void advanceDue() {
        try {
            for (String id : store.progressing()) {
                locks.ifFree("app-rollout:" + id, () -> {
                    store.sql()
                            .one("SELECT space_id FROM app_deployments WHERE id = ?", rs -> rs.getString(1), id)
                            .flatMap(space -> store.deployment(space, id))
                            .ifPresent(this::advanceIfDue);
                    return Boolean.TRUE;
                });
            }
        } catch (RuntimeException e) {
            LOG.warn("advancing app rollouts failed; trying again in a second", e);
        }
    }

    private void advanceIfDue(AppDeployment d) {
        ObjectNode r = d.rollout();
        if (!"progressing".equals(r.path("state").asText())) {
            return;
        }
        String failing = errorGate(r);
        if (failing != null) {
            LOG.info("app deployment {}: {}", d.id(), failing);
            abort(d, r, "aborted");
            r.put("message", failing);
            save(d, r);
            return;
        }
        JsonNode step = r.path("steps").path(r.path("step").asInt());
        JsonNode hold = step.path("hold_seconds");
        if (!hold.isNumber()) {
            return;
        }
        Instant started = Instant.parse(r.path("step_started_at").asText());
        if (Instant.now().isBefore(started.plusSeconds(hold.asLong()))) {
            return;
        }
        try {
            advance(r);
        } catch (ServiceControl.Refused e) {
            r.put("state", "failed");
            r.put("message", e.getMessage());
        }
        save(d, r);
    }
}
