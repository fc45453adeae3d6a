package dev.atrium.services.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.blob.api.Blob;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.blob.api.BlobTooLargeException;
import dev.atrium.deploy.api.Deployment;
import dev.atrium.deploy.api.DeploymentException;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.Sql;
import dev.atrium.services.internal.ServiceStore.DeploymentRow;
import dev.atrium.services.internal.ServiceStore.Service;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creating deployments ({@code POST /api/services/:id/deployments} and {@code /api/workers/:id/deployments}),
 * rollback, canary promote and abort, and a canary's share of the requests: for the routes and services.api's
 * {@code ServiceControl} ({@link ServiceControls}) alike. Each runs under the {@link Deployer}'s lock: the rows change,
 * the providers apply, and a failed apply puts the rows back as they were (what ran before keeps running).
 */
@Component(service = DeployFlow.class)
public class DeployFlow {

    private static final Logger LOG = LoggerFactory.getLogger(DeployFlow.class);
    static final Set<String> STRATEGIES = Set.of("direct", "canary");
    static final Set<String> KINDS = Set.of("worker-bundle", "container-image");
    static final Set<String> FIELDS =
            Set.of("bundle", "deploy_message", "strategy", "provider", "target", "canary_percent");

    private final ServiceStore store;
    private final Deployer deployer;
    private final BlobStore blobs;

    @Activate
    public DeployFlow(@Reference ServiceStore store, @Reference Deployer deployer, @Reference BlobStore blobs) {
        this.store = store;
        this.deployer = deployer;
        this.blobs = blobs;
    }

    /** What to deploy, checked: {@link #of} for every caller, {@link #parse} for a create body. */
    record Request(
            byte[] bundle, String message, String strategy, String provider, String kind, Integer canaryPercent) {

        /**
         * A valid request; a null message, strategy, provider or kind is the create body's default (none, direct,
         * workerd, worker-bundle). 400 (413 for an artifact over {@code maxBytes}) naming what is wrong.
         */
        static Request of(
                byte[] bundle,
                String message,
                String strategy,
                String provider,
                String kind,
                Integer canaryPercent,
                long maxBytes) {
            if (bundle == null || bundle.length == 0) {
                throw ApiException.badRequest("bundle must not be empty");
            }
            if (bundle.length > maxBytes) {
                throw new ApiException(413, "PAYLOAD_TOO_LARGE", "a bundle must be at most " + maxBytes + " bytes");
            }
            String m =
                    message == null || message.isEmpty() ? "" : ServiceEdits.text("deploy_message", message, 0, 1000);
            String st = strategy == null ? "direct" : strategy;
            if (!STRATEGIES.contains(st)) {
                throw ApiException.badRequest("strategy must be one of "
                        + String.join(", ", STRATEGIES.stream().sorted().toList()));
            }
            String p = provider == null ? "workerd" : ServiceEdits.text("provider.name", provider, 1, 100);
            String k = kind == null ? "worker-bundle" : kind;
            if (!KINDS.contains(k)) {
                throw ApiException.badRequest("target.artifact.kind must be one of container-image, worker-bundle");
            }
            if (canaryPercent != null) {
                if (canaryPercent < 1 || canaryPercent > 99) {
                    throw ApiException.badRequest(PERCENT);
                }
                if (!"canary".equals(st)) {
                    throw ApiException.badRequest("canary_percent applies only to strategy canary");
                }
            }
            return new Request(bundle, m, st, p, k, canaryPercent);
        }
    }

    static final String PERCENT = "canary_percent must be a whole number from 1 to 99";

