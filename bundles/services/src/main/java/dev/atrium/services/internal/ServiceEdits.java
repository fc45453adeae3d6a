package dev.atrium.services.internal;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import dev.atrium.resource.api.ResourceDirectory;
import dev.atrium.services.internal.ServiceStore.EnvRow;
import dev.atrium.services.internal.ServiceStore.Service;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The changes of a service that the {@code /api/services} routes ({@link ServicesApi}) and services.api's
 * {@code ServiceControl} ({@link ServiceControls}) both make: the owner check of a service addressed by its id,
 * creating one, its env, its bindings, deleting it. The routes parse their bodies into these calls and the other
 * capability's calls are checked into the same, so each is done, checked and applied one way.
 */
@Component(service = ServiceEdits.class)
public class ServiceEdits {

    static final Pattern ENV_NAME = Pattern.compile("[A-Z_][A-Z0-9_]{0,127}");
    static final Pattern BINDING = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");
    static final int MAX_VALUE = 65_536;
    static final int MAX_VARIABLES = 200;
    static final int MAX_BINDINGS = 100;

    private final OwnerScope ownerScope;
    private final ServiceStore store;
    private final Deployer deployer;
    private final ResourceDirectory directory;

    @Activate
    public ServiceEdits(
            @Reference OwnerScope ownerScope,
            @Reference ServiceStore store,
            @Reference Deployer deployer,
            @Reference ResourceDirectory directory) {
        this.ownerScope = ownerScope;
        this.store = store;
        this.deployer = deployer;
        this.directory = directory;
    }

    /** A text field checked as a JSON body's is ({@link JsonBody#text}): trimmed, 1 to {@code max} characters. */
    static String text(String field, String value, int min, int max) {
        NulText.reject(field, value);
        return JsonBody.of(JsonNodeFactory.instance.objectNode().put(field, value))
                .text(field, min, max);
    }

    // ------------------------------------------------------------------ owner check

    /** The service {@code id} if the kernel proves its workspace is the caller's; else 404, as for a missing one. */
    Service owned(Caller caller, String id) {
        Service s = store.service(id).orElseThrow(() -> ApiException.notFound(ServicesApi.NOT_FOUND));
        if (!owns(caller, s.spaceId())) {
            throw ApiException.notFound(ServicesApi.NOT_FOUND);
        }
        return s;
    }

    boolean owns(Caller caller, String spaceId) {
        try {
            ownerScope.require(caller, spaceId);
            return true;
        } catch (ApiException e) {
            return false;
        }
    }

    // ------------------------------------------------------------------ create, delete

    /**
     * Creates a service of {@code space} (proven for {@code caller}): with exactly {@code slug} (409 when it is
     * taken), or, when {@code slug} is null, the first free one of {@code slugBase}, {@code slugBase-2}, …
     */
    Service create(Caller caller, SpaceRef space, String name, String slug, String slugBase) {
        if (slug == null) {
            return store.create(Ids.id("svc"), space.id(), caller.principalId(), name, slugBase);
        }
        try {
            return store.sql()
                    .one(
                            "INSERT INTO services (id, space_id, principal_id, name, slug) VALUES (?, ?, ?, ?, ?) RETURNING "
                                    + ServiceStore.SERVICE_COLUMNS,
                            Service::of,
                            Ids.id("svc"),
                            space.id(),
                            caller.principalId(),
                            name,
                            slug)
                    .orElseThrow();
        } catch (Sql.Conflict e) {
            throw ApiException.conflict("the slug '" + slug + "' is taken");
        }
    }

    /**
     * Deletes the service with its bindings and stops its deployments; whether it was there. The artifacts no other
     * deployment uses go with it (the blob store is content-addressed and shared).
     */
    boolean delete(Service s) {
        List<String> keys = store.artifactKeys(s.id());
        boolean deleted = deployer.applying(() -> {
            if (!store.delete(s.id())) {
                return false;
            }
            directory.unbindAll(s.id());
            return true;
        });
        if (deleted) {
            for (String key : keys) {
                if (store.artifactUses(key) == 0) {
                    deployer.deleteBlob(key);
                }
            }
        }
        return deleted;
    }

    // ------------------------------------------------------------------ env

    /** One variable to set; a null value removes it. */
    record EnvChange(String name, String value, boolean secret) {

        /** The change, or 400 naming the variable when its name or value cannot be stored. */
        static EnvChange checked(String name, String value, boolean secret) {
            if (name == null || !ENV_NAME.matcher(name).matches()) {
                throw ApiException.badRequest(
                        "variable name '" + name + "' must match ^[A-Z_][A-Z0-9_]*$ (at most 128 characters)");
            }
            if (value != null && value.length() > MAX_VALUE) {
                throw ApiException.badRequest("the value of " + name + " must be at most " + MAX_VALUE + " characters");
            }
            NulText.reject("the value of " + name, value);
            return new EnvChange(name, value, secret);
        }
    }

