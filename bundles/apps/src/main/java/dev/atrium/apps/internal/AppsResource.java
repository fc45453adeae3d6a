package dev.atrium.apps.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.apps.internal.AppStore.App;
import dev.atrium.apps.internal.AppStore.Group;
import dev.atrium.apps.internal.AppStore.GroupObject;
import dev.atrium.apps.internal.manifest.Manifest;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.services.api.ServiceControl;
import dev.atrium.services.api.ServiceControl.EnvVar;
import dev.atrium.services.api.ServiceControl.ServiceInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/apps}: the app launcher's view of the caller's apps, every deployed group of their workspaces plus the
 * built-in ones. A custom app's metadata may be changed and the app deleted (its group uninstalled); built-in ones
 * may not. Another Principal's app is the same 404 as a missing one.
 */
@Component(service = AppsResource.class)
@KernelResource
@Path("/api/apps")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class AppsResource {

    static final String NOT_FOUND = "app not found";
    private static final String READ = AppDeploymentsResource.READ;
    private static final String WRITE = AppDeploymentsResource.WRITE;

    /** The server's own pages, listed first; they cannot be changed or deleted. */
    private static final List<Map<String, Object>> BUILTIN = List.of(builtin(
            "app_builtin_account", "account", "Account", "Your account, workspaces, tokens and connected apps", "/"));

    private final OwnerScope ownerScope;
    private final AppStore store;
    private final ServiceControl services;
    private final AppClients clients;
    private final Groups groups;
    private final PublicUrls urls;
    private final Locks locks;

    @Activate
    public AppsResource(
            @Reference OwnerScope ownerScope,
            @Reference AppStore store,
            @Reference ServiceControl services,
            @Reference AppClients clients,
            @Reference Groups groups,
            @Reference PublicUrls urls) {
        this.ownerScope = ownerScope;
        this.store = store;
        this.services = services;
        this.clients = clients;
        this.groups = groups;
        this.urls = urls;
        this.locks = new Locks(store.dataSource());
    }

    @GET
    @RequiresScope(READ)
    @JsonShape(AppsJson.AppList.class)
    public Map<String, Object> list(@Context SecurityContext sc) {
        Caller caller = Caller.from(sc);
        List<Map<String, Object>> out = new ArrayList<>(BUILTIN);
        for (App a : store.appsOf(caller.principalId())) {
            space(caller, a).ifPresent(s -> out.add(view(a)));
        }
        return Map.of("apps", out);
    }

    @GET
    @Path("{id}")
    @RequiresScope(READ)
    @JsonShape(AppsJson.AppOne.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("id") String id) {
        Optional<Map<String, Object>> b =
                BUILTIN.stream().filter(x -> x.get("id").equals(id)).findFirst();
        if (b.isPresent()) {
            return Map.of("app", b.get());
        }
        return Map.of("app", view(find(Caller.from(sc), id).app()));
    }

    @PATCH
    @Path("{id}")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.AppOne.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(AppsJson.AppPatch.class) JsonNode body) {
        refuseBuiltin(id);
        Owned o = find(Caller.from(sc), id);
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        AppDeploymentsResource.unknownFields(body, Set.of("display_name", "description", "icon"));
        App a = o.app();
        String display = body.has("display_name")
                ? b.optionalText("display_name", 1, 100).orElse(null)
                : a.displayName();
        String description =
                body.has("description") ? b.optionalText("description", 0, 1000).orElse(null) : a.description();
        String icon = body.has("icon") ? b.optionalText("icon", 1, 2000).orElse(null) : a.icon();
        if (icon != null && !icon.startsWith("https://") && !icon.startsWith("/") && !icon.startsWith("data:image/")) {
            throw ApiException.badRequest("icon must be an https URL, a path on this server or a data:image URL");
        }
        store.updateApp(a.id(), display, description, icon);
        return Map.of("app", view(store.app(a.id()).orElseThrow()));
    }

    @DELETE
    @Path("{id}")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.Deleted.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("id") String id) {
        refuseBuiltin(id);
        Caller caller = Caller.from(sc);
        Owned o = find(caller, id);
        Group g = store.groupById(o.app().groupId()).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        Errors.api(() -> groups.uninstall(caller, o.space(), g));
        return Map.of("deleted", true);
    }

    /**
     * A new client secret for the app; the services whose env carries it (auto-env) get it at once, and the previous
     * secret keeps working for the configured grace, so no request of the app fails while it changes.
     */
    @POST
    @Path("{id}/client-key")
    @RequiresScope(WRITE)
    @JsonShape(AppsJson.ClientKey.class)
    public Map<String, Object> clientKey(@Context SecurityContext sc, @PathParam("id") String id) {
        refuseBuiltin(id);
        Caller caller = Caller.from(sc);
        Access.oauthClients(caller);
        Owned o = find(caller, id);
        // under the group's lock: a deploy running now would otherwise write the old secret back into the env
        return locks.with("app-group:" + o.app().groupId(), () -> rotate(caller, o));
    }

    private Map<String, Object> rotate(Caller caller, Owned o) {
        AppClients.Issued issued = clients.rotate(o.space(), o.app())
                .orElseThrow(
                        () -> ApiException.conflict("this app has no OAuth client (its manifest has no spec.oauth)"));
        Group g = store.groupById(o.app().groupId()).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        Manifest m = applied(g);
        if (m != null && m.oauth() != null && m.oauth().autoEnv()) {
            for (GroupObject obj : store.objects(g.id())) {
                if (!GroupReconciler.SERVICE.equals(obj.kind())) {
                    continue;
                }
                Map<String, EnvVar> env = new TreeMap<>();
                Map<String, String> own = m.workers().containsKey(obj.key())
                        ? m.workers().get(obj.key()).env()
                        : m.containers().containsKey(obj.key())
                                ? m.containers().get(obj.key()).env()
                                : Map.of();
                own.forEach((k, v) -> env.put(k, new EnvVar(v, false)));
                g.env().forEach((k, v) -> env.put(k, new EnvVar(v, false)));
                env.put("OAUTH_CLIENT_ID", new EnvVar(issued.clientId(), false));
                env.put("OAUTH_CLIENT_SECRET", new EnvVar(issued.secret(), true));
                Errors.api(() -> {
                    services.replaceEnv(caller, obj.objectId(), env);
                    return null;
                });
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("client_id", issued.clientId());
        out.put("client_secret", issued.secret());
        out.put(
                "previous_secret_valid_until",
                Instant.now().plus(clientsGrace()).toString());
        return out;
    }

    private java.time.Duration clientsGrace() {
        return clients.grace();
    }

    /** The manifest the group runs: its current app deployment's, else its desired one. */
    private Manifest applied(Group g) {
        String text = g.desired();
        if (g.currentAppDeploymentId() != null) {
            text = store.deployment(g.spaceId(), g.currentAppDeploymentId())
                    .map(d -> d.snapshot().path("manifest").asText(null))
                    .orElse(text);
        }
        return text == null ? null : AppDeployments.parse(text);
    }

    private record Owned(App app, SpaceRef space) {}

    private Owned find(Caller caller, String id) {
        App a = store.app(id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        SpaceRef s = space(caller, a).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        return new Owned(a, s);
    }

    private Optional<SpaceRef> space(Caller caller, App a) {
        try {
            return Optional.of(ownerScope.require(caller, a.spaceId()));
        } catch (ApiException e) {
            if (e.status() == 404) {
                return Optional.empty();
            }
            throw e;
        }
    }

    private static void refuseBuiltin(String id) {
        if (BUILTIN.stream().anyMatch(b -> b.get("id").equals(id))) {
            throw ApiException.forbidden("built-in apps cannot be changed or deleted");
        }
    }

    private Map<String, Object> view(App a) {
        List<String> hosts = new ArrayList<>();
        boolean running = true;
        String launchPath = "/";
        Group g = store.groupById(a.groupId()).orElse(null);
        if (g != null) {
            for (GroupObject o : store.objects(g.id())) {
                if (GroupReconciler.SERVICE.equals(o.kind())) {
                    Optional<ServiceInfo> s = services.service(o.objectId());
                    s.ifPresent(x -> hosts.add(x.hostname()));
                    running &= s.map(x -> x.currentDeploymentId() != null).orElse(false);
                }
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", a.id());
        m.put("name", a.name());
        m.put("display_name", a.displayName() != null ? a.displayName() : a.name());
        m.put("description", a.description());
        m.put("icon", a.icon());
        m.put("version", a.version());
        m.put("space_id", a.spaceId());
        m.put("group_id", a.groupId());
        m.put("builtin", false);
        m.put("hostnames", hosts);
        m.put("health", hosts.isEmpty() ? "no_services" : running ? "running" : "not_running");
        String scheme = urls.configured()
                .map(u -> u.startsWith("https:") ? "https" : "http")
                .orElse("http");
        m.put("launch_url", hosts.isEmpty() ? null : scheme + "://" + hosts.get(0) + launchPath);
        m.put("client_id", a.clientId());
        return m;
    }

    private static Map<String, Object> builtin(String id, String name, String display, String description, String url) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("name", name);
        m.put("display_name", display);
        m.put("description", description);
        m.put("icon", null);
        m.put("version", null);
        m.put("space_id", null);
        m.put("group_id", null);
        m.put("builtin", true);
        m.put("hostnames", List.of());
        m.put("health", "running");
        m.put("launch_url", url);
        m.put("client_id", null);
        return java.util.Collections.unmodifiableMap(m);
    }
}