    /** A create body ({@code POST /api/services/:id/deployments}) as a request: its shape, then {@link Request#of}. */
    static Request parse(JsonNode body, long maxBytes) {
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        for (java.util.Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!FIELDS.contains(f)) {
                throw ApiException.badRequest("unknown field '" + f + "'; a deployment takes "
                        + String.join(", ", FIELDS.stream().sorted().toList()));
            }
        }
        String encoded = b.requiredString("bundle").replaceAll("\\s+", "");
        byte[] bundle;
        try {
            bundle = Base64.getDecoder().decode(encoded);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("bundle must be base64: " + e.getMessage());
        }
        String message = b.optionalText("deploy_message", 0, 1000).orElse(null);
        String strategy = b.oneOf("strategy", STRATEGIES).orElse(null);
        String provider = null;
        JsonNode p = body.get("provider");
        if (p != null && !p.isNull()) {
            if (!p.isObject()) {
                throw ApiException.badRequest("provider must be an object {\"name\"}");
            }
            provider = JsonBody.of(p).optionalText("name", 1, 100).orElse(null);
        }
        String kind = null;
        JsonNode t = body.get("target");
        if (t != null && !t.isNull()) {
            if (!t.isObject()) {
                throw ApiException.badRequest("target must be an object {\"artifact\": {\"kind\"}}");
            }
            JsonNode a = t.get("artifact");
            if (a != null && !a.isNull()) {
                if (!a.isObject()) {
                    throw ApiException.badRequest("target.artifact must be an object {\"kind\"}");
                }
                JsonNode k = a.get("kind");
                if (k != null && !k.isNull()) {
                    if (!k.isTextual()) {
                        throw ApiException.badRequest(
                                "target.artifact.kind must be one of container-image, worker-bundle");
                    }
                    kind = k.textValue();
                }
            }
        }
        Integer percent = null;
        JsonNode c = body.get("canary_percent");
        if (c != null && !c.isNull()) {
            if (!c.isIntegralNumber() || !c.canConvertToInt()) {
                throw ApiException.badRequest(PERCENT);
            }
            percent = c.intValue();
        }
        return Request.of(bundle, message, strategy, provider, kind, percent, maxBytes);
    }

    /** Creates a deployment of {@code service}: 201 with it, or 200 with the first one for a repeated Idempotency-Key. */
    Response create(Service service, JsonNode body, String idempotencyHeader) {
        String key = Idempotency.key(idempotencyHeader);
        String hash = key == null ? null : Idempotency.hash(body);
        Optional<DeploymentRow> replay = replay(service.id(), key, hash);
        Created created = replay.isPresent()
                ? new Created(replay.get(), true)
                : deploy(service, parse(body, deployer.config().maxArtifactBytes()), key, hash);
        return Response.status(created.replayed() ? 200 : 201)
                .entity(Map.of("deployment", Views.deployment(created.row())))
                .build();
    }

    /** A deployment made, or the one an earlier request with the same Idempotency-Key made ({@code replayed}). */
    record Created(DeploymentRow row, boolean replayed) {}

    /**
     * Deploys {@code r}: validated by its provider, stored, and running (direct) or running beside the current one
     * (canary; a service without a current deployment deploys directly) when this returns. When the providers cannot
     * run it, what ran before keeps running and the deployment is failed. {@code key} and {@code hash}: the
     * Idempotency-Key and its body's hash, or null.
     */
    Created deploy(Service service, Request r, String key, String hash) {
        Deployer.Registered provider = deployer.provider(r.provider(), r.kind()).orElseThrow(() -> missingProvider(r));
        String id = Ids.id("dep");
        try {
            return deployer.locked(() -> {
                Optional<DeploymentRow> again = replay(service.id(), key, hash);
                if (again.isPresent()) {
                    return new Created(again.get(), true);
                }
                Service fresh =
                        store.service(service.id()).orElseThrow(() -> ApiException.notFound(ServicesApi.NOT_FOUND));
                Deployment candidate = deployer.build(
                        fresh,
                        placeholder(id, fresh, r),
                        DesiredState.runtimeId(id, fresh.configRevision()),
                        r.bundle());
                try {
                    provider.provider().validate(candidate);
                } catch (DeploymentException e) {
                    throw answer(e);
                }
                Blob blob;
                try {
                    blob = blobs.put(Deployer.BLOB_NAMESPACE, new ByteArrayInputStream(r.bundle()), r.bundle().length);
                } catch (BlobTooLargeException e) {
                    throw new ApiException(413, "PAYLOAD_TOO_LARGE", "the bundle is too large");
                } catch (IOException e) {
                    throw ApiException.unavailable("the bundle cannot be stored now: " + e.getMessage());
                }
                deployer.remember(blob.key(), r.bundle());
                boolean canary = "canary".equals(r.strategy()) && fresh.currentDeploymentId() != null;
                Integer percent = canary
                        ? (r.canaryPercent() != null
                                ? r.canaryPercent()
                                : deployer.config().canaryPercent())
                        : null;
                DeploymentRow row = new DeploymentRow(
                        id,
                        fresh.id(),
                        0,
                        canary ? "canary" : "active",
                        r.strategy(),
                        r.provider(),
                        r.kind(),
                        blob.key(),
                        blob.sha256(),
                        blob.size(),
                        r.message(),
                        percent,
                        key,
                        hash,
                        null);
                store.sql().tx(c -> {
                    store.insertDeployment(c, row);
                    if (canary) {
                        if (fresh.canaryDeploymentId() != null) {
                            store.setStatus(c, fresh.canaryDeploymentId(), "aborted");
                        }
                        store.setRouting(c, fresh.id(), fresh.currentDeploymentId(), id, percent);
                    } else {
                        if (fresh.currentDeploymentId() != null) {
                            store.setStatus(c, fresh.currentDeploymentId(), "superseded");
                        }
                        if (fresh.canaryDeploymentId() != null) {
                            store.setStatus(c, fresh.canaryDeploymentId(), "aborted");
                        }
                        store.setRouting(c, fresh.id(), id, null, null);
                    }
                    return null;
                });
                try {
                    deployer.reconcile();
                } catch (DeploymentException e) {
                    revert(fresh, id);
                    throw answer(e);
                }
                return new Created(store.deployment(id).orElseThrow(), false);
            });
        } catch (DeploymentException e) {
            throw answer(e);
        } catch (Sql.Conflict e) {
            // another instance stored the same key meanwhile
            return new Created(replay(service.id(), key, hash).orElseThrow(() -> e), true);
        }
    }

    private Optional<DeploymentRow> replay(String serviceId, String key, String hash) {
        if (key == null) {
            return Optional.empty();
        }
        Optional<DeploymentRow> existing = store.byIdempotencyKey(serviceId, key);
        if (existing.isEmpty()) {
            return Optional.empty();
        }
        return switch (Idempotency.decide(existing.get().requestHash(), hash)) {
            case REPLAY -> existing;
            case CONFLICT ->
                throw ApiException.conflict("Idempotency-Key '" + key + "' was used with a different body");
            case NEW -> Optional.empty();
        };
    }

    private static DeploymentRow placeholder(String id, Service s, Request r) {
        return new DeploymentRow(
                id,
                s.id(),
                0,
                "new",
                r.strategy(),
                r.provider(),
                r.kind(),
                "",
                "",
                r.bundle().length,
                r.message(),
                null,
                null,
                null,
                null);
    }

    /** Puts the service's routing back as it was before {@code failed} and runs that again. */
    private void revert(Service before, String failed) {
        store.sql().tx(c -> {
            store.setStatus(c, failed, "failed");
            if (before.currentDeploymentId() != null) {
                store.setStatus(c, before.currentDeploymentId(), "active");
            }
            if (before.canaryDeploymentId() != null) {
                store.setStatus(c, before.canaryDeploymentId(), "canary");
            }
            store.setRouting(
                    c, before.id(), before.currentDeploymentId(), before.canaryDeploymentId(), before.canaryPercent());
            return null;
        });
        try {
            deployer.reconcile();
        } catch (DeploymentException e) {
            LOG.warn("services: restoring {} after a failed deployment failed too: {}", before.id(), e.getMessage());
        }
    }

    private ApiException missingProvider(Request r) {
        List<String> running = deployer.providers().stream()
                .map(p -> p.name() + " (" + String.join(", ", p.kinds()) + ")")
                .toList();
        if (deployer.provider(r.provider()).isPresent()) {
            return ApiException.badRequest("the deployment provider '" + r.provider() + "' does not run " + r.kind()
                    + " artifacts; install a provider bundle" + " that does");
        }
        return ApiException.badRequest("no deployment provider '" + r.provider() + "' is installed to run " + r.kind()
                + " artifacts" + (running.isEmpty() ? "" : "; running: " + String.join(", ", running)));
    }

    static ApiException answer(DeploymentException e) {
        String message = e.getMessage() == null ? "the deployment provider failed" : e.getMessage();
        return e.kind() == DeploymentException.Kind.INVALID
                ? ApiException.badRequest(message)
                : ApiException.unavailable(message);
    }

    // ------------------------------------------------------------------ rollback, promote, abort

    /** A rollback: the deployment now current, and the one that was. */
    record RolledBack(DeploymentRow deployment, String from) {}

    /** Makes {@code targetId} (default: the deployment before the current one) current again. */
    RolledBack rollback(Service service, String targetId) {
        try {
            return deployer.locked(() -> {
                Service fresh =
                        store.service(service.id()).orElseThrow(() -> ApiException.notFound(ServicesApi.NOT_FOUND));
                if (fresh.currentDeploymentId() == null) {
                    throw ApiException.conflict("the service has no deployment to roll back");
                }
                DeploymentRow current =
                        store.deployment(fresh.currentDeploymentId()).orElseThrow();
                DeploymentRow target;
                if (targetId != null) {
                    target = store.deployment(targetId)
                            .filter(d -> d.serviceId().equals(fresh.id()))
                            .orElseThrow(() -> ApiException.notFound("deployment not found"));
                    if (target.id().equals(current.id())) {
                        throw ApiException.conflict("that deployment is already the current one");
                    }
                    if ("failed".equals(target.status())) {
                        throw ApiException.conflict("that deployment failed to start; it cannot be made current");
                    }
                } else {
                    target = store.sql()
                            .one(
                                    "SELECT " + ServiceStore.DEPLOYMENT_COLUMNS
                                            + " FROM service_deployments WHERE service_id = ? AND seq < ? "
                                            + "AND status = 'superseded' ORDER BY seq DESC LIMIT 1",
                                    DeploymentRow::of,
                                    fresh.id(),
                                    current.seq())
                            .orElseThrow(() -> ApiException.conflict("there is no earlier deployment to roll back to"));
                }
                if (deployer.provider(target.provider(), target.artifactKind()).isEmpty()) {
                    throw ApiException.badRequest(
                            "the deployment provider '" + target.provider() + "' of that deployment is not installed");
                }
                DeploymentRow chosen = target;
                store.sql().tx(c -> {
                    store.setStatus(c, current.id(), "superseded");
                    if (fresh.canaryDeploymentId() != null) {
                        store.setStatus(c, fresh.canaryDeploymentId(), "aborted");
                    }
                    store.setStatus(c, chosen.id(), "active");
                    store.setRouting(c, fresh.id(), chosen.id(), null, null);
                    return null;
                });
                try {
                    deployer.reconcile();
                } catch (DeploymentException e) {
                    store.sql().tx(c -> {
                        store.setStatus(c, chosen.id(), chosen.status());
                        return null;
                    });
                    revert(fresh, "");
                    throw answer(e);
                }
                return new RolledBack(store.deployment(chosen.id()).orElseThrow(), current.id());
            });
        } catch (DeploymentException e) {
            throw answer(e);
        }
    }

    /**
     * Ends the canary {@code deploymentId} (null: whichever the service has; 409 when it has none): promoted (it
     * becomes current) or aborted (the current one takes all requests).
     */
    DeploymentRow endCanary(Service service, String deploymentId, boolean promote) {
        try {
            return deployer.locked(() -> {
                Service fresh =
                        store.service(service.id()).orElseThrow(() -> ApiException.notFound(ServicesApi.NOT_FOUND));
                if (deploymentId == null && fresh.canaryDeploymentId() == null) {
                    throw ApiException.conflict(NO_CANARY);
                }
                DeploymentRow d = store.deployment(deploymentId == null ? fresh.canaryDeploymentId() : deploymentId)
                        .filter(x -> x.serviceId().equals(fresh.id()))
                        .orElseThrow(() -> ApiException.notFound("deployment not found"));
                if (!d.id().equals(fresh.canaryDeploymentId())) {
                    throw ApiException.conflict("that deployment is not the service's canary");
                }
                store.sql().tx(c -> {
                    if (promote) {
                        store.setStatus(c, fresh.currentDeploymentId(), "superseded");
                        store.setStatus(c, d.id(), "active");
                        store.setRouting(c, fresh.id(), d.id(), null, null);
                    } else {
                        store.setStatus(c, d.id(), "aborted");
                        store.setRouting(c, fresh.id(), fresh.currentDeploymentId(), null, null);
                    }
                    return null;
                });
                try {
                    deployer.reconcile();
                } catch (DeploymentException e) {
                    store.sql().tx(c -> {
                        store.setStatus(c, d.id(), "canary");
                        return null;
                    });
                    revert(fresh, "");
                    throw answer(e);
                }
                return store.deployment(d.id()).orElseThrow();
            });
        } catch (DeploymentException e) {
            throw answer(e);
        }
    }

    static final String NO_CANARY = "the service has no canary";

    /**
     * Gives the service's canary {@code percent} (1–99) of the requests: 409 when it has no canary. Only the routing
     * changes (the providers run the same deployments), and the routing table has it when this returns.
     */
    void setCanaryPercent(Service service, int percent) {
        if (percent < 1 || percent > 99) {
            throw ApiException.badRequest(PERCENT);
        }
        deployer.applying(() -> {
            Service fresh = store.service(service.id()).orElseThrow(() -> ApiException.notFound(ServicesApi.NOT_FOUND));
            if (fresh.canaryDeploymentId() == null) {
                throw ApiException.conflict(NO_CANARY);
            }
            store.sql().tx(c -> {
                store.setCanaryPercent(c, fresh.id(), fresh.canaryDeploymentId(), percent);
                return null;
            });
            return null;
        });
    }
}
