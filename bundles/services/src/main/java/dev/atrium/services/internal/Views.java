package dev.atrium.services.internal;

import dev.atrium.deploy.api.LogLine;
import dev.atrium.services.internal.ServiceStore.DeploymentRow;
import dev.atrium.services.internal.ServiceStore.DomainRow;
import dev.atrium.services.internal.ServiceStore.Service;
import java.util.LinkedHashMap;
import java.util.Map;

/** The wire shape of services, deployments, domains and log lines. */
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

    static Map<String, Object> domain(DomainRow d, int challengePort, Map<String, Object> ssl) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", d.id());
        m.put("service_id", d.serviceId());
        m.put("domain", d.domain());
        m.put("status", d.status());
        m.put("verified_by", d.verifiedBy());
        m.put("verified_at", d.verifiedAt() == null ? null : d.verifiedAt().toString());
        m.put("last_check", d.lastCheck());
        Map<String, Object> v = new LinkedHashMap<>();
        v.put(
                "http",
                Map.of(
                        "url",
                        "http://" + d.domain() + (challengePort == 80 ? "" : ":" + challengePort)
                                + DomainVerifier.CHALLENGE_PATH + d.token(),
                        "body",
                        d.token()));
        v.put(
                "dns",
                Map.of(
                        "type",
                        "TXT",
                        "name",
                        DomainVerifier.TXT_LABEL + "." + d.domain(),
                        "value",
                        DomainVerifier.TXT_PREFIX + d.token()));
        m.put("verification", v);
        m.put("ssl", ssl);
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
