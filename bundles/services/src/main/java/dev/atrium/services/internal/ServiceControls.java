package dev.atrium.services.internal;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.services.api.ServiceControl;
import dev.atrium.services.internal.ServiceStore.DeploymentRow;
import dev.atrium.services.internal.ServiceStore.Service;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@link ServiceControl}: services as another capability (the app platform) changes them, through the code the
 * {@code /api/services} routes use ({@link ServiceEdits}, {@link DeployFlow}), so the checks, the rollout and the apply
 * under the {@link Deployer}'s lock are the same; a refusal is the route's status and code as a {@link Refused}.
 *
 * <p>A service id here is one the calling bundle found in a workspace the kernel proved for its caller (the contract);
 * where a call brings a caller, the workspace is proven again: another Principal's service is not found (404), as on
 * the routes. Setting an unchanged env or set of bindings changes nothing, so the running deployments are not
 * restarted by a caller that makes the whole desired state again on every rollout.
 */
@Component(service = ServiceControl.class)
public class ServiceControls implements ServiceControl {

    private final ServiceStore store;
    private final Deployer deployer;
    private final DeployFlow flow;
    private final ServiceEdits edits;

    @Activate
    public ServiceControls(
            @Reference ServiceStore store,
            @Reference Deployer deployer,
            @Reference DeployFlow flow,
            @Reference ServiceEdits edits) {
        this.store = store;
        this.deployer = deployer;
        this.flow = flow;
        this.edits = edits;
    }

    /** Runs {@code work}, answering an {@link ApiException} as the {@link Refused} it stands for. */
    static <T> T refusing(Supplier<T> work) {
        try {
            return work.get();
        } catch (ApiException e) {
            throw refused(e);
        }
    }

    static Refused refused(ApiException e) {
        Refused r = new Refused(e.status(), e.code(), e.getMessage());
        r.initCause(e);
        return r;
    }

    private static void act(Runnable work) {
        refusing(() -> {
            work.run();
            return null;
        });
    }

    @Override
    public Optional<ServiceInfo> service(String serviceId) {
        return serviceId == null ? Optional.empty() : store.service(serviceId).map(this::serviceInfo);
    }

    @Override
    public Optional<ServiceInfo> byName(String spaceId, String name) {
        return spaceId == null || name == null
                ? Optional.empty()
                : store.byName(spaceId, name).map(this::serviceInfo);
    }

    @Override
    public ServiceInfo create(Caller caller, SpaceRef space, String name, String slugHint) {
        return refusing(() -> {
            proven(caller, space);
            String checked = ServiceEdits.text("name", name, 1, 100);
            String base = slugHint == null || slugHint.isBlank() ? checked : slugHint;
            return serviceInfo(edits.create(caller, space, checked, null, Slugs.from(base)));
        });
    }

    @Override
    public void replaceEnv(Caller caller, String serviceId, Map<String, EnvVar> env) {
        act(() -> {
            if (env == null) {
                throw ApiException.badRequest("env is required (an empty map removes every variable)");
            }
            Service s = edits.owned(caller, serviceId);
            List<ServiceEdits.EnvChange> changes = new ArrayList<>();
            env.forEach((name, v) -> {
                if (v == null || v.value() == null) {
                    throw ApiException.badRequest("the value of " + name + " is required");
                }
                changes.add(ServiceEdits.EnvChange.checked(name, v.value(), v.secret()));
            });
            if (!edits.envIs(s, changes)) {
                edits.setEnv(s, changes, true);
            }
        });
    }

    @Override
    public void replaceBindings(Caller caller, SpaceRef space, String serviceId, Map<String, String> bindings) {
        act(() -> {
            if (bindings == null) {
                throw ApiException.badRequest("bindings is required (an empty map removes every binding)");
            }
            proven(caller, space);
            Service s = existing(serviceId);
            if (!s.spaceId().equals(space.id())) {
                throw ApiException.notFound(ServicesApi.NOT_FOUND);
            }
            List<ServiceEdits.Wanted> wanted = new ArrayList<>();
            bindings.forEach((name, resourceId) -> {
                if (resourceId == null) {
                    throw ApiException.badRequest("binding " + name + " needs a resource id");
                }
                wanted.add(ServiceEdits.Wanted.checked(
                        name, ServiceEdits.text("resource_id", resourceId, 1, 200), null, null));
            });
            if (!edits.boundIds(s).equals(bindings)) {
                edits.bind(caller, space, s, wanted);
            }
        });
    }

    @Override
    public DeploymentInfo deploy(
            String serviceId,
            byte[] artifact,
            String artifactKind,
            String provider,
            String message,
            String strategy,
            Integer canaryPercent) {
        return refusing(() -> {
            Service s = existing(serviceId);
            DeployFlow.Request r = DeployFlow.Request.of(
                    artifact,
                    message,
                    strategy,
                    provider,
                    artifactKind,
                    canaryPercent,
                    deployer.config().maxArtifactBytes());
            return deploymentInfo(flow.deploy(s, r, null, null).row());
        });
    }

