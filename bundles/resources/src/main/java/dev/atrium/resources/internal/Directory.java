package dev.atrium.resources.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.BindingListener;
import dev.atrium.resource.api.ResourceDirectory;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The core's {@link ResourceDirectory}: the services capability finds, binds and opens resources here, under the same
 * rules as the {@code /api/resources} routes (ownership is the kernel's proof; another workspace of the same Principal
 * lends a resource only through a grant). The binding rows are the core's ({@code resource_bindings}). Creating and
 * deleting a resource is {@link ResourceLifecycle}, one code path with the routes.
 */
@Component(service = {ResourceDirectory.class, Directory.class})
public class Directory implements ResourceDirectory {

    private static final Logger LOG = LoggerFactory.getLogger(Directory.class);

    private final ResourceStore store;
    private final OwnerScope ownerScope;
    private final SpaceDirectory spaces;
    private final Providers providers;
    private final Runtime runtime;
    private final ResourceLifecycle lifecycle;
    private static final String LISTENERS = "Listener";

    private final ComponentContext context;
    /**
     * By reference, got only when a change is told: services' Deployer is a listener and needs this Directory, so
     * getting it while this component activates is a cycle, and SCR's record of that cycle would keep this revision's
     * classes reachable after an update.
     */
    private final List<ServiceReference<BindingListener>> listeners = new CopyOnWriteArrayList<>();

    @Activate
    public Directory(
            ComponentContext context,
            @Reference ResourceStore store,
            @Reference OwnerScope ownerScope,
            @Reference SpaceDirectory spaces,
            @Reference Providers providers,
            @Reference Runtime runtime) {
        this.context = context;
        this.store = store;
        this.ownerScope = ownerScope;
        this.spaces = spaces;
        this.providers = providers;
        this.runtime = runtime;
        this.lifecycle = new ResourceLifecycle(store, providers, runtime, this::changed);
    }

    /**
     * Set when this component is deactivated. A call that started before still runs on it, and the providers this
     * revision knew are unbound right after: its empty answer would say "not running" of a provider that is running.
     */
    private volatile boolean stopped;

    @Deactivate
    void deactivate() {
        stopped = true;
    }

    @Reference(
            name = LISTENERS,
            service = BindingListener.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addListener(ServiceReference<BindingListener> listener) {
        listeners.add(listener);
    }

    void removeListener(ServiceReference<BindingListener> listener) {
        listeners.remove(listener);
    }

    /** Tells the listeners that the bindings of these services changed. */
    void changed(Collection<String> serviceIds) {
        for (String id : new LinkedHashSet<>(serviceIds)) {
            for (ServiceReference<BindingListener> ref : listeners) {
                BindingListener l = context.locateService(LISTENERS, ref);
                if (l == null) {
                    continue;
                }
                try {
                    l.bindingsChanged(id);
                } catch (RuntimeException e) {
                    LOG.warn("resources: a binding listener failed for service {}: {}", id, e.toString());
                }
            }
        }
    }

    @Override
    public Optional<Bound> find(Caller caller, SpaceRef space, String resourceId, String resourceName) {
        if (space == null || !space.provenFor(caller)) {
            return Optional.empty();
        }
        Optional<ResourceRow> row;
        if (resourceId != null) {
            row = store.find(resourceId);
        } else if (resourceName != null) {
            row = store.byName(resourceName).stream()
                    .filter(r -> r.spaceId.equals(space.id()))
                    .findFirst();
        } else {
            return Optional.empty();
        }
        return row.flatMap(r -> bindable(caller, space.id(), r)).map(a -> bound(null, row.get(), a));
    }

    private Optional<Access> bindable(Caller caller, String spaceId, ResourceRow row) {
        if (row.spaceId.equals(spaceId)) {
            return Optional.of(Access.WRITE);
        }
        try {
            ownerScope.require(caller, row.spaceId);
        } catch (ApiException e) {
            return Optional.empty();
        }
        return granted(row, spaceId);
    }

    /** What a service of {@code spaceId} may do to {@code row} with no caller: own workspace write, else its grant (at most write). */
    private Optional<Access> granted(ResourceRow row, String spaceId) {
        if (row.spaceId.equals(spaceId)) {
            return Optional.of(Access.WRITE);
        }
        return store.grant(row.id, spaceId)
                .map(g -> Access.parse(g.permission))
                .map(a -> a == Access.ADMIN ? Access.WRITE : a);
    }

    private static Bound bound(String name, ResourceRow r, Access access) {
        return new Bound(name, r.id, r.name, r.type, r.spaceId, access);
    }

    @Override
    public List<Bound> bindings(String serviceId, String spaceId) {
        List<Bound> out = new ArrayList<>();
        Map<String, Boolean> seen = new LinkedHashMap<>();
        for (BindingRow b : store.bindingsOfService(serviceId)) {
            if (seen.putIfAbsent(b.bindingName, true) != null) {
                continue; // one name, one resource: the older binding holds
            }
            store.find(b.resourceId)
                    .ifPresent(r -> granted(r, spaceId).ifPresent(a -> out.add(bound(b.bindingName, r, a))));
        }
        return out;
    }

    @Override
    public List<Bound> replaceBindings(Caller caller, SpaceRef space, String serviceId, Map<String, String> bindings) {
        Map<String, String> byResource = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : bindings.entrySet()) {
            if (find(caller, space, e.getValue(), null).isEmpty()) {
                throw new IllegalArgumentException(e.getKey());
            }
            if (byResource.put(e.getValue(), e.getKey()) != null) {
                throw new IllegalArgumentException(e.getKey());
            }
        }
        store.replaceBindings(serviceId, byResource);
        return bindings(serviceId, space.id());
    }

