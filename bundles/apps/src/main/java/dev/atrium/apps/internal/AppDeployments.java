package dev.atrium.apps.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.apps.internal.AppStore.AppDeployment;
import dev.atrium.apps.internal.AppStore.Group;
import dev.atrium.apps.internal.AppStore.GroupObject;
import dev.atrium.apps.internal.GroupReconciler.Built;
import dev.atrium.apps.internal.GroupReconciler.Desired;
import dev.atrium.apps.internal.GroupReconciler.Outcome;
import dev.atrium.apps.internal.manifest.Manifest;
import dev.atrium.apps.internal.manifest.ManifestParser;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.services.api.ServiceControl;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The app-deployment flow: validate the manifest at the source's commit, resolve the workflow artifacts, create or
 * update the app, reconcile the group (resources, OAuth client, services and their hostnames), write the record with
 * its snapshot, and start the rollout. One apply of a group at a time, across servers.
 */
@Component(service = AppDeployments.class)
public class AppDeployments {

    static final String SNAPSHOT_FORMAT = "atrium.app-snapshot/v1";

    private final AppStore store;
    private final Sources sources;
    private final Builds builds;
    private final GroupReconciler reconciler;
    private final Rollouts rollouts;
    private final Locks locks;

    @Activate
    public AppDeployments(
            @Reference AppStore store,
            @Reference Sources sources,
            @Reference Builds builds,
            @Reference GroupReconciler reconciler,
            @Reference Rollouts rollouts) {
        this.store = store;
        this.sources = sources;
        this.builds = builds;
        this.reconciler = reconciler;
        this.rollouts = rollouts;
        this.locks = new Locks(store.dataSource());
    }

    /** A create request, as {@link AppDeploymentRequests} read it. */
    record Request(
            String groupName,
            String repositoryId,
            String repositoryUrl,
            String ref,
            String refType,
            Map<String, String> env,
            String provider,
            String strategy,
            ArrayNode steps,
            Set<String> approved,
            String selfBase) {}

    /** The record and what the apply did. */
    record Created(AppDeployment deployment, Outcome outcome) {}

    Created create(Caller caller, SpaceRef space, Request r) {
        Sources.Resolved source =
                sources.resolve(caller, space, r.repositoryId(), r.repositoryUrl(), r.ref(), r.refType(), r.selfBase());
        Manifest m = parse(source.manifest());
        String groupName = r.groupName() != null ? r.groupName() : m.name();
        Groups.checkName(groupName);
        // everything that may refuse or wait comes before the group is made and locked: a refused deploy leaves no
        // empty group, and a build that waits for its workflow holds no lock and no connection
        String repoId = source.repository().id();
        approvals(store.groupByName(space.id(), groupName).orElse(null), m, repoId, r.approved());
        Map<String, Built> artifacts = builds.resolve(caller, m, source);
        Group group = store.ensureGroup(space.id(), groupName, Ids.id("grp"));
        return locks.with("app-group:" + group.id(), () -> {
            Group fresh = store.groupById(group.id())
                    .orElseThrow(() -> ApiException.conflict("the group " + groupName + " was just deleted"));
            approvals(fresh, m, repoId, r.approved());
            return run(
                    caller,
                    space,
                    fresh,
                    m,
                    source.json(),
                    source.manifest(),
                    artifacts,
                    r.env(),
                    r.provider(),
                    r.strategy(),
                    r.steps(),
                    null);
        });
    }

    /**
     * Re-applies a deployment's snapshot (source, artifacts, provider, env) to its group, which must still exist; a
     * rollback never makes a group again. Resources are kept, data is not restored.
     */
    Created rollback(Caller caller, SpaceRef space, AppDeployment d, Set<String> approved) {
        JsonNode snap = d.snapshot();
        if (!snap.path("rollback_ready").asBoolean()) {
            throw ApiException.conflict("app deployment " + d.id() + " has no snapshot to roll back to");
        }
        Group group = store.groupById(d.groupId())
                .orElseThrow(() -> ApiException.conflict(
                        "the group " + d.groupName() + " was deleted; a rollback never brings a group back"));
        Manifest m = parse(snap.path("manifest").asText());
        String repoId = d.source().path("resolved_repo_id").asText(null);
        approvals(group, m, repoId, approved);
        Map<String, Built> artifacts = new LinkedHashMap<>();
        snap.path("artifacts")
                .fields()
                .forEachRemaining(
                        e -> artifacts.put(e.getKey(), builds.fromOrigin(e.getKey(), (ObjectNode) e.getValue())));
        return locks.with("app-group:" + group.id(), () -> {
            Group fresh = store.groupById(group.id())
                    .orElseThrow(() -> ApiException.conflict(
                            "the group " + d.groupName() + " was deleted; a rollback never brings a group back"));
            approvals(fresh, m, repoId, approved);
            Map<String, String> env = AppStore.strings(snap.path("env").toString());
            return run(
                    caller,
                    space,
                    fresh,
                    m,
                    (ObjectNode) d.source(),
                    snap.path("manifest").asText(),
                    artifacts,
                    env,
                    snap.path("provider").asText("workerd"),
                    "direct",
                    null,
                    d.id());
        });
    }

