package dev.atrium.services.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.deploy.api.Binding;
import dev.atrium.deploy.api.Deployment;
import dev.atrium.deploy.api.DeploymentException;
import dev.atrium.deploy.api.DeploymentProvider;
import dev.atrium.deploy.api.LogLine;
import dev.atrium.kernel.api.DatabaseChannels;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.Keepsakes;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.WorkspaceEnvironment;
import dev.atrium.kernel.api.WorkspaceEnvironmentListener;
import dev.atrium.resource.api.BindingListener;
import dev.atrium.resource.api.ResourceDirectory;
import dev.atrium.resource.api.WorkflowFacet;
import dev.atrium.services.api.RoutesListener;
import dev.atrium.services.api.ServiceDomains;
import dev.atrium.services.api.ServiceRoutes;
import dev.atrium.services.internal.ServiceStore.DeploymentRow;
import dev.atrium.services.internal.ServiceStore.EnvRow;
import dev.atrium.services.internal.ServiceStore.Service;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the running deployments equal to the stored desired state: after every change (deploy, rollback, canary
 * promote, abort or share, env, settings or bindings change, delete) it computes each provider's set
 * ({@link DesiredState}) and calls {@link DeploymentProvider#apply}, one change at a time (a lock), then publishes the
 * routing table the proxy reads ({@link Routes}). Providers come and go at run time; one that registers is given its
 * set at once.
 *
 * <p>Why one class of about 750 lines: it is the reconciler, and the desired state, the lock that orders its changes,
 * the providers and the routing table it publishes are one piece of state; Host routing, the binding gateway and the
 * custom domains are bundles of their own that read it through {@code services.api}.
 */
@Component(
        service = {Deployer.class, ServiceRoutes.class, BindingListener.class, WorkspaceEnvironmentListener.class},
        configurationPid = "dev.atrium.services")
@Designate(ocd = Deployer.Config.class)
public class Deployer implements ServiceRoutes, BindingListener, WorkspaceEnvironmentListener {

    private static final Logger LOG = LoggerFactory.getLogger(Deployer.class);
    static final ObjectMapper JSON = JsonMappers.create();
    static final String BLOB_NAMESPACE = "services";

    @ObjectClassDefinition(name = "Atrium services")
    public @interface Config {
        @AttributeDefinition(description = "The data directory (--data, ATRIUM_DATA); keys live in its keys/services")
        String dataDirectory() default "data";

        @AttributeDefinition(description = "Services answer at <slug>.<appsDomain> (ATRIUM_SERVICES_APPS_DOMAIN)")
        String appsDomain() default "apps.localhost";

        @AttributeDefinition(
                description = "Share of requests a canary deployment gets unless its create body says canary_percent")
        int canaryPercent() default 10;

        @AttributeDefinition(description = "Largest deployment artifact in bytes (after base64 decoding)")
        long maxArtifactBytes() default 25L << 20;

        @AttributeDefinition(
                description =
                        "Base URL deployed code reaches the internal binding endpoint at; empty: http://127.0.0.1:<http port>")
        String internalBaseUrl() default "";
    }

    /** A registered provider and its properties. */
    record Registered(String name, List<String> kinds, DeploymentProvider provider) {}

    private final Config config;
    private final ServiceStore store;
    private final ResourceDirectory directory;
    private final SpaceDirectory spaces;
    private final WorkspaceEnvironment commonEnv;
    private final BlobStore blobs;
    private final Sealer sealer;
    private final String internalBase;
    private final Map<DeploymentProvider, Registered> providers = new ConcurrentHashMap<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final ExecutorService background =
            Executors.newSingleThreadExecutor(NamedThreads.factory("atrium-services-reconcile"));
    private final Map<String, byte[]> artifacts = new ConcurrentHashMap<>();
    private final LogTails tails = new LogTails();
    private final ChangeFeed feed;
    private volatile Routes routes = Routes.EMPTY;
    private volatile Map<String, List<PathRoute>> pathRoutes = Map.of();
    /** Open once this instance has published its first routing table. */
    private final java.util.concurrent.CountDownLatch firstRoutes = new java.util.concurrent.CountDownLatch(1);

    private final BundleContext context;
    /** Told after every routing table this instance publishes. */
    private final List<RoutesListener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    private volatile boolean active;

    @Activate
    public Deployer(
            Config config,
            @Reference ServiceStore store,
            @Reference ResourceDirectory directory,
            @Reference SpaceDirectory spaces,
            @Reference WorkspaceEnvironment commonEnv,
            @Reference BlobStore blobs,
            @Reference javax.sql.DataSource dataSource,
            @Reference DatabaseChannels channels,
            BundleContext context)
            throws IOException {
        this.config = config;
        this.store = store;
        this.directory = directory;
        this.spaces = spaces;
        this.commonEnv = commonEnv;
        this.blobs = blobs;
        this.sealer = new Sealer(
                Path.of(config.dataDirectory()).toAbsolutePath().resolve("keys").resolve("services"));
        String base = config.internalBaseUrl().isBlank()
                ? null
                : config.internalBaseUrl().replaceAll("/+$", "");
        if (base == null) {
            String port = context.getProperty("org.osgi.service.http.port");
            base = "http://127.0.0.1:" + (port == null || port.isBlank() ? "8080" : port.trim());
        }
        this.internalBase = base;
        this.context = context;
        this.feed = new ChangeFeed(dataSource, channels, this::remoteChange);
    }

    /**
     * The first reconcile, once SCR has bound the providers there are (after the constructor): a first routing table
     * made without them would leave out every service they run, and the router answers from the first table.
     */
    @Activate
    void start() {
        // not before: SCR binds the providers between the constructor and here, and a reconcile they (or a change
        // announced meanwhile) asked for then would publish a table whose routes name deployments no provider was
        // given, which a provider may still answer for from a generation it is draining
        active = true;
        reconcileLater();
    }

    /**
     * When this capability is stopped for good (the services feature disabled, the bundle stopped or uninstalled),
     * nothing routes to the deployments any more, so the providers are told to run nothing. When it only restarts (the
     * bundle updated or refreshed, the component re-activated for a new reference: the bundle stays persistently
     * started) the deployments keep running, and the next activation applies the same set, which the providers keep as
     * it is: the workers' processes and their connections survive an update of this bundle.
     */
    @Deactivate
    void deactivate() throws InterruptedException {
        active = false;
        feed.close();
        tails.close();
        background.shutdownNow();
        background.awaitTermination(10, TimeUnit.SECONDS);
        boolean restarting = Keepsakes.restarting(context);
        lock.lock();
        try {
            for (Registered r : restarting ? List.<Registered>of() : List.copyOf(providers.values())) {
                try {
                    r.provider().apply(List.of());
                } catch (DeploymentException | RuntimeException e) {
                    LOG.warn("services: provider {} could not stop its deployments: {}", r.name(), e.getMessage());
                }
            }
        } finally {
            lock.unlock();
        }
        if (restarting) {
            LOG.info("services: the deployments keep running while this capability restarts");
        } else {
            LOG.info("services: stopped for good; {} deployment provider(s) told to run nothing", providers.size());
        }
        routes = Routes.EMPTY;
        pathRoutes = Map.of();
    }

    @Reference(
            service = DeploymentProvider.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addProvider(DeploymentProvider provider, Map<String, Object> properties) {
        Object name = properties.get(DeploymentProvider.NAME);
        if (!(name instanceof String n) || n.isBlank()) {
            LOG.warn("services: a DeploymentProvider without the {} property is ignored", DeploymentProvider.NAME);
            return;
        }
        providers.put(provider, new Registered(n, strings(properties.get(DeploymentProvider.KIND)), provider));
        comingBack.remove(n);
        reconcileLater();
    }

    void removeProvider(
            DeploymentProvider provider, org.osgi.framework.ServiceReference<DeploymentProvider> reference) {
        // marked as coming back before it is removed: a request that finds no provider in between must see that it
        // is coming back and wait for it (WorkerTrafficUpdateTest saw one 503 in 1,482 requests through that gap)
        Registered gone = providers.get(provider);
        Bundle bundle = reference.getBundle();
        if (gone != null && bundle != null && Keepsakes.restarting(bundle, context)) {
            comingBack.put(gone.name(), bundle);
        }
        providers.remove(provider);
        reconcileLater();
    }

    /** Providers that went away because their bundle restarts (an update or refresh), by name, until they are back. */
    private final Map<String, Bundle> comingBack = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Whether the provider {@code name} is away only while its bundle restarts: still persistently started (an update
     * or refresh stops a bundle transiently) in a running framework. A provider stopped for good (its feature
     * disabled) is not waited for.
     */
    @Override
    public boolean providerComingBack(String name) {
        Bundle b = comingBack.get(name);
        return b != null && Keepsakes.restarting(b, context);
    }

    private static List<String> strings(Object value) {
        if (value instanceof String s) {
            return List.of(s.split("\\s*,\\s*"));
        }
        if (value instanceof String[] a) {
            return List.of(a);
        }
        if (value instanceof Collection<?> c) {
            return c.stream().map(String::valueOf).toList();
        }
        return List.of();
    }

    Config config() {
        return config;
    }

    Sealer sealer() {
        return sealer;
    }

    @Override
    public Routes routes() {
        return routes;
    }

    @Override
    public Map<String, List<PathRoute>> pathRoutes() {
        return pathRoutes;
    }

    @Override
    public boolean hasRoutes() {
        return firstRoutes.getCount() == 0;
    }

    @Override
    public boolean awaitRoutes(long millis) throws java.io.InterruptedIOException {
        try {
            return firstRoutes.await(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("the server is stopping");
        }
    }

    @Override
    public java.util.Set<String> verifiedDomainNames() {
        java.util.Set<String> names = new java.util.HashSet<>();
        store.verifiedDomains().forEach(d -> names.add(d.domain()));
        return names;
    }

    /** The provider named {@code name}, if it runs {@code kind}. */
    Optional<Registered> provider(String name, String kind) {
        return providers.values().stream()
                .filter(r -> r.name().equals(name) && r.kinds().contains(kind))
                .findFirst();
    }

    Optional<Registered> registered(String name) {
        return providers.values().stream().filter(r -> r.name().equals(name)).findFirst();
    }

    @Override
    public Optional<DeploymentProvider> provider(String name) {
        return registered(name).map(Registered::provider);
    }

    @Override
    public String appsDomain() {
        return config.appsDomain().toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public String bindingSecret(String runtimeId) {
        return sealer.bindingSecret(runtimeId);
    }

    List<Registered> providers() {
        return List.copyOf(providers.values());
    }

    // ------------------------------------------------------------------ changes

    /** Work that changes the desired state, then makes it run; the lock keeps changes and applies in one order. */
    interface Change<T> {
        T run() throws DeploymentException;
    }

    <T> T change(Change<T> change) throws DeploymentException {
        lock.lock();
        try {
            T result = change.run();
            reconcile();
            return result;
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code work} under the change lock without applying (it applies itself, e.g. to revert on failure). */
    <T> T locked(Change<T> work) throws DeploymentException {
        lock.lock();
        try {
            return work.run();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void bindingsChanged(String serviceId) {
        if (store.service(serviceId).isPresent()) {
            store.bumpRevision(serviceId);
            reconcileLater();
            feed.announce();
        }
    }

    /** The services of that workspace linking the variable get its new value (a new config revision, as for their own env). */
    @Override
    public void commonVariableChanged(String spaceId, String name) {
        List<String> linking = store.linking(spaceId, name);
        if (!linking.isEmpty()) {
            linking.forEach(store::bumpRevision);
            reconcileLater();
            feed.announce();
        }
    }

    /** Another instance changed {@code topic} (null: anything may have changed while no one listened). */
    private void remoteChange(String topic) {
        // "certificates" is what an instance of the release before services.domains announces a certificate with: a
        // table published here makes this instance's certificates reload too
        if (topic == null || ChangeFeed.STATE.equals(topic) || "certificates".equals(topic)) {
            reconcileLater();
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addRoutesListener(RoutesListener listener) {
        listeners.add(listener);
    }

    void removeRoutesListener(RoutesListener listener) {
        listeners.remove(listener);
    }

    /**
     * A change of the desired state made through the API: stored, then applied; a provider's failure to apply it is
     * logged (what ran keeps running), any other failure is the caller's answer.
     */
    <T> T applying(Change<T> change) {
        try {
            return locked(() -> {
                T result = change.run();
                try {
                    reconcile();
                } catch (DeploymentException e) {
                    LOG.warn("services: the change was stored but a provider could not apply it: {}", e.getMessage());
                }
                return result;
            });
        } catch (DeploymentException e) {
            throw DeployFlow.answer(e);
        }
    }

    private void tellListeners() {
        for (RoutesListener l : listeners) {
            try {
                l.routesPublished();
            } catch (RuntimeException e) {
                LOG.warn("services: a routing listener failed: {}", e.toString());
            }
        }
    }

    void reconcileLater() {
        if (!active) {
            return;
        }
        try {
            background.execute(() -> {
                try {
                    locked(() -> {
                        apply();
                        return null;
                    });
                } catch (DeploymentException | RuntimeException e) {
                    LOG.warn("services: applying the deployments failed: {}", e.getMessage());
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException stopping) {
            // deactivating
        }
    }

    /**
     * Gives every running provider its desired set and publishes the routes, after a change this instance made: the
     * other instances are told. Call with the lock held.
     */
    void reconcile() throws DeploymentException {
        try {
            apply();
        } finally {
            feed.announce();
        }
    }

    /** {@link #reconcile} without telling the other instances (a provider came or went, another instance changed). */
    private void apply() throws DeploymentException {
        List<Service> services = store.deployed();
        Map<String, Registered> byName = new LinkedHashMap<>();
        for (Registered r : providers.values()) {
            byName.putIfAbsent(r.name(), r);
        }
        Map<String, DeploymentRow> rows = new HashMap<>();
        Map<String, List<DesiredState.Entry>> desired = DesiredState.compute(
                services,
                id -> Optional.ofNullable(
                        rows.computeIfAbsent(id, k -> store.deployment(k).orElse(null))),
                byName.keySet());
        DeploymentException failure = null;
        Map<String, String> spaceOf = new HashMap<>();
        services.forEach(s -> spaceOf.put(s.id(), s.spaceId()));
        java.util.Set<String> keptArtifacts = new java.util.HashSet<>();
        java.util.Set<String> unbuildable = new java.util.HashSet<>();
        for (Map.Entry<String, List<DesiredState.Entry>> e : desired.entrySet()) {
            List<Deployment> list = new ArrayList<>();
            for (DesiredState.Entry entry : e.getValue()) {
                try {
                    list.add(build(entry.service(), entry.row(), entry.runtimeId()));
                    keptArtifacts.add(entry.row().artifactKey());
                } catch (DeploymentException | RuntimeException ex) {
                    // one deployment that cannot be given (its artifact unreadable, a secret that does not open) does
                    // not stop the others
                    LOG.warn(
                            "services: deployment {} of {} is left out: {}",
                            entry.row().id(),
                            entry.service().id(),
                            ex.getMessage());
                    unbuildable.add(entry.runtimeId());
                }
            }
            try {
                byName.get(e.getKey()).provider().apply(list);
            } catch (DeploymentException ex) {
                LOG.warn(
                        "services: provider {} could not apply {} deployments: {}",
                        e.getKey(),
                        list.size(),
                        ex.getMessage());
                if (failure == null) {
                    failure = ex;
                }
            }
        }
        artifacts.keySet().retainAll(keptArtifacts);
        Map<String, Route> bySlug = new HashMap<>();
        Map<String, Target> byRuntime = new HashMap<>();
        Map<String, Route> byService = new HashMap<>();
        for (Service s : services) {
            DeploymentRow current = rows.get(s.currentDeploymentId());
            // a service whose provider is away keeps its route: a request then waits while the provider's bundle is
            // updated (it hands its running workers on), else is told 503, never that no service answers there
            if (current == null) {
                continue;
            }
            String currentRuntime = DesiredState.runtimeId(current.id(), s.configRevision());
            if (unbuildable.contains(currentRuntime)) {
                continue;
            }
            DeploymentRow canary = s.canaryDeploymentId() == null ? null : rows.get(s.canaryDeploymentId());
            String canaryRuntime = canary == null
                            || !byName.containsKey(canary.provider())
                            || unbuildable.contains(DesiredState.runtimeId(canary.id(), s.configRevision()))
                    ? null
                    : DesiredState.runtimeId(canary.id(), s.configRevision());
            Route route = new Route(
                    s.id(),
                    s.slug(),
                    current.provider(),
                    currentRuntime,
                    canaryRuntime == null ? null : canary.provider(),
                    canaryRuntime,
                    canaryRuntime == null ? 0 : s.canaryPercent() == null ? config.canaryPercent() : s.canaryPercent());
            bySlug.put(s.slug(), route);
            byService.put(s.id(), route);
            byRuntime.put(currentRuntime, new Target(s.id(), s.spaceId(), currentRuntime));
            if (canaryRuntime != null) {
                byRuntime.put(canaryRuntime, new Target(s.id(), s.spaceId(), canaryRuntime));
            }
        }
        Map<String, Route> byDomain = new HashMap<>();
        for (ServiceDomains.Domain d : store.verifiedDomains()) {
            Route r = byService.get(d.serviceId());
            if (r != null) {
                byDomain.put(d.domain(), r);
            }
        }
        Map<String, List<PathRoute>> paths = new HashMap<>();
        for (var e : store.allPathRoutes().entrySet()) {
            if (!byService.containsKey(e.getKey())) {
                continue;
            }
            List<PathRoute> list = new ArrayList<>();
            e.getValue().forEach((prefix, target) -> {
                Route r = byService.get(target);
                if (r != null) {
                    list.add(new PathRoute(prefix, r));
                }
            });
            // longest first: the first match is the most specific
            list.sort((a, b) -> Integer.compare(b.prefix().length(), a.prefix().length()));
            paths.put(e.getKey(), List.copyOf(list));
        }
        pathRoutes = Map.copyOf(paths);
        routes = new Routes(Map.copyOf(bySlug), Map.copyOf(byDomain), Map.copyOf(byRuntime));
        firstRoutes.countDown();
        tellListeners();
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * A bound secretRef's value, which the code reads as the text {@code env.<binding name>} (replacing an env variable
     * of that name): the one place a secretRef's value leaves its provider. Empty, and logged, when its provider or key
     * is not there: the code then sees no such variable, and the other services deploy as before.
     */
    private java.util.Optional<String> revealed(Service service, ResourceDirectory.Bound b) {
        try {
            var opened = directory.open(
                    service.id(), service.spaceId(), b.bindingName(), dev.atrium.resource.api.SecretFacet.class);
            if (opened.isEmpty()) {
                LOG.warn(
                        "service {}: the secretRef bound as {} is not available (its provider is not running)",
                        service.id(),
                        b.bindingName());
                return java.util.Optional.empty();
            }
            byte[] value = opened.get().facet().reveal(opened.get().context());
            return java.util.Optional.of(new String(value, java.nio.charset.StandardCharsets.UTF_8));
        } catch (dev.atrium.resource.api.ResourceException e) {
            LOG.warn(
                    "service {}: the secretRef bound as {} cannot be read: {}",
                    service.id(),
                    b.bindingName(),
                    e.getMessage());
            return java.util.Optional.empty();
        }
    }

    static final String DURABLE_OBJECT = "durableObject";

    /** A binding's runtime options: a workflow's {@code class_name}; none for other types. */
    private Map<String, String> workflowOptions(Service service, ResourceDirectory.Bound b) {
        if (!"workflow".equals(b.type())) {
            return Map.of();
        }
        return directory
                .open(service.id(), service.spaceId(), b.bindingName(), WorkflowFacet.class)
                .map(o -> o.context().config().get("class_name"))
                .filter(String.class::isInstance)
                .map(c -> Map.of("class_name", (String) c))
                .orElse(Map.of());
    }

    /**
     * What the runtime needs for a bound durableObject: the class the code exports ({@code class_name}, the resource's
     * config), the namespace's key ({@code unique_key}, the resource id, so the objects follow the resource, not the
     * deployment) and the directory its objects are kept in ({@code storage}: the resource's own directory, which the
     * resources core deletes with the resource). Empty, and logged, when its provider is not running: the code then has
     * no such binding, and the other services deploy as before.
     */
    private java.util.Optional<Map<String, String>> durableObjectOptions(Service service, ResourceDirectory.Bound b) {
        try {
            var opened = directory.open(
                    service.id(), service.spaceId(), b.bindingName(), dev.atrium.resource.api.ResourceProvider.class);
            if (opened.isEmpty()) {
                LOG.warn(
                        "service {}: the durableObject bound as {} is not available (its provider is not running)",
                        service.id(),
                        b.bindingName());
                return java.util.Optional.empty();
            }
            var ctx = opened.get().context();
            return java.util.Optional.of(Map.of(
                    "class_name",
                    String.valueOf(ctx.config().get("class_name")),
                    "unique_key",
                    b.resourceId(),
                    "storage",
                    ctx.dataDirectory().toAbsolutePath().toString()));
        } catch (dev.atrium.resource.api.ResourceException e) {
            LOG.warn(
                    "service {}: the durableObject bound as {} cannot be used: {}",
                    service.id(),
                    b.bindingName(),
                    e.getMessage());
            return java.util.Optional.empty();
        }
    }

    /**
     * The workspace's common variables the service links to, read when its code is given its env: the service's own
     * variables and its bindings of the same name win over them. A linked name the workspace does not have is absent.
     */
    private Map<String, String> linkedCommonValues(Service service) {
        List<String> names = store.links(service.id()).stream()
                .filter(l -> !l.builtin())
                .map(ServiceStore.LinkRow::name)
                .toList();
        if (names.isEmpty()) {
            return Map.of();
        }
        return spaces.byId(service.spaceId())
                .map(space -> commonEnv.values(space, names))
                .orElse(Map.of());
    }

    /** The provider's view of one deployment of {@code service} under its current config revision. */
    Deployment build(Service service, DeploymentRow row, String runtimeId) throws DeploymentException {
        return build(service, row, runtimeId, artifact(row.artifactKey()));
    }

    Deployment build(Service service, DeploymentRow row, String runtimeId, byte[] artifact) {
        JsonNode settings = Settings.parse(service.settings());
        String date = settings.path("compatibility_date").isTextual()
                ? settings.get("compatibility_date").textValue()
                : null;
        List<String> flags = new ArrayList<>();
        settings.path("compatibility_flags").forEach(f -> flags.add(f.asText()));
        Map<String, Long> limits = new LinkedHashMap<>();
        settings.path("limits")
                .fields()
                .forEachRemaining(f -> limits.put(f.getKey(), f.getValue().asLong()));
        Map<String, String> env = new LinkedHashMap<>(linkedCommonValues(service));
        for (EnvRow v : store.env(service.id())) {
            env.put(
                    v.name(),
                    v.secret() ? sealer.open(service.id(), v.name(), v.keyId(), v.nonce(), v.ciphertext()) : v.value());
        }
        List<Binding> bindings = new ArrayList<>();
        for (ResourceDirectory.Bound b : directory.bindings(service.id(), service.spaceId())) {
            if ("secretRef".equals(b.type())) {
                revealed(service, b).ifPresent(value -> env.put(b.bindingName(), value));
                continue;
            }
            Map<String, String> options;
            if (DURABLE_OBJECT.equals(b.type())) {
                java.util.Optional<Map<String, String>> o = durableObjectOptions(service, b);
                if (o.isEmpty()) {
                    continue;
                }
                options = o.get();
            } else {
                options = workflowOptions(service, b);
            }
            bindings.add(new Binding(
                    b.bindingName(),
                    b.type(),
                    URI.create(internalBase + BINDINGS_PATH + runtimeId + "/" + b.bindingName()),
                    Map.of(SECRET_HEADER, sealer.bindingSecret(runtimeId)),
                    options));
        }
        return new Deployment(
                runtimeId, service.id(), row.artifactKind(), artifact, date, flags, limits, env, bindings);
    }

    byte[] artifact(String key) throws DeploymentException {
        byte[] cached = artifacts.get(key);
        if (cached != null) {
            return cached;
        }
        try (InputStream in = blobs.open(key)) {
            byte[] bytes = in.readAllBytes();
            artifacts.put(key, bytes);
            return bytes;
        } catch (IOException e) {
            throw new DeploymentException(
                    DeploymentException.Kind.UNAVAILABLE, "the stored artifact cannot be read", e);
        }
    }

    void remember(String key, byte[] bytes) {
        artifacts.put(key, bytes);
    }

    // ------------------------------------------------------------------ logs

    /** The provider whose logs a service's are: its current deployment's, else the first one running. */
    Optional<DeploymentProvider> logProvider(Service service) {
        if (service.currentDeploymentId() != null) {
            Optional<DeploymentRow> row = store.deployment(service.currentDeploymentId());
            if (row.isPresent()) {
                Optional<Registered> r = registered(row.get().provider());
                if (r.isPresent()) {
                    return Optional.of(r.get().provider());
                }
            }
        }
        return providers.values().stream().findFirst().map(Registered::provider);
    }

    List<LogLine> logs(Service service, long after, int limit) {
        return logProvider(service).map(p -> p.logs(service.id(), after, limit)).orElse(List.of());
    }

    LogTails tails() {
        return tails;
    }

    /** Removes a stored artifact no deployment uses any more. */
    void deleteBlob(String key) {
        try {
            blobs.delete(key);
        } catch (IOException e) {
            LOG.warn("services: the artifact {} could not be removed: {}", key, e.toString());
        }
        artifacts.remove(key);
    }

    AutoCloseable follow(Service service, Consumer<LogLine> sink) {
        Optional<DeploymentProvider> p = logProvider(service);
        return p.isPresent() ? p.get().follow(service.id(), sink) : () -> {};
    }
}
