package dev.atrium.apps.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.apps.internal.AppStore.Group;
import dev.atrium.apps.internal.GroupReconciler.Built;
import dev.atrium.apps.internal.GroupReconciler.Change;
import dev.atrium.apps.internal.GroupReconciler.Desired;
import dev.atrium.apps.internal.GroupReconciler.Outcome;
import dev.atrium.apps.internal.manifest.Manifest;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SpaceRef;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Groups driven directly (not through app deployments): plan, apply and uninstall of a manifest. An apply here records
 * no app deployment, so the group's {@code current_app_deployment_id} becomes null (the spec's effect 4).
 */
@Component(service = Groups.class)
public class Groups {

    static final Pattern NAME = Pattern.compile("[a-z][a-z0-9-]{0,31}");

    private final AppStore store;
    private final Sources sources;
    private final Builds builds;
    private final GroupReconciler reconciler;
    private final Rollouts rollouts;
    private final Locks locks;

    @Activate
    public Groups(
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

    static void checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw ApiException.badRequest("a group name is 1-32 lower-case letters, digits and hyphens, starting with a"
                    + " letter (it prefixes the names of the group's services and resources)");
        }
    }

    /** The plan of {@code manifestText} (or the group's desired state) against the group's inventory; changes nothing. */
    ObjectNode plan(SpaceRef space, String groupName, Optional<Group> group, String manifestText) {
        String text =
                manifestText != null ? manifestText : group.map(Group::desired).orElse(null);
        if (text == null) {
            throw ApiException.badRequest("the group has no desired manifest: send \"manifest\"");
        }
        Manifest m = AppDeployments.parse(text);
        Group g = group.orElse(
                new Group(null, space.id(), groupName, null, null, null, "workerd", Map.of(), null, null, null, null));
        List<Change> changes = g.id() == null
                ? reconciler.plan(emptyGroup(g), new Desired(m, null, Map.of(), g.provider()))
                : reconciler.plan(g, new Desired(m, null, g.env(), g.provider()));
        ObjectNode plan = AppStore.JSON.createObjectNode();
        plan.put("group_name", groupName);
        plan.put("group_id", g.id());
        ArrayNode list = plan.putArray("changes");
        ObjectNode summary = plan.putObject("summary");
        for (String a : new String[] {"create", "update", "delete", "unchanged"}) {
            summary.put(a, 0);
        }
        for (Change c : changes) {
            list.add(c.json());
            summary.put(c.action(), summary.path(c.action()).asInt() + 1);
        }
        return plan;
    }

    private static Group emptyGroup(Group g) {
        return new Group("", g.spaceId(), g.name(), null, null, null, g.provider(), Map.of(), null, null, null, null);
    }

    /** Applies a manifest to the group named {@code groupName}, made when there is none. */
    Result apply(
            Caller caller,
            SpaceRef space,
            String groupName,
            String manifestText,
            JsonNode sourceBody,
            String selfBase) {
        checkName(groupName);
        Group created = store.ensureGroup(space.id(), groupName, Ids.id("grp"));
        return locks.with("app-group:" + created.id(), () -> {
            Group g = store.groupById(created.id())
                    .orElseThrow(() -> ApiException.conflict("the group " + groupName + " was just deleted"));
            String text = manifestText != null ? manifestText : g.desired();
            if (text == null) {
                throw ApiException.badRequest("the group has no desired manifest: send \"manifest\"");
            }
            Manifest m = AppDeployments.parse(text);
            ObjectNode source = g.source();
            Map<String, Built> artifacts = Map.of();
            if (!GroupReconciler.serviceKeys(m).isEmpty()) {
                Sources.Resolved resolved = resolveSource(caller, space, sourceBody, g, selfBase);
                artifacts = builds.resolve(caller, m, resolved);
                source = resolved.json();
            }
            store.upsertApp(
                    Ids.id("app"), space, g.id(), m.name(), m.displayName(), m.description(), m.icon(), m.version());
            store.setDesired(g.id(), text);
            supersede(g);
            Outcome outcome =
                    reconciler.apply(caller, space, g, new Desired(m, artifacts, g.env(), g.provider()), false, 0);
            store.applied(g.id(), source, g.provider(), g.env(), null);
            return new Result(store.groupById(g.id()).orElseThrow(), outcome);
        });
    }

    /** Drains the group (an empty desired state), then deletes it; terminal. */
    Outcome uninstall(Caller caller, SpaceRef space, Group group) {
        return locks.with("app-group:" + group.id(), () -> {
            Group g = store.groupById(group.id()).orElseThrow(() -> ApiException.notFound(GroupsResource.NOT_FOUND));
            supersede(g);
            Outcome outcome = reconciler.apply(
                    caller,
                    space,
                    g,
                    new Desired(Manifest.empty(g.name()), Map.of(), Map.of(), g.provider()),
                    false,
                    0);
            store.deleteGroup(g.id());
            return outcome;
        });
    }

    private void supersede(Group g) {
        store.activeRollouts(g.id()).forEach(rollouts::supersede);
    }

    private Sources.Resolved resolveSource(Caller caller, SpaceRef space, JsonNode body, Group g, String selfBase) {
        JsonNode s = body != null && !body.isNull() ? body : g.source();
        if (s == null || s.isNull() || !s.isObject()) {
            throw new ApiException(
                    422,
                    "INVALID_MANIFEST",
                    "the manifest has workers or containers, built by workflows:"
                            + " send \"source\" {repository_id or repository_url, ref, ref_type} to build them from");
        }
        String refType = s.path("ref_type").asText("branch");
        if (!Sources.REF_TYPES.contains(refType)) {
            throw ApiException.badRequest("source.ref_type must be branch, tag or commit");
        }
        String ref = s.path("ref").asText(null);
        if (ref == null || ref.isBlank()) {
            throw ApiException.badRequest("source.ref is required");
        }
        String repoId = s.path("repository_id").isTextual()
                ? s.path("repository_id").asText()
                : s.path("resolved_repo_id").isTextual()
                        ? s.path("resolved_repo_id").asText()
                        : null;
        String url = repoId == null ? s.path("repository_url").asText(null) : null;
        if (repoId == null && url == null) {
            throw ApiException.badRequest("source needs repository_id or repository_url");
        }
        return sources.resolve(caller, space, repoId, url, ref, refType, selfBase);
    }

    /** A group after an apply, with what the apply did. */
    record Result(Group group, Outcome outcome) {}
}