    private Created run(
            Caller caller,
            SpaceRef space,
            Group group,
            Manifest m,
            ObjectNode source,
            String manifestText,
            Map<String, Built> artifacts,
            Map<String, String> env,
            String provider,
            String strategy,
            ArrayNode steps,
            String rollbackOf) {
        supersedeActive(group);
        store.upsertApp(
                Ids.id("app"), space, group.id(), m.name(), m.displayName(), m.description(), m.icon(), m.version());
        store.setDesired(group.id(), manifestText);
        List<GroupObject> before = store.objects(group.id());
        String id = Ids.id("adp");
        ObjectNode snapshot = AppStore.JSON.createObjectNode();
        snapshot.put("state", "available");
        snapshot.put("rollback_ready", true);
        snapshot.put("format", SNAPSHOT_FORMAT);
        snapshot.put("manifest", manifestText);
        snapshot.put("provider", provider);
        snapshot.set("env", AppStore.JSON.valueToTree(env));
        ObjectNode arts = snapshot.putObject("artifacts");
        artifacts.forEach((k, b) -> arts.set(k, b.origin()));
        ObjectNode applying =
                AppStore.JSON.createObjectNode().put("state", "applying").put("strategy", strategy);
        store.insertDeployment(new AppDeployment(
                id,
                space.id(),
                group.id(),
                group.name(),
                "applying",
                m.version(),
                List.of(),
                rollbackOf,
                source,
                snapshot,
                applying,
                null,
                null));
        int first = steps == null || steps.isEmpty()
                ? 0
                : steps.get(0).path("weight").asInt();
        Outcome outcome;
        try {
            outcome = reconciler.apply(
                    caller, space, group, new Desired(m, artifacts, env, provider), "canary".equals(strategy), first);
        } catch (RuntimeException e) {
            ObjectNode failed = applying.deepCopy().put("state", "failed").put("message", messageOf(e));
            store.updateDeployment(id, "failed", List.of(), snapshot, failed);
            throw e;
        }
        ObjectNode rollout = Rollouts.start(strategy, steps, outcome.canaryServiceIds(), before);
        store.updateDeployment(
                id, Rollouts.statusOf(rollout.path("state").asText()), outcome.hostnames(), snapshot, rollout);
        store.applied(group.id(), source, provider, env, id);
        return new Created(store.deployment(space.id(), id).orElseThrow(), outcome);
    }

    private void supersedeActive(Group group) {
        store.activeRollouts(group.id()).forEach(rollouts::supersede);
    }

    /**
     * Refuses, until the caller approves, a deploy that registers or changes the app's OAuth client when its
     * credentials go into the env, or that takes the group's code from another repository than before.
     */
    private void approvals(Group group, Manifest m, String repoId, Set<String> approved) {
        List<String> needed = new ArrayList<>();
        if (m.oauth() != null) {
            GroupObject had = group == null
                    ? null
                    : reconciler
                            .object(group.id(), GroupReconciler.OAUTH, "client")
                            .orElse(null);
            boolean changes = had == null
                    || !had.detail()
                            .path("redirect_uris")
                            .asText()
                            .equals(String.join(" ", m.oauth().redirectUris()))
                    || !had.detail()
                            .path("scopes")
                            .asText()
                            .equals(String.join(" ", m.oauth().scopes()))
                    || had.detail().path("auto_env").asBoolean() != m.oauth().autoEnv();
            if (changes && !approved.contains("oauth")) {
                needed.add("oauth (the app's OAuth client is registered or its redirect URIs, scopes or auto-env"
                        + " change)");
            }
        }
        if (repoId != null && group != null && group.source() != null) {
            String before = group.source().path("resolved_repo_id").asText();
            if (!before.isEmpty() && !before.equals(repoId) && !approved.contains("source")) {
                needed.add("source (the group's code came from repository " + before + ", now from " + repoId + ")");
            }
        }
        if (!needed.isEmpty()) {
            throw new ApiException(
                    409,
                    "APPROVAL_REQUIRED",
                    "this deploy needs approval: "
                            + String.join("; ", needed) + ". Send \"approve\": ["
                            + needed.stream()
                                    .map(n -> "\"" + n.substring(0, n.indexOf(' ')) + "\"")
                                    .collect(Collectors.joining(", "))
                            + "] to approve");
        }
    }

    static Manifest parse(String text) {
        ManifestParser.Result result = ManifestParser.parse(text);
        if (!result.valid()) {
            throw new ApiException(
                    422,
                    "INVALID_MANIFEST",
                    "app.yml: "
                            + result.problems().stream()
                                    .limit(20)
                                    .map(Object::toString)
                                    .collect(Collectors.joining("; ")));
        }
        return result.manifest();
    }

    private static String messageOf(RuntimeException e) {
        if (e instanceof ServiceControl.Refused r) {
            return r.getMessage();
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