    /**
     * Applies {@code changes} to the service's own variables (secrets sealed); with {@code replaceAll} the variables
     * not named are removed. A new config revision: the running deployments get the new env.
     */
    void setEnv(Service s, List<EnvChange> changes, boolean replaceAll) {
        if (changes.size() > MAX_VARIABLES) {
            throw ApiException.badRequest("at most " + MAX_VARIABLES + " variables per request");
        }
        deployer.applying(() -> {
            store.sql().tx(c -> {
                if (replaceAll) {
                    store.clearEnv(c, s.id());
                }
                for (EnvChange ch : changes) {
                    if (ch.value() == null) {
                        store.deleteEnv(c, s.id(), ch.name());
                    } else if (ch.secret()) {
                        Sealer.Sealed sealed = deployer.sealer().seal(s.id(), ch.name(), ch.value());
                        store.putEnv(
                                c,
                                s.id(),
                                new EnvRow(
                                        ch.name(),
                                        true,
                                        null,
                                        sealed.keyId(),
                                        sealed.nonce(),
                                        sealed.ciphertext(),
                                        null));
                    } else {
                        store.putEnv(c, s.id(), new EnvRow(ch.name(), false, ch.value(), null, null, null, null));
                    }
                }
                return null;
            });
            store.bumpRevision(s.id());
            return null;
        });
    }

    /** Whether the service's own variables are exactly {@code wanted} (secrets opened to compare), secrecy included. */
    boolean envIs(Service s, List<EnvChange> wanted) {
        Map<String, EnvChange> current = new HashMap<>();
        for (EnvRow v : store.env(s.id())) {
            String value = v.secret()
                    ? deployer.sealer().open(s.id(), v.name(), v.keyId(), v.nonce(), v.ciphertext())
                    : v.value();
            current.put(v.name(), new EnvChange(v.name(), value, v.secret()));
        }
        Map<String, EnvChange> want = new HashMap<>();
        wanted.forEach(w -> want.put(w.name(), w));
        return current.equals(want);
    }

    // ------------------------------------------------------------------ bindings

    /** A binding to make: its name and its resource, by id or by name (exactly one), and the type it must be. */
    record Wanted(String name, String resourceId, String resourceName, String type) {

        static Wanted checked(String name, String resourceId, String resourceName, String type) {
            if (name == null || !BINDING.matcher(name).matches()) {
                throw ApiException.badRequest("binding name '" + name
                        + "' must be a variable name: letters, digits and '_', not starting with a digit");
            }
            if ((resourceId == null) == (resourceName == null)) {
                throw ApiException.badRequest(
                        "binding " + name + " needs exactly one of resource_id and resource_name");
            }
            return new Wanted(name, resourceId, resourceName, type);
        }
    }

    /**
     * Makes {@code wanted} the service's whole set of bindings. Each resource must be one the caller reaches from
     * {@code space} (the service's workspace, proven for it): 404 naming the binding when not; 400 when its type is
     * not the one asked for or it is listed twice.
     */
    List<ResourceDirectory.Bound> bind(Caller caller, SpaceRef space, Service s, List<Wanted> wanted) {
        if (wanted.size() > MAX_BINDINGS) {
            throw ApiException.badRequest("at most " + MAX_BINDINGS + " bindings per service");
        }
        Map<String, String> byName = new LinkedHashMap<>();
        Set<String> resources = new HashSet<>();
        for (Wanted w : wanted) {
            ResourceDirectory.Bound r = directory
                    .find(caller, space, w.resourceId(), w.resourceName())
                    .orElseThrow(() -> ApiException.notFound("resource not found for binding " + w.name()));
            if (w.type() != null && !w.type().equals(r.type())) {
                throw ApiException.badRequest(
                        "binding " + w.name() + " says type " + w.type() + " but the resource is a " + r.type());
            }
            if (!resources.add(r.resourceId())) {
                throw ApiException.badRequest(
                        "a resource can be bound once per service; " + r.resourceName() + " is listed twice");
            }
            byName.put(w.name(), r.resourceId());
        }
        return deployer.applying(() -> {
            try {
                List<ResourceDirectory.Bound> out = directory.replaceBindings(caller, space, s.id(), byName);
                store.bumpRevision(s.id());
                return out;
            } catch (IllegalArgumentException e) {
                throw ApiException.notFound("resource not found for binding " + e.getMessage());
            }
        });
    }

    /** The service's bindings that still hold, binding name to resource id. */
    Map<String, String> boundIds(Service s) {
        Map<String, String> out = new HashMap<>();
        directory.bindings(s.id(), s.spaceId()).forEach(b -> out.put(b.bindingName(), b.resourceId()));
        return out;
    }
}
