package dev.atrium.apps.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.apps.internal.AppStore.Group;
import dev.atrium.apps.internal.AppStore.GroupObject;
import dev.atrium.apps.internal.manifest.Manifest;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.mcp.api.McpEndpoints;
import dev.atrium.resource.api.ResourceDirectory;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.services.api.ServiceControl;
import dev.atrium.services.api.ServiceControl.EnvVar;
import dev.atrium.services.api.ServiceControl.ServiceInfo;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * Makes a group's inventory what its manifest says: resources, the OAuth client, a service per worker and
 * container, each named {@code <group>-<key>}, the MCP servers its services serve (registered with the MCP
 * capability as managed by the group) and its file handlers (rows here, offered to storage by {@link
 * AppFileHandlers}). {@link #plan} compares and touches nothing; {@link #apply} changes
 * in dependency order (resources, client, services; deletions last, services first) and records each object as
 * soon as it exists, so an apply cut short converges when run again: what it made is found in the inventory, or
 * adopted by its name.
 */
@Component(service = GroupReconciler.class)
public class GroupReconciler {

    static final String RESOURCE = "resource";
    static final String SERVICE = "service";
    static final String OAUTH = "oauth_client";
    static final String MCP = "mcp";
    static final String FILE_HANDLER = "file_handler";
    /** The fingerprint of an inventory row written just before its object is made. */
    static final String PENDING = "pending";

    private final AppStore store;
    private final ServiceControl services;
    private final ResourceDirectory resources;
    private final AppClients clients;

    /** The MCP capability, when its feature runs: an app without MCP endpoints deploys without it. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile McpEndpoints mcp;

    @Activate
    public GroupReconciler(
            @Reference AppStore store,
            @Reference ServiceControl services,
            @Reference ResourceDirectory resources,
            @Reference AppClients clients) {
        this.store = store;
        this.services = services;
        this.resources = resources;
        this.clients = clients;
    }

    /** A built artifact for a worker or container: bytes, their digest, and where they came from (for snapshots). */
    record Built(String kind, byte[] bytes, String digest, ObjectNode origin) {}

    /** What to make: the manifest, its artifacts by worker/container key (none for a plan), env overrides, provider. */
    record Desired(Manifest manifest, Map<String, Built> artifacts, Map<String, String> env, String provider) {}

    /** One object's change: {@code action} is create, update, delete or unchanged. */
    record Change(String kind, String key, String action, List<String> fields) {
        ObjectNode json() {
            ObjectNode o = AppStore.JSON.createObjectNode();
            o.put("kind", kind);
            o.put("key", key);
            o.put("action", action);
            ArrayNode f = o.putArray("fields");
            fields.forEach(f::add);
            return o;
        }

        String label() {
            return kind + ":" + key;
        }
    }

    /** What an apply did. */
    record Outcome(List<String> applied, List<String> skipped, List<String> hostnames, List<String> canaryServiceIds) {}

    // ------------------------------------------------------------------ plan

    List<Change> plan(Group group, Desired desired) {
        Map<String, GroupObject> have = inventory(group.id());
        List<Change> out = new ArrayList<>();
        Manifest m = desired.manifest();
        for (var e : m.resources().entrySet()) {
            out.add(compare(
                    have.remove(RESOURCE + ":" + e.getKey()), RESOURCE, e.getKey(), resourceDetail(e.getValue())));
        }
        if (m.oauth() != null) {
            out.add(compare(have.remove(OAUTH + ":client"), OAUTH, "client", oauthDetail(m.oauth())));
        }
        for (String key : serviceKeys(m)) {
            ObjectNode want = serviceDetail(m, key, desired);
            GroupObject had = have.remove(SERVICE + ":" + key);
            if (desired.artifacts() == null && had != null) {
                want.put("artifact", had.detail().path("artifact").asText());
            }
            out.add(compare(had, SERVICE, key, want));
        }
        for (Manifest.Mcp e : m.mcp()) {
            out.add(compare(have.remove(MCP + ":" + e.name()), MCP, e.name(), mcpDetail(e)));
        }
        for (Manifest.FileHandler h : m.fileHandlers()) {
            out.add(compare(have.remove(FILE_HANDLER + ":" + h.name()), FILE_HANDLER, h.name(), fileHandlerDetail(h)));
        }
        for (GroupObject gone : have.values()) {
            out.add(new Change(gone.kind(), gone.key(), "delete", List.of()));
        }
        return out;
    }

    private static Change compare(GroupObject had, String kind, String key, ObjectNode want) {
        if (had == null) {
            return new Change(kind, key, "create", fieldNames(want));
        }
        List<String> changed = new ArrayList<>();
        want.fieldNames().forEachRemaining(f -> {
            if (!want.get(f).equals(had.detail().get(f))) {
                changed.add(f);
            }
        });
        return new Change(kind, key, changed.isEmpty() ? "unchanged" : "update", changed);
    }

    // ------------------------------------------------------------------ apply

    /**
     * Applies {@code desired} to {@code group} for {@code caller}; services with a current deployment get theirs as a
     * canary when {@code canary} (at {@code firstWeight} percent).
     */
    Outcome apply(Caller caller, SpaceRef space, Group group, Desired desired, boolean canary, int firstWeight) {
        Map<String, GroupObject> have = inventory(group.id());
        Map<String, GroupObject> before = new LinkedHashMap<>(have);
        Manifest m = desired.manifest();
        List<String> applied = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        Map<String, String> resourceIds = new LinkedHashMap<>();
        for (var e : m.resources().entrySet()) {
            String key = e.getKey();
            ObjectNode detail = resourceDetail(e.getValue());
            GroupObject had = have.remove(RESOURCE + ":" + key);
            boolean pending = had != null && PENDING.equals(had.fingerprint());
            if (had != null && !pending && had.detail().path("type").equals(detail.path("type"))) {
                resourceIds.put(key, had.objectId());
                if (had.detail().equals(detail)) {
                    skipped.add(RESOURCE + ":" + key);
                } else {
                    // a resource's config is fixed at creation: the new config is recorded, its data kept
                    store.putObject(new GroupObject(group.id(), RESOURCE, key, had.objectId(), hash(detail), detail));
                    skipped.add(RESOURCE + ":" + key + " (config changes apply to new resources only)");
                }
                continue;
            }
            if (had != null && !pending) {
                throw ApiException.conflict("resource " + key + " changes its type from "
                        + had.detail().path("type").asText() + " to "
                        + e.getValue().type()
                        + "; give the new resource another key");
            }
            Access.resources(caller);
            String name = group.name() + "-" + key;
            Optional<ResourceDirectory.Bound> existing = resources.find(caller, space, null, name);
            if (existing.isPresent() && !pending) {
                throw ApiException.conflict("the workspace has a resource named " + name + " that this group did not"
                        + " make; rename or delete it, or give the manifest's resource another key");
            }
            // recorded before it is made: an apply cut short in between adopts it by name, and only then
            store.putObject(new GroupObject(group.id(), RESOURCE, key, "", PENDING, AppStore.JSON.createObjectNode()));
            String id = existing.map(ResourceDirectory.Bound::resourceId)
                    .orElseGet(() -> createResource(caller, space, e.getValue(), name));
            store.putObject(new GroupObject(group.id(), RESOURCE, key, id, hash(detail), detail));
            resourceIds.put(key, id);
            applied.add(RESOURCE + ":" + key);
        }
        boolean resourcesMade = applied.stream().anyMatch(a -> a.startsWith(RESOURCE + ":"));
        boolean clientChanged = false;
        Map<String, String> oauthEnv = Map.of();
        if (m.oauth() != null) {
            ObjectNode detail = oauthDetail(m.oauth());
            GroupObject had = have.remove(OAUTH + ":client");
            if (had == null || !had.detail().equals(detail)) {
                Access.oauthClients(caller);
            }
            AppClients.Issued issued = clients.ensure(space, group, m, had == null ? null : had.objectId());
            store.putObject(new GroupObject(group.id(), OAUTH, "client", issued.clientId(), hash(detail), detail));
            clientChanged = had == null
                    || !had.objectId().equals(issued.clientId())
                    || !had.detail().equals(detail);
            (clientChanged ? applied : skipped).add(OAUTH + ":client");
            if (m.oauth().autoEnv()) {
                oauthEnv = Map.of("OAUTH_CLIENT_ID", issued.clientId(), "OAUTH_CLIENT_SECRET", issued.secret());
            }
        }
        List<String> hostnames = new ArrayList<>();
        Map<String, String> hostOf = new LinkedHashMap<>();
        Map<String, String> serviceIds = new LinkedHashMap<>();
        List<String> canaries = new ArrayList<>();
        List<String> canaryKeys = new ArrayList<>();
        try {
            for (String key : serviceKeys(m)) {
                GroupObject had = have.remove(SERVICE + ":" + key);
                Built built = desired.artifacts().get(key);
                if (built == null) {
                    throw new IllegalStateException("no artifact for " + key);
                }
                ObjectNode detail = serviceDetail(m, key, desired);
                boolean pending = had != null && PENDING.equals(had.fingerprint());
                ServiceInfo svc = had != null && !pending
                        ? services.service(had.objectId()).orElse(null)
                        : null;
                if (svc == null) {
                    String name = group.name() + "-" + key;
                    Optional<ServiceInfo> existing = services.byName(space.id(), name);
                    if (existing.isPresent() && !pending && had == null) {
                        throw ApiException.conflict("the workspace has a service named " + name + " that this group"
                                + " did not make; rename or delete it, or give the manifest's worker another key");
                    }
                    store.putObject(
                            new GroupObject(group.id(), SERVICE, key, "", PENDING, AppStore.JSON.createObjectNode()));
                    svc = existing.orElseGet(() -> services.create(caller, space, name, name));
                    // a new service has no env, bindings or code yet: the row says so until they are written
                    store.putObject(
                            new GroupObject(group.id(), SERVICE, key, svc.id(), "", AppStore.JSON.createObjectNode()));
                    had = null;
                }
                hostnames.add(svc.hostname());
                hostOf.put(key, svc.hostname());
                serviceIds.put(key, svc.id());
                if (had != null && had.detail().equals(detail) && svc.currentDeploymentId() != null) {
                    skipped.add(SERVICE + ":" + key);
                    continue;
                }
                // env and bindings are the service's, shared by its current version and a canary: an unchanged one
                // is left alone, so that the version already serving does not restart for nothing
                if (had == null
                        || clientChanged
                        || !had.detail().path("env").equals(detail.path("env"))
                        || !had.detail().path("oauth_env").equals(detail.path("oauth_env"))) {
                    Map<String, EnvVar> env = new TreeMap<>();
                    envOf(m, key).forEach((k, v) -> env.put(k, new EnvVar(v, false)));
                    desired.env().forEach((k, v) -> env.put(k, new EnvVar(v, false)));
                    oauthEnv.forEach((k, v) -> env.put(k, new EnvVar(v, "OAUTH_CLIENT_SECRET".equals(k))));
                    services.replaceEnv(caller, svc.id(), env);
                }
                if (had == null || !had.detail().path("bindings").equals(detail.path("bindings")) || resourcesMade) {
                    Map<String, String> bindings = new TreeMap<>();
                    bindingsOf(m, key)
                            .forEach((binding, resourceKey) -> bindings.put(binding, resourceIds.get(resourceKey)));
                    services.replaceBindings(caller, space, svc.id(), bindings);
                }
                if (m.workers().containsKey(key)) {
                    services.setSettings(caller, svc.id(), m.workers().get(key).compatibilityDate(), null);
                } else {
                    Integer mb = m.containers().get(key).memoryMb();
                    services.setSettings(caller, svc.id(), null, mb == null ? null : Map.of("memory_mb", (long) mb));
                }
                boolean asCanary = canary && svc.currentDeploymentId() != null;
                services.deploy(
                        svc.id(),
                        built.bytes(),
                        built.kind(),
                        "container-image".equals(built.kind()) ? "podman" : desired.provider(),
                        "app " + m.name() + " " + m.version(),
                        asCanary ? "canary" : "direct",
                        asCanary ? firstWeight : null);
                if (asCanary) {
                    canaries.add(svc.id());
                    canaryKeys.add(key);
                }
                store.putObject(new GroupObject(group.id(), SERVICE, key, svc.id(), hash(detail), detail));
                applied.add(SERVICE + ":" + key);
            }
        } catch (RuntimeException e) {
            // the canaries this apply started have no rollout to end them: the old versions take every request again
            for (int i = 0; i < canaries.size(); i++) {
                try {
                    services.endCanary(canaries.get(i), false);
                } catch (ServiceControl.Refused gone) {
                    // ended already
                }
                GroupObject was = before.get(SERVICE + ":" + canaryKeys.get(i));
                if (was != null) {
                    store.putObject(Rollouts.unsettled(was));
                }
            }
            throw e;
        }
        // routes listed under a service are its hostname's: a path sent to another service is a path route there
        for (String key : serviceKeys(m)) {
            Map<String, String> paths = new TreeMap<>();
            boolean elsewhere = false;
            for (Manifest.Route r : routesOf(m, key)) {
                paths.put(r.path(), serviceIds.get(r.target()));
                elsewhere |= !r.target().equals(key);
            }
            services.setPathRoutes(caller, serviceIds.get(key), elsewhere ? paths : Map.of());
        }
        for (Manifest.Mcp e : m.mcp()) {
            ObjectNode detail = mcpDetail(e);
            String url = "https://" + hostOf.get(e.target()) + e.path();
            detail.put("url", url);
            GroupObject had = have.remove(MCP + ":" + e.name());
            if (had != null && had.detail().equals(detail) && !had.objectId().isEmpty()) {
                skipped.add(MCP + ":" + e.name());
                continue;
            }
            Access.mcpServers(caller);
            String id;
            try {
                id = mcpEndpoints().register(space, manager(group), e.name(), url);
            } catch (IllegalStateException | IllegalArgumentException refused) {
                throw ApiException.conflict("MCP endpoint " + e.name() + ": " + refused.getMessage());
            }
            store.putObject(new GroupObject(group.id(), MCP, e.name(), id, hash(detail), detail));
            applied.add(MCP + ":" + e.name());
        }
        for (Manifest.FileHandler h : m.fileHandlers()) {
            ObjectNode detail = fileHandlerDetail(h);
            detail.put("url", "https://" + hostOf.get(h.target()) + h.path());
            GroupObject had = have.remove(FILE_HANDLER + ":" + h.name());
            if (had != null && had.detail().equals(detail)) {
                skipped.add(FILE_HANDLER + ":" + h.name());
                continue;
            }
            Access.fileHandlers(caller);
            store.putObject(new GroupObject(group.id(), FILE_HANDLER, h.name(), "", hash(detail), detail));
            applied.add(FILE_HANDLER + ":" + h.name());
        }
        // deletions: services first (they bind resources), then the client, then resources
        List<GroupObject> gone = new ArrayList<>(have.values());
        gone.sort((a, b) -> Integer.compare(order(a.kind()), order(b.kind())));
        for (GroupObject o : gone) {
            if (RESOURCE.equals(o.kind()) && !o.objectId().isEmpty()) {
                Access.resources(caller);
            }
            if (OAUTH.equals(o.kind())) {
                Access.oauthClients(caller);
            }
            if (MCP.equals(o.kind()) && !o.objectId().isEmpty()) {
                Access.mcpServers(caller);
            }
            if (FILE_HANDLER.equals(o.kind())) {
                Access.fileHandlers(caller);
            }
        }
        for (GroupObject o : gone) {
            if (!o.objectId().isEmpty()) {
                switch (o.kind()) {
                    case SERVICE -> services.delete(o.objectId());
                    case OAUTH -> clients.delete(space, o.objectId());
                    case MCP -> mcpEndpoints().remove(space, manager(group), o.objectId());
                    case RESOURCE -> deleteResource(caller, space, o.objectId());
                    default -> {
                        // a file handler is its inventory row
                    }
                }
            }
            store.removeObject(group.id(), o.kind(), o.key());
            applied.add(o.kind() + ":" + o.key() + " (deleted)");
        }
        return new Outcome(applied, skipped, hostnames, canaries);
    }

    private String createResource(Caller caller, SpaceRef space, Manifest.Resource r, String name) {
        try {
            return resources
                    .create(caller, space, r.type(), r.backend(), name, r.config())
                    .resourceId();
        } catch (IllegalArgumentException e) {
            throw new ApiException(422, "INVALID_MANIFEST", "resource " + name + ": " + e.getMessage());
        } catch (IllegalStateException e) {
            throw ApiException.conflict(e.getMessage());
        } catch (ResourceException e) {
            throw new ApiException(502, "RESOURCE_PROVIDER_FAILED", "resource " + name + ": " + e.getMessage());
        }
    }

    private void deleteResource(Caller caller, SpaceRef space, String id) {
        try {
            resources.delete(caller, space, id);
        } catch (ResourceException e) {
            throw new ApiException(502, "RESOURCE_PROVIDER_FAILED", "deleting resource " + id + ": " + e.getMessage());
        }
    }

    private static int order(String kind) {
        return switch (kind) {
            case MCP, FILE_HANDLER -> 0;
            case SERVICE -> 1;
            case OAUTH -> 2;
            default -> 3;
        };
    }

    private McpEndpoints mcpEndpoints() {
        McpEndpoints m = mcp;
        if (m == null) {
            throw ApiException.unavailable(
                    "MCP servers are not running: the app serves MCP endpoints (enable the feature mcp)");
        }
        return m;
    }

    /** Who the MCP capability shows as the manager of a group's servers. */
    static String manager(Group group) {
        return "app-group:" + group.id();
    }

    // ------------------------------------------------------------------ details

    private Map<String, GroupObject> inventory(String groupId) {
        Map<String, GroupObject> have = new LinkedHashMap<>();
        for (GroupObject o : store.objects(groupId)) {
            have.put(o.kind() + ":" + o.key(), o);
        }
        return have;
    }

    static List<String> serviceKeys(Manifest m) {
        List<String> keys = new ArrayList<>(m.workers().keySet());
        keys.addAll(m.containers().keySet());
        return keys;
    }

    /**
     * A service's own env: a worker's as written; a container's with {@code PORT} and {@code ATRIUM_HEALTH_PATH}, the
     * podman provider's way of being told the port it listens on and the path it is probed at.
     */
    static Map<String, String> envOf(Manifest m, String key) {
        if (m.workers().containsKey(key)) {
            return m.workers().get(key).env();
        }
        Manifest.Container c = m.containers().get(key);
        Map<String, String> env = new TreeMap<>(c.env());
        env.put("PORT", String.valueOf(c.port()));
        if (c.healthPath() != null) {
            env.put("ATRIUM_HEALTH_PATH", c.healthPath());
        }
        return env;
    }

    private static List<Manifest.Route> routesOf(Manifest m, String key) {
        return m.workers().containsKey(key)
                ? m.workers().get(key).routes()
                : m.containers().get(key).routes();
    }

    private static Map<String, String> bindingsOf(Manifest m, String key) {
        return m.workers().containsKey(key)
                ? m.workers().get(key).bindings()
                : m.containers().get(key).bindings();
    }

    private static ObjectNode resourceDetail(Manifest.Resource r) {
        ObjectNode d = AppStore.JSON.createObjectNode();
        d.put("type", r.type());
        d.put("backend", r.backend() == null ? "" : r.backend());
        d.put("config", hash(AppStore.JSON.valueToTree(new TreeMap<>(r.config()))));
        return d;
    }

    private static ObjectNode mcpDetail(Manifest.Mcp e) {
        ObjectNode d = AppStore.JSON.createObjectNode();
        d.put("target", e.target());
        d.put("path", e.path());
        return d;
    }

    private static ObjectNode fileHandlerDetail(Manifest.FileHandler h) {
        ObjectNode d = AppStore.JSON.createObjectNode();
        d.put("target", h.target());
        d.put("path", h.path());
        ArrayNode types = d.putArray("mime_types");
        h.mimeTypes().forEach(types::add);
        ArrayNode ext = d.putArray("extensions");
        h.extensions().forEach(ext::add);
        return d;
    }

    private static ObjectNode oauthDetail(Manifest.OAuth o) {
        ObjectNode d = AppStore.JSON.createObjectNode();
        d.put("client_name", o.clientName());
        d.put("redirect_uris", String.join(" ", o.redirectUris()));
        d.put("scopes", String.join(" ", o.scopes()));
        d.put("auto_env", o.autoEnv());
        d.put(
                "links",
                String.join(
                        " ", String.valueOf(o.logoUri()), String.valueOf(o.tosUri()), String.valueOf(o.policyUri())));
        return d;
    }

    private static ObjectNode serviceDetail(Manifest m, String key, Desired desired) {
        ObjectNode d = AppStore.JSON.createObjectNode();
        boolean worker = m.workers().containsKey(key);
        d.put("kind", worker ? "worker" : "container");
        Built built = desired.artifacts() == null ? null : desired.artifacts().get(key);
        d.put("artifact", built == null ? "" : built.digest());
        Map<String, String> env = new TreeMap<>(envOf(m, key));
        env.putAll(desired.env());
        d.put("env", hash(AppStore.JSON.valueToTree(env)));
        // the client's credentials are not part of it: a new secret reaches the env through client-key, not a deploy
        d.put("oauth_env", m.oauth() != null && m.oauth().autoEnv());
        d.put("bindings", hash(AppStore.JSON.valueToTree(new TreeMap<>(bindingsOf(m, key)))));
        if (worker) {
            Manifest.Worker w = m.workers().get(key);
            d.put("settings", String.valueOf(w.compatibilityDate()));
            d.put("routes", hash(AppStore.JSON.valueToTree(w.routes())));
        } else {
            Manifest.Container c = m.containers().get(key);
            d.put("settings", c.port() + " " + c.healthPath() + " " + c.memoryMb());
            d.put("routes", hash(AppStore.JSON.valueToTree(c.routes())));
        }
        d.put("provider", desired.provider());
        return d;
    }

    private static List<String> fieldNames(ObjectNode o) {
        List<String> out = new ArrayList<>();
        o.fieldNames().forEachRemaining(out::add);
        return out;
    }

    static String hash(Object value) {
        return Digests.sha256Hex(String.valueOf(value)).substring(0, 16);
    }

    /** The inventory's service of a key, if any. */
    Optional<GroupObject> object(String groupId, String kind, String key) {
        return store.objects(groupId).stream()
                .filter(o -> o.kind().equals(kind) && o.key().equals(key))
                .findFirst();
    }
}
