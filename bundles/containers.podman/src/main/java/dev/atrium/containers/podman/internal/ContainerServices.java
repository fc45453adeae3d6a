package dev.atrium.containers.podman.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.deploy.api.Deployment;
import dev.atrium.deploy.api.DeploymentException;
import dev.atrium.deploy.api.DeploymentException.Kind;
import dev.atrium.deploy.api.DeploymentProvider.Health;
import dev.atrium.deploy.api.LogBook;
import dev.atrium.deploy.api.LogLine;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.runner.api.RunnerException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Container services on the shared podman service: each deployment one container of its uploaded image
 * ({@link ImageArchive}) on podman's bridge network, reached by the server at the container's own address (no port
 * published: the host reaches the bridge directly, and nothing of the container's is opened on the host's interfaces),
 * with its bindings through the {@link BindingRelay}. A monitor thread restarts crashed containers with backoff
 * (1 s, doubling to 30 s; back to 1 s after a minute up); their output is the service's log.
 */
final class ContainerServices implements AutoCloseable {

    /** Every container of container services carries it (value: the deployment's runtime id). */
    static final String LABEL = "atrium.service-deployment";

    private static final Logger LOG = LoggerFactory.getLogger(ContainerServices.class);
    private static final Pattern HEALTH_PATH = Pattern.compile("/[\\x21-\\x7e]{0,500}");
    private static final long MONITOR_MILLIS = 250;
    private static final long MAX_BACKOFF_SECONDS = 30;
    private static final long STABLE_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** What the configuration says, resolved. */
    record Settings(
            String user,
            long memoryBytes,
            double cpus,
            int pids,
            int port,
            String network,
            Duration startTimeout,
            Duration drainGrace,
            int logLines,
            String registry,
            boolean registryTls) {}

    private final PodmanService service;
    private final Settings settings;
    private final LogBook logs;
    private final BindingRelay relay = new BindingRelay();
    private final EgressProxy proxy;
    private final ServiceImages images;
    private volatile boolean networkChecked;
    private final SecureRandom random = new SecureRandom();
    private final Map<String, Running> running = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.LongAdder restartsSinceStart =
            new java.util.concurrent.atomic.LongAdder();
    /** Deployments taken out of {@link #running} whose containers still drain. */
    private final java.util.Set<Running> draining = ConcurrentHashMap.newKeySet();

    private final ScheduledThreadPoolExecutor drains;
    private final Thread monitor;
    private volatile boolean closed;

    /** A deployment this provider runs, and its container of the moment (null while it is down). */
    private static final class Running {
        final Deployment deployment;
        final ImageArchive image;
        /** The registry image it was pulled from, null for an uploaded archive. */
        final String pulled;

        final int port;
        final String healthPath;
        volatile Container current;
        volatile boolean healthy;
        volatile boolean stopping;
        int restarts;
        long upSinceNanos;
        long nextStartNanos;

        Running(Deployment deployment, ImageArchive image, String pulled, int port, String healthPath) {
            this.deployment = deployment;
            this.image = image;
            this.pulled = pulled;
            this.port = port;
            this.healthPath = healthPath;
        }
    }

    /** One container of a deployment, with the thread that follows its output. */
    private static final class Container {
        final String id;
        final String address;
        final URI endpoint;
        volatile UnixHttp.Exchange output;
        volatile boolean closed;

        Container(String id, String address, URI endpoint) {
            this.id = id;
            this.address = address;
            this.endpoint = endpoint;
        }

        void stopFollowing() {
            closed = true;
            UnixHttp.Exchange o = output;
            if (o != null) {
                o.close();
            }
        }
    }

    ContainerServices(PodmanService service, Settings settings) {
        this(service, settings, null);
    }