    @Override
    public void setCanaryPercent(String serviceId, int percent) {
        act(() -> flow.setCanaryPercent(existing(serviceId), percent));
    }

    @Override
    public void endCanary(String serviceId, boolean promote) {
        act(() -> flow.endCanary(existing(serviceId), null, promote));
    }

    @Override
    public DeploymentInfo rollback(String serviceId, String deploymentId) {
        return refusing(() ->
                deploymentInfo(flow.rollback(existing(serviceId), deploymentId).deployment()));
    }

    @Override
    public List<DeploymentInfo> deployments(String serviceId) {
        return refusing(() -> store.deployments(existing(serviceId).id()).stream()
                .map(ServiceControls::deploymentInfo)
                .toList());
    }

    @Override
    public void setSettings(Caller caller, String serviceId, String compatibilityDate, Map<String, Long> limits) {
        act(() -> {
            Service s = edits.owned(caller, serviceId);
            ObjectNode current = Settings.parse(s.settings());
            ObjectNode patch = JsonNodeFactory.instance.objectNode();
            if (compatibilityDate == null) {
                patch.putNull("compatibility_date");
            } else {
                patch.put("compatibility_date", compatibilityDate);
            }
            if (limits == null || limits.isEmpty()) {
                patch.putNull("limits");
            } else {
                ObjectNode l = patch.putObject("limits");
                limits.forEach(l::put);
            }
            ObjectNode merged = Settings.merge(current, patch);
            if (merged.equals(current)) {
                return;
            }
            deployer.applying(() -> store.setSettings(s.id(), merged.toString()));
        });
    }

    @Override
    public void setPathRoutes(Caller caller, String serviceId, Map<String, String> routes) {
        act(() -> {
            if (routes == null) {
                throw ApiException.badRequest("routes is required (an empty map removes every path route)");
            }
            if (routes.size() > MAX_PATH_ROUTES) {
                throw ApiException.badRequest("a service has at most " + MAX_PATH_ROUTES + " path routes");
            }
            Service s = edits.owned(caller, serviceId);
            Map<String, String> wanted = new TreeMap<>();
            routes.forEach((prefix, target) -> {
                String p = prefix(prefix);
                Service t = s.id().equals(target)
                        ? s
                        : (target == null ? Optional.<Service>empty() : store.service(target))
                                .filter(x -> x.spaceId().equals(s.spaceId()))
                                .orElseThrow(() -> ApiException.notFound("path route " + p
                                        + ": the service it sends to was not" + " found in the service's workspace"));
                if (wanted.put(p, t.id()) != null) {
                    throw ApiException.badRequest("path route " + p + " is given twice");
                }
            });
            if (store.pathRoutes(s.id()).equals(wanted)) {
                return;
            }
            deployer.applying(() -> store.sql().tx(c -> {
                store.replacePathRoutes(c, s.id(), wanted);
                return null;
            }));
        });
    }

    static final int MAX_PATH_ROUTES = 100;

    /** A path prefix as routed: starting with '/', without a trailing '/' (but the root), of URL path characters. */
    static String prefix(String prefix) {
        if (prefix == null
                || !prefix.startsWith("/")
                || prefix.length() > 512
                || !prefix.matches("/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*")
                || prefix.contains("//")) {
            throw ApiException.badRequest("a path route's prefix must be a URL path starting with '/' (got "
                    + (prefix == null ? "none" : "'" + prefix + "'") + ")");
        }
        return prefix.length() > 1 && prefix.endsWith("/") ? prefix.substring(0, prefix.length() - 1) : prefix;
    }

    @Override
    public boolean delete(String serviceId) {
        return refusing(() ->
                serviceId != null && store.service(serviceId).map(edits::delete).orElse(false));
    }

    // ------------------------------------------------------------------ helpers

    private Service existing(String serviceId) {
        return (serviceId == null ? Optional.<Service>empty() : store.service(serviceId))
                .orElseThrow(() -> ApiException.notFound(ServicesApi.NOT_FOUND));
    }

    /** A workspace the kernel's owner scope proved for {@code caller}; else 404, as the routes answer. */
    private static void proven(Caller caller, SpaceRef space) {
        if (space == null || !space.provenFor(caller)) {
            throw ApiException.notFound("workspace not found");
        }
    }

    private ServiceInfo serviceInfo(Service s) {
        return new ServiceInfo(
                s.id(),
                s.spaceId(),
                s.name(),
                s.slug(),
                s.slug() + "." + deployer.config().appsDomain(),
                Views.status(s),
                s.currentDeploymentId(),
                s.canaryDeploymentId(),
                s.canaryDeploymentId() == null ? null : s.canaryPercent());
    }

    static DeploymentInfo deploymentInfo(DeploymentRow d) {
        return new DeploymentInfo(d.id(), d.serviceId(), d.status(), d.provider(), d.artifactKind(), d.createdAt());
    }
}