    @Override
    public void unbindAll(String serviceId) {
        store.unbindService(serviceId);
    }

    @Override
    public <F> Optional<Opened<F>> open(String serviceId, String spaceId, String bindingName, Class<F> facet) {
        Optional<Opened<F>> opened = openNow(serviceId, spaceId, bindingName, facet);
        if (opened.isEmpty() && stopped) {
            throw new IllegalStateException("the resource directory stopped during the call");
        }
        return opened;
    }

    private <F> Optional<Opened<F>> openNow(String serviceId, String spaceId, String bindingName, Class<F> facet) {
        for (Bound b : bindings(serviceId, spaceId)) {
            if (!b.bindingName().equals(bindingName)) {
                continue;
            }
            ResourceRow row = store.find(b.resourceId()).orElse(null);
            // a workspace whose owner is no longer active, or that was removed, lends nothing: fail closed
            if (row == null
                    || spaces.byId(row.spaceId).isEmpty()
                    || spaces.byId(spaceId).isEmpty()) {
                return Optional.empty();
            }
            Optional<ResourceProvider> provider = providers.find(row.type, row.backend);
            if (provider.isEmpty() || !facet.isInstance(provider.get())) {
                return Optional.empty();
            }
            return Optional.of(new Opened<>(facet.cast(provider.get()), runtime.context(row, b.access()), b));
        }
        return Optional.empty();
    }

    /** Creating and deleting resources, shared with the {@code /api/resources} routes. */
    ResourceLifecycle lifecycle() {
        return lifecycle;
    }

    @Override
    public Bound create(
            Caller caller, SpaceRef space, String type, String backend, String name, Map<String, Object> config)
            throws ResourceException {
        if (space == null || !space.provenFor(caller)) {
            throw new IllegalArgumentException("the workspace is not proven for the caller");
        }
        ResourceRow row = lifecycle.create(space.id(), type, backend, name, config);
        return bound(null, row, Access.WRITE);
    }

    @Override
    public boolean delete(Caller caller, SpaceRef space, String resourceId) throws ResourceException {
        if (space == null || !space.provenFor(caller) || resourceId == null) {
            return false;
        }
        Optional<ResourceRow> row = store.find(resourceId).filter(r -> r.spaceId.equals(space.id()));
        return row.isPresent() && lifecycle.delete(row.get());
    }
}