    /** With {@code guard}, containers reach out through the {@link EgressProxy} it judges; without, not at all. */
    ContainerServices(PodmanService service, Settings settings, EgressGuard guard) {
        this.service = service;
        this.settings = settings;
        this.proxy = guard == null ? null : new EgressProxy(guard, relay);
        this.images = new ServiceImages(this::api, settings.registry(), settings.registryTls());
        this.logs = new LogBook(settings.logLines());
        this.drains = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "podman-services-drain");
            t.setDaemon(true);
            return t;
        });
        this.monitor = new Thread(this::monitor, "podman-services-monitor");
        monitor.setDaemon(true);
        monitor.start();
    }

    // ------------------------------------------------------------------ the provider's calls

    void validate(Deployment d) throws DeploymentException {
        prepare(d);
    }

    private Running prepare(Deployment d) throws DeploymentException {
        if (!"container-image".equals(d.artifactKind())) {
            throw new DeploymentException(Kind.INVALID, "the podman provider runs container-image artifacts only");
        }
        ServiceImages.Source image = images.source(d);
        int port = settings.port();
        String given = d.env().get("PORT");
        if (given != null) {
            try {
                port = Integer.parseInt(given.strip());
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 1 || port > 65535) {
                throw new DeploymentException(Kind.INVALID, "env PORT must be a port number (1 to 65535)");
            }
        }
        String health = d.env().getOrDefault("ATRIUM_HEALTH_PATH", "/");
        if (!HEALTH_PATH.matcher(health).matches()) {
            throw new DeploymentException(Kind.INVALID, "env ATRIUM_HEALTH_PATH must be a path starting with /");
        }
        return new Running(d, image.image(), image.pulled(), port, health);
    }

    /** Starts the new deployments, waits until each answers, then drains and stops those no longer listed. */
    synchronized void apply(List<Deployment> deployments) throws DeploymentException {
        if (closed) {
            throw new DeploymentException(Kind.UNAVAILABLE, "the podman provider is stopped");
        }
        List<Running> fresh = new ArrayList<>();
        try {
            for (Deployment d : deployments) {
                if (!running.containsKey(d.id())) {
                    Running r = prepare(d);
                    images.load(new ServiceImages.Source(r.image, r.pulled), r.deployment);
                    fresh.add(r);
                    r.current = start(r);
                }
            }
            long deadline = System.nanoTime() + settings.startTimeout().toNanos();
            for (Running r : fresh) {
                awaitAnswer(r, deadline);
            }
        } catch (DeploymentException e) {
            fresh.forEach(r -> stop(r, false));
            throw e;
        }
        long now = System.nanoTime();
        for (Running r : fresh) {
            r.healthy = true;
            r.upSinceNanos = now;
            running.put(r.deployment.id(), r);
        }
        List<String> wanted = deployments.stream().map(Deployment::id).toList();
        for (String id : List.copyOf(running.keySet())) {
            if (!wanted.contains(id)) {
                Running gone = running.remove(id);
                gone.stopping = true; // no new request reaches it from now on
                draining.add(gone);
                var unused = drains.schedule(
                        () -> {
                            stop(gone, true);
                            draining.remove(gone);
                        },
                        settings.drainGrace().toMillis(),
                        TimeUnit.MILLISECONDS);
            }
        }
    }

    Optional<URI> endpoint(String deploymentId) {
        Running r = running.get(deploymentId);
        Container c = r == null ? null : r.current;
        return c != null && r.healthy && !r.stopping ? Optional.of(c.endpoint) : Optional.empty();
    }

    /** Containers of deployed services running now. */
    int containersUp() {
        return running.size();
    }

    /** Restarts of crashed or stopped containers since the start. */
    long restarts() {
        return restartsSinceStart.sum();
    }

    Health health() {
        var availability = service.availability();
        if (!availability.ready()) {
            return new Health(false, "podman: " + availability.reason());
        }
        long up = running.values().stream().filter(r -> r.healthy).count();
        return new Health(true, "podman: " + up + " of " + running.size() + " container deployments answering");
    }

    List<LogLine> logs(String serviceId, long afterSeq, int limit) {
        return logs.read(serviceId, afterSeq, limit);
    }

    AutoCloseable follow(String serviceId, Consumer<LogLine> sink) {
        return logs.follow(serviceId, sink);
    }

    // ------------------------------------------------------------------ containers

    private DockerApi api() throws DeploymentException {
        try {
            return service.api();
        } catch (RunnerException e) {
            throw new DeploymentException(Kind.UNAVAILABLE, "podman is not available: " + e.getMessage(), e);
        }
    }

    /**
     * Makes the services' network, internal (no route past the host's bridge), unless it exists; an existing one that
     * is not internal is used as it is, with a warning that containers reach out without the egress guard.
     */
    private void network(DockerApi api) throws IOException {
        if (networkChecked) {
            return;
        }
        if (!api.ensureInternalNetwork(settings.network())) {
            LOG.warn(
                    "the network {} of container services is not internal: containers reach out directly, not through"
                            + " the egress guard",
                    settings.network());
        }
        networkChecked = true;
    }

    /** Creates and starts a container of the deployment; its address and output followed. */
    private Container start(Running r) throws DeploymentException {
        DockerApi api = api();
        byte[] suffix = new byte[4];
        random.nextBytes(suffix);
        String name = "atrium-svc-" + r.deployment.id().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_.-]", "-") + "-"
                + HexFormat.of().formatHex(suffix);
        String id = null;
        try {
            network(api);
            id = api.createContainer(
                    name, ContainerSpec.of(r.deployment, r.image, r.port, settings, relay, proxy, api));
            service.track(id);
            api.startContainer(id);
            JsonNode info = api.inspect(id).orElseThrow(() -> new IOException("the container went away at start"));
            String address = address(info);
            Container c = new Container(id, address, URI.create("http://" + address + ":" + r.port));
            upstream(r.deployment).ifPresent(up -> relay.allow(address, r.deployment.id(), up));
            if (proxy != null) {
                proxy.allow(address);
            }
            follow(r, c, api);
            return c;
        } catch (IOException e) {
            if (id != null) {
                remove(id);
            }
            throw new DeploymentException(
                    e instanceof ApiException a && a.status() / 100 == 4 ? Kind.INVALID : Kind.UNAVAILABLE,
                    "podman cannot start the container: " + e.getMessage(),
                    e);
        }
    }

    private String address(JsonNode info) throws IOException {
        String address = info.path("NetworkSettings").path("IPAddress").asText("");
        if (address.isEmpty()) {
            for (JsonNode n : info.path("NetworkSettings").path("Networks")) {
                address = n.path("IPAddress").asText("");
                if (!address.isEmpty()) {
                    break;
                }
            }
        }
        if (address.isEmpty()) {
            throw new IOException("the container has no address on the network " + settings.network());
        }
        return address;
    }

    /** The internal binding endpoint the deployment's bindings point at (the server's loopback listener). */
    private static Optional<InetSocketAddress> upstream(Deployment d) {
        return d.bindings().stream()
                .findFirst()
                .map(b -> new InetSocketAddress(
                        b.endpoint().getHost(), b.endpoint().getPort()));
    }

    /** Copies the container's output to the service's log, a line at a time, until the container stops. */
    private void follow(Running r, Container c, DockerApi api) {
        Thread t = new Thread(
                () -> {
                    OutputLines out = new OutputLines(logs, r.deployment.serviceId(), r.deployment.id());
                    try (UnixHttp.Exchange exchange = api.followLogs(c.id)) {
                        c.output = exchange;
                        if (!c.closed) {
                            Frames.copy(exchange.body(), out);
                        }
                    } catch (IOException e) {
                        if (!c.closed) {
                            LOG.debug("following the output of {} ended: {}", c.id, e.toString());
                        }
                    } finally {
                        out.flush();
                    }
                },
                "podman-service-output");
        t.setDaemon(true);
        t.start();
    }

    private void note(Running r, String level, String message) {
        logs.append(r.deployment.serviceId(), r.deployment.id(), Instant.now(), level, "[podman] " + message);
    }

    /** Waits until the new container answers HTTP below 500; fails early when it exits. */
    private void awaitAnswer(Running r, long deadline) throws DeploymentException {
        Container c = r.current;
        long nextStateCheck = 0;
        while (true) {
            if (HealthProbe.answers(c.endpoint, r.healthPath)) {
                return;
            }
            long now = System.nanoTime();
            if (now > nextStateCheck) {
                nextStateCheck = now + TimeUnit.MILLISECONDS.toNanos(300);
                Optional<String> exited = exited(c);
                if (exited.isPresent()) {
                    throw new DeploymentException(
                            Kind.INVALID,
                            "the container " + exited.get() + " before it answered HTTP on port " + r.port
                                    + lastLines(r));
                }
            }
            if (now > deadline) {
                throw new DeploymentException(
                        Kind.INVALID,
                        "the container did not answer HTTP on port " + r.port + " at " + r.healthPath + " within "
                                + settings.startTimeout().toSeconds() + " s" + lastLines(r));
            }
            sleep(50);
        }
    }

    private String lastLines(Running r) {
        List<LogLine> all = logs.read(r.deployment.serviceId(), 0, Integer.MAX_VALUE).stream()
                .filter(l -> l.deploymentId().equals(r.deployment.id()))
                .toList();
        if (all.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder("; its last output:");
        all.subList(Math.max(0, all.size() - 5), all.size())
                .forEach(l -> out.append("\n").append(l.message()));
        return out.toString();
    }

    /** "exited with code N" when the container is not running; empty while it runs (or cannot be asked). */
    private Optional<String> exited(Container c) {
        try {
            Optional<JsonNode> info = api().inspect(c.id);
            if (info.isEmpty()) {
                return Optional.of("went away");
            }
            JsonNode state = info.get().path("State");
            if (state.path("Running").asBoolean(false)) {
                return Optional.empty();
            }
            return Optional.of("exited with code " + state.path("ExitCode").asInt(-1)
                    + (state.path("OOMKilled").asBoolean(false) ? " (out of memory)" : ""));
        } catch (IOException | DeploymentException e) {
            return Optional.empty();
        }
    }

    // ------------------------------------------------------------------ the monitor

    private void monitor() {
        while (!closed) {
            sleep(MONITOR_MILLIS);
            if (closed || running.isEmpty()) {
                continue;
            }
            try {
                Map<String, String> states = new java.util.HashMap<>();
                DockerApi api = api();
                for (JsonNode c : api.labelled(LABEL)) {
                    states.put(c.path("Id").asText(), c.path("State").asText(""));
                }
                for (Running r : running.values()) {
                    check(r, states);
                }
            } catch (IOException | DeploymentException | RuntimeException e) {
                LOG.debug("the container services' monitor could not look: {}", e.toString());
            }
        }
    }

    private void check(Running r, Map<String, String> states) {
        synchronized (r) {
            if (r.stopping || closed) {
                return;
            }
            long now = System.nanoTime();
            Container c = r.current;
            if (c != null) {
                String state = states.get(c.id);
                if (!"running".equals(state)) {
                    String how = exited(c).orElse("stopped (" + state + ")");
                    r.current = null;
                    r.healthy = false;
                    if (now - r.upSinceNanos > STABLE_NANOS) {
                        r.restarts = 0;
                    }
                    long delay = Math.min(MAX_BACKOFF_SECONDS, 1L << Math.min(r.restarts, 5));
                    r.restarts++;
                    restartsSinceStart.increment();
                    r.nextStartNanos = now + TimeUnit.SECONDS.toNanos(delay);
                    note(r, "warn", "the container " + how + "; starting it again in " + delay + " s");
                    LOG.info("container service {} {}; restarting in {} s", r.deployment.id(), how, delay);
                    discard(c);
                } else if (!r.healthy && HealthProbe.answers(c.endpoint, r.healthPath)) {
                    r.healthy = true;
                    r.upSinceNanos = now;
                    note(r, "info", "the container answers again");
                }
            } else if (now >= r.nextStartNanos) {
                try {
                    r.current = start(r);
                } catch (DeploymentException e) {
                    long delay = Math.min(MAX_BACKOFF_SECONDS, 1L << Math.min(r.restarts, 5));
                    r.restarts++;
                    restartsSinceStart.increment();
                    r.nextStartNanos = now + TimeUnit.SECONDS.toNanos(delay);
                    note(r, "error", e.getMessage() + "; trying again in " + delay + " s");
                }
            }
        }
    }

    // ------------------------------------------------------------------ stopping

    /** Stops the deployment's container: after SIGTERM and a grace when {@code gently}; its image when unused. */
    private void stop(Running r, boolean gently) {
        Container c;
        synchronized (r) {
            r.stopping = true;
            c = r.current;
            r.current = null;
        }
        if (c != null) {
            if (gently) {
                try {
                    api().stop(c.id, 5);
                } catch (IOException | DeploymentException e) {
                    LOG.debug("stopping {}: {}", c.id, e.toString());
                }
            }
            discard(c);
        }
        boolean used = running.values().stream().anyMatch(o -> o.image.id().equals(r.image.id()));
        if (!used && !closed) {
            try {
                api().removeImage(r.image.reference());
            } catch (IOException | DeploymentException e) {
                LOG.debug("removing image {}: {}", r.image.id(), e.toString());
            }
        }
    }

    private void discard(Container c) {
        relay.revoke(c.address);
        if (proxy != null) {
            proxy.revoke(c.address);
        }
        c.stopFollowing();
        remove(c.id);
    }

    private void remove(String id) {
        try {
            api().remove(id);
        } catch (IOException | DeploymentException e) {
            LOG.warn("cannot remove container {}: {}", id, e.getMessage());
        }
        service.forget(id);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Removes every container of this provider (no drain: the server or the bundle stops) and its threads. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        monitor.interrupt();
        try {
            monitor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        drains.shutdownNow();
        List<Running> all = new ArrayList<>(running.values());
        all.addAll(draining);
        for (Running r : all) {
            stop(r, false);
        }
        running.clear();
        draining.clear();
        relay.close();
        if (proxy != null) {
            proxy.close();
        }
    }
}
