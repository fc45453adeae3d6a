package dev.atrium.services.internal;

import dev.atrium.services.internal.ServiceStore.DeploymentRow;
import dev.atrium.services.internal.ServiceStore.Service;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * What every provider must run: each service's current deployment and its canary, if any. A provider's runtime id of a
 * deployment is the deployment id plus the service's config revision, so that a change of env, settings or bindings is
 * a new runtime deployment (deploy.api: a provider's deployments are immutable) while the API's deployment stays the same.
 */
final class DesiredState {

    /** One deployment a provider runs. */
    record Entry(String provider, String runtimeId, Service service, DeploymentRow row, boolean canary) {}

    private DesiredState() {}

    static String runtimeId(String deploymentId, int revision) {
        return deploymentId + "-r" + revision;
    }

    /**
     * The desired state per provider name. Every name in {@code providers} is present, with an empty list when it should
     * run nothing (so that a service's last deployment stops when the service is deleted); a deployment whose provider is
     * not running is left out (it cannot run anywhere).
     */
    static Map<String, List<Entry>> compute(
            List<Service> services, Function<String, Optional<DeploymentRow>> rows, Collection<String> providers) {
        Map<String, List<Entry>> out = new LinkedHashMap<>();
        for (String p : providers) {
            out.put(p, new ArrayList<>());
        }
        for (Service s : services) {
            if (s.currentDeploymentId() == null) {
                continue;
            }
            add(out, s, rows.apply(s.currentDeploymentId()), false);
            if (s.canaryDeploymentId() != null && !s.canaryDeploymentId().equals(s.currentDeploymentId())) {
                add(out, s, rows.apply(s.canaryDeploymentId()), true);
            }
        }
        return out;
    }

    private static void add(Map<String, List<Entry>> out, Service s, Optional<DeploymentRow> row, boolean canary) {
        if (row.isEmpty()) {
            return;
        }
        List<Entry> list = out.get(row.get().provider());
        if (list != null) {
            list.add(new Entry(
                    row.get().provider(), runtimeId(row.get().id(), s.configRevision()), s, row.get(), canary));
        }
    }
}
