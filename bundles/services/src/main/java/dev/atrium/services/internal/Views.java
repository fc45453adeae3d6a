package dev.atrium.services.internal;

import dev.atrium.deploy.api.LogLine;
import dev.atrium.services.internal.ServiceStore.DeploymentRow;
import dev.atrium.services.internal.ServiceStore.Service;
import java.util.LinkedHashMap;
import java.util.Map;

/** The wire shape of services, deployments and log lines. */
final class Views {

    private Views() {}

    static String status(Service s) {
        if (s.currentDeploymentId() == null) {
            return "created";
        }
        return s.canaryDeploymentId() != null ? "canary" : "deployed";
    }

    static Map<String, Object> service(Service s, String appsDomain) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", s.id());
        m.put("name", s.name());
        m.put("status", status(s));
        m.put("slug", s.slug());
        m.put("space_id", s.spaceId());
        m.put("hostname", s.slug() + "." + appsDomain);
        m.put("current_deployment_id", s.currentDeploymentId());
        m.put("canary_deployment_id", s.canaryDeploymentId());
        m.put("canary_percent", s.canaryDeploymentId() == null ? null : s.canaryPercent());
        m.put("created_at", s.createdAt().toString());
        m.put("updated_at", s.updatedAt().toString());
        return m;
    }

    static Map<String, Object> deployment(DeploymentRow d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", d.id());
        m.put("service_id", d.serviceId());
        m.put("number", d.seq());
        m.put("status", d.status());
        m.put("strategy", d.strategy());
        m.put("deploy_message", d.deployMessage());
        m.put("provider", Map.of("name", d.provider()));
        m.put(
                "target",
                Map.of(
                        "artifact",
                        Map.of("kind", d.artifactKind(), "sha256", d.artifactSha256(), "size", d.artifactSize())));
        m.put("canary_percent", d.canaryPercent());
        m.put("created_at", d.createdAt().toString());
        return m;
    }

    static Map<String, Object> log(LogLine l) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seq", l.seq());
        m.put("at", l.at() == null ? null : l.at().toString());
        m.put("deployment_id", apiDeploymentId(l.deploymentId()));
        m.put("level", l.level());
        m.put("message", l.message());
        return m;
    }

    /** The API's deployment id of a runtime id ({@code dep_…-r<revision>}). */
    static String apiDeploymentId(String runtimeId) {
        return runtimeId == null ? null : runtimeId.replaceFirst("-r\\d+$", "");
    }
}
