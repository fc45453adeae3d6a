package dev.atrium.deploy.workerd.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.deploy.api.Deployment;
import dev.atrium.deploy.api.DeploymentException;
import dev.atrium.deploy.api.DeploymentException.Kind;
import dev.atrium.deploy.api.DeploymentProvider.Health;
import dev.atrium.deploy.api.LogBook;
import dev.atrium.deploy.api.LogLine;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.NamedThreads;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the deployments given to {@link #apply} in supervised {@code workerd serve} child processes, one per service
 * (a service's <em>generation</em>: its current deployment and its canary), each worker on a loopback port of its own.
 * workerd cannot reload, so a change to a service's deployments starts a new generation of that service only, on new
 * ports, waits until every port accepts connections, switches the endpoints, and lets the old generation drain: it
 * keeps serving for {@code drainGrace}, then gets SIGTERM (workerd then stops listening and finishes what is in flight)
 * and, if still there after another {@code drainGrace}, SIGKILL. Other services' processes, and the WebSockets and
 * requests they hold, are not touched.
 *
 * <p>The live generation is restarted when it dies (first at once, then with a growing back-off), on the same ports.
 * Each child runs under a small {@code sh} watchdog that reads the pipe of its standard input: when this JVM dies,
 * however, the pipe closes and the watchdog kills workerd, so no workerd outlives the server; {@link #close} and a
 * JVM shutdown hook stop them in the ordinary cases.
 *
 * <p>No OSGi here: {@link WorkerdProvider} is the DS component around it.
 *
 * <p>Why one class of about 1,220 lines: generations, their processes, ports, drains and restarts are one state machine
 * under one lock; the capnp configuration ({@link CapnpConfig}) and the workflow runner are already apart. What could
 * move out next is the child-process watchdog.
 */
public final class WorkerdRuntime implements AutoCloseable {

    public static final String WORKERD_VERSION = "1.20261117.1";
    public static final String DEFAULT_COMPATIBILITY_DATE = "2026-11-01";
    static final String WORKER_BUNDLE = "worker-bundle";

    private static final Logger LOG = LoggerFactory.getLogger(WorkerdRuntime.class);
    private static final ObjectMapper JSON = JsonMappers.create();
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int ERROR_TAIL = 40;
    private static final long[] BACKOFF_MILLIS = {0, 100, 250, 500, 1000, 2000, 5000, 10000};

    /**
     * The watchdog: runs workerd ({@code "$@"}) with its standard input on /dev/null and its control descriptor 4 on
     * the file {@code $ATRIUM_WORKERD_CONTROL}, passes SIGTERM on, kills it when its own standard input (a pipe from
     * this JVM) reaches end of file, and exits with its status.
     */
    static final String WATCHDOG = """
            exec 3<&0 </dev/null
            "$@" 3<&- 4>"$ATRIUM_WORKERD_CONTROL" &
            pid=$!
            trap 'kill -TERM "$pid" 2>/dev/null' TERM
            trap '' INT HUP
            ( while read -r _ <&3; do :; done; kill -KILL "$pid" 2>/dev/null ) &
            dog=$!
            exec 3<&-
            status=0
            wait "$pid" || status=$?
            while kill -0 "$pid" 2>/dev/null; do wait "$pid" || status=$?; done
            kill "$dog" 2>/dev/null
            exit "$status"
            """;

    /**
     * What the runtime needs; {@code binary} null when none was found. {@code refusedRanges} gives the address ranges
     * (CIDR) workers may not connect to, asked for each configuration written.
     */
    public record Settings(
            String binary,
            Path directory,
            Duration drainGrace,
            String compatibilityDate,
            Duration startTimeout,
            int logLinesPerService,
            java.util.function.Supplier<List<String>> refusedRanges) {

        /** Without the egress guard's ranges (tests): workers may connect nowhere outside their bindings. */
        public Settings(
                String binary,
                Path directory,
                Duration drainGrace,
                String compatibilityDate,
                Duration startTimeout,
                int logLinesPerService) {
            this(
                    binary,
                    directory,
                    drainGrace,
                    compatibilityDate,
                    startTimeout,
                    logLinesPerService,
                    () -> CapnpConfig.EVERYWHERE);
        }
    }

    private final Settings settings;
    private final LogBook logs;
    private final ScheduledExecutorService scheduler;
    /** Starts the services an {@link #apply} changed, side by side; its threads end when idle. */
    private final ExecutorService starters;
    /** Told the service id as each start begins (tests hold a start here to see the others go on). */
    volatile Consumer<String> startHook = service -> {};

    private final AtomicLong generations = new AtomicLong();
    private final Object lock = new Object();
    private final Set<Generation> live = new CopyOnWriteArraySet<>();
    private final java.util.concurrent.atomic.LongAdder restartsSinceStart =
            new java.util.concurrent.atomic.LongAdder();
    private final Thread shutdownHook;
    private volatile String binary;
    private volatile Map<String, URI> endpoints = Map.of();
    /** The live generation of each service, by service id. */
    private final Map<String, Generation> current = new HashMap<>(); // guarded by lock

    private volatile boolean closed;
    /** Set while the processes are handed to the next revision: the readers stop without closing the pipes. */
    private volatile boolean handingOver;

    public WorkerdRuntime(Settings settings) {
        this(settings, null);
    }

    /**
     * @param handedOver what the previous revision's {@link #handOver()} gave, or null: its live generations are
     *        adopted (their processes keep serving), the rest of the directory is cleared
     */
    public WorkerdRuntime(Settings settings, Map<String, Object> handedOver) {
        this.settings = settings;
        this.logs = new LogBook(settings.logLinesPerService());
        AtomicInteger threads = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new Thread(r, "workerd-supervisor-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.scheduler = Executors.newScheduledThreadPool(1, factory);
        AtomicInteger starterThreads = new AtomicInteger();
        int starterCount = Math.max(2, Runtime.getRuntime().availableProcessors());
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                starterCount, starterCount, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "workerd-starter-" + starterThreads.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        this.starters = pool;
        this.binary = resolveBinary(settings.binary());
        Set<Path> adopted = adopt(handedOver);
        try {
            Files.createDirectories(settings.directory());
            Files.setPosixFilePermissions(settings.directory(), PosixFilePermissions.fromString("rwx------"));
            // configurations a previous run left (they hold secrets), but for those of adopted processes
            try (Stream<Path> old = Files.list(settings.directory())) {
                old.filter(d -> !adopted.contains(d)).forEach(WorkerdRuntime::deleteTree);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare " + settings.directory(), e);
        }
        this.shutdownHook = new Thread(this::killAll, "workerd-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        NamedThreads.repeat(scheduler, this::watch, Duration.ofMillis(100), Duration.ofMillis(100));
    }

    /**
     * Takes over the live generations a previous revision handed over: each keeps its process, ports and directory,
     * and serves on; one whose process is gone or whose directory is not this runtime's is closed.
     */
    private Set<Path> adopt(Map<String, Object> handedOver) {
        Set<Path> dirs = new HashSet<>();
        if (handedOver == null || !(handedOver.get("generations") instanceof List<?> list)) {
            return dirs;
        }
        for (Object o : list) {
            if (!(o instanceof Map<?, ?> m) || !(m.get("process") instanceof Process p)) {
                continue;
            }
            Path dir = Path.of((String) m.get("dir"));
            if (!p.isAlive() || !settings.directory().equals(dir.getParent()) || !Files.isDirectory(dir)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                continue;
            }
            long number = ((Number) m.get("number")).longValue();
            Generation g = new Generation(number, (String) m.get("service"), dir, (String) m.get("nonce"), true);
            g.config = Path.of((String) m.get("config"));
            g.control = Path.of((String) m.get("control"));
            g.launches = ((Number) m.get("launches")).intValue();
            g.restarts = ((Number) m.get("restarts")).intValue();
            ((Map<?, ?>) m.get("ports")).forEach((id, port) -> g.ports.put((String) id, ((Number) port).intValue()));
            List<?> ids = (List<?>) m.get("ids");
            for (int i = 0; i < ids.size(); i++) {
                g.idByIndex.put(i, (String) ids.get(i));
            }
            g.adoptedIds = Set.copyOf(ids.stream().map(String.class::cast).toList());
            g.process = p;
            g.ready = true;
            g.runningSince = System.nanoTime();
            read(g, p);
            live.add(g);
            generations.accumulateAndGet(number, Math::max);
            synchronized (lock) {
                current.put(g.service, g);
                publishEndpoints();
            }
            dirs.add(dir);
            LOG.info(
                    "workerd generation {} of service {} adopted from the previous revision (pid {})",
                    number,
                    g.service,
                    p.pid());
        }
        return dirs;
    }

    /**
     * Hands the live generations to the next revision instead of stopping them (this bundle is being updated): stops
     * this runtime's threads, leaves the processes, their pipes and their directories as they are, and returns them
     * as JDK values only ({@code Keepsakes}). Generations still draining are stopped as {@link #close} would.
     */
    public Map<String, Object> handOver() {
        List<Generation> handed;
        synchronized (lock) {
            if (closed) {
                return Map.of();
            }
            closed = true;
            handed = current.values().stream()
                    .filter(g -> g.process != null && g.process.isAlive() && g.ready)
                    .toList();
            current.clear();
            // the endpoints stay: the processes go on serving there, and a request that took this provider just
            // before it left still reaches its worker
        }
        handingOver = true;
        starters.shutdownNow();
        try {
            starters.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        scheduler.shutdownNow();
        List<Map<String, Object>> out = new ArrayList<>();
        for (Generation g : handed) {
            for (Thread t : g.readers) {
                try {
                    t.join(1000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            Map<String, Object> m = new HashMap<>();
            m.put("service", g.service);
            m.put("number", g.number);
            m.put("dir", g.dir.toString());
            m.put("nonce", g.nonce);
            m.put("config", g.config.toString());
            m.put("control", g.control.toString());
            m.put("launches", g.launches);
            m.put("restarts", g.restarts);
            m.put("ports", new HashMap<>(g.ports));
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < g.idByIndex.size(); i++) {
                ids.add(g.idByIndex.get(i));
            }
            m.put("ids", ids);
            m.put("process", g.process);
            out.add(m);
            live.remove(g);
        }
        // what drains, or was never ready, is stopped as a close would
        for (Generation g : live) {
            g.retired = true;
            stopNow(g);
            deleteTree(g.dir);
        }
        live.clear();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is stopping
        }
        return Map.of("generations", out);
    }

    /**
     * The binary: the configured path ({@code ~} is the home directory) when it is executable, else {@code workerd} when
     * that command (looked up on the PATH by the OS) answers {@code --version}; null when neither.
     */
    static String resolveBinary(String configured) {
        if (configured != null && !configured.isBlank()) {
            String path = configured.startsWith("~/")
                    ? System.getProperty("user.home") + configured.substring(1)
                    : configured;
            Path p = Path.of(path);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p.toAbsolutePath().toString();
            }
        }
        try {
            Process version = new ProcessBuilder("workerd", "--version")
                    .redirectErrorStream(true)
                    .start();
            version.getInputStream().readAllBytes();
            if (version.waitFor(10, TimeUnit.SECONDS) && version.exitValue() == 0) {
                return "workerd";
            }
            version.destroyForcibly();
        } catch (IOException e) {
            // not on the PATH
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return null;
    }

    private String binary() throws DeploymentException {
        String b = binary;
        if (b == null) {
            b = binary = resolveBinary(settings.binary());
        }
        if (b == null) {
            throw new DeploymentException(Kind.UNAVAILABLE, missingBinary());
        }
        return b;
    }

    private String missingBinary() {
        return "the workerd binary is missing: neither " + settings.binary()
                + " nor workerd on the PATH (npm install --prefix ~/.cache/atrium/workerd-" + WORKERD_VERSION
                + " workerd@" + WORKERD_VERSION + ", or set ATRIUM_WORKERD_BIN)";
    }

    // ------------------------------------------------------------------------------------------------ the SPI

    public void validate(Deployment deployment) throws DeploymentException {
        String bin = binary();
        checkKind(deployment);
        List<Modules.Module> modules = Modules.of(deployment.artifact());
        Generation g = prepare(List.of(deployment), Map.of(deployment.id(), modules), false);
        try {
            Process p = launch(bin, g);
            awaitReady(g, p);
        } finally {
            g.retired = true;
            stopNow(g);
            deleteTree(g.dir);
        }
    }

    public void apply(List<Deployment> deployments) throws DeploymentException {
        if (closed) {
            throw new DeploymentException(Kind.UNAVAILABLE, "the workerd provider is stopping");
        }
        Map<String, Deployment> wanted = new LinkedHashMap<>();
        for (Deployment d : deployments) {
            checkKind(d);
            if (wanted.put(d.id(), d) != null) {
                throw new DeploymentException(Kind.INVALID, "deployment " + d.id() + " is given twice");
            }
        }
        Map<String, List<Deployment>> byService = new LinkedHashMap<>();
        wanted.values()
                .forEach(d -> byService
                        .computeIfAbsent(d.serviceId(), k -> new ArrayList<>())
                        .add(d));
        List<Generation> gone = new ArrayList<>();
        List<List<Deployment>> changed = new ArrayList<>();
        synchronized (lock) {
            for (var it = current.entrySet().iterator(); it.hasNext(); ) {
                var e = it.next();
                if (!byService.containsKey(e.getKey())) {
                    gone.add(e.getValue());
                    it.remove();
                }
            }
            byService.forEach((service, ds) -> {
                Generation g = current.get(service);
                if (g == null) {
                    // given again while a generation that left the set drains (the services feature disabled and
                    // enabled): that process is stopping, and the new generation starts afresh, so no request goes to
                    // the old one meanwhile
                    live.stream().filter(d -> d.service.equals(service)).forEach(d -> d.superseded = true);
                }
                if (g != null && g.byId.isEmpty() && g.adoptedIds.equals(ids(ds))) {
                    // adopted from the previous revision: the same deployments, already running
                    ds.forEach(d -> g.byId.put(d.id(), d));
                    g.adoptedIds = Set.of();
                } else if (g == null || !g.byId.keySet().equals(ids(ds))) {
                    changed.add(ds);
                }
            });
            if (!gone.isEmpty()) {
                publishEndpoints();
            }
        }
        gone.forEach(this::retire);
        // each changed service on its own: one that cannot start does not keep the others from their new version. They
        // start side by side (a start mostly waits for workerd to compile its workers), so after a restart of the
        // server the last of many services does not wait for all the others one after another.
        List<Future<DeploymentException>> outcomes = new ArrayList<>();
        if (changed.size() == 1) {
            outcomes.add(CompletableFuture.completedFuture(startAndSwitch(changed.get(0))));
        } else {
            for (List<Deployment> ds : changed) {
                try {
                    outcomes.add(starters.submit(() -> startAndSwitch(ds)));
                } catch (RejectedExecutionException e) {
                    outcomes.add(CompletableFuture.completedFuture(
                            new DeploymentException(Kind.UNAVAILABLE, "the workerd provider is stopping")));
                }
            }
        }
        DeploymentException first = null;
        for (Future<DeploymentException> outcome : outcomes) {
            DeploymentException e;
            try {
                e = outcome.get();
            } catch (ExecutionException ex) {
                if (ex.getCause() instanceof RuntimeException re) {
                    throw re;
                }
                throw new IllegalStateException(ex.getCause());
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                e = new DeploymentException(Kind.UNAVAILABLE, "interrupted while workerd started");
            }
            if (e == null) {
                continue;
            }
            if (first == null) {
                first = e;
            } else {
                first.addSuppressed(e);
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** Starts a generation of {@code ds}' service and makes it the live one; the failure, or null. */
    private DeploymentException startAndSwitch(List<Deployment> ds) {
        try {
            startHook.accept(ds.get(0).serviceId());
            if (closed) {
                return new DeploymentException(Kind.UNAVAILABLE, "the workerd provider is stopping");
            }
            if (!switchTo(start(ds), null, false)) {
                return new DeploymentException(Kind.UNAVAILABLE, "the workerd provider is stopping");
            }
            return null;
        } catch (DeploymentException e) {
            return e;
        }
    }

    private static Set<String> ids(List<Deployment> deployments) {
        Set<String> ids = new HashSet<>();
        deployments.forEach(d -> ids.add(d.id()));
        return ids;
    }

    /** The endpoints of every live generation. Called with the lock held. */
    private void publishEndpoints() {
        Map<String, URI> next = new HashMap<>();
        for (Generation g : current.values()) {
            g.ports.forEach((id, port) -> next.put(id, URI.create("http://127.0.0.1:" + port)));
        }
        endpoints = Map.copyOf(next);
    }

    /** Starts a generation running {@code deployments} and waits until it serves; new ports when one is taken. */
    private Generation start(List<Deployment> deployments) throws DeploymentException {
        String bin = binary();
        Map<String, List<Modules.Module>> modules = new HashMap<>();
        for (Deployment d : deployments) {
            modules.put(d.id(), Modules.of(d.artifact()));
        }
        for (int attempt = 1; ; attempt++) {
            Generation g = prepare(deployments, modules, true);
            try {
                Process p = launch(bin, g);
                awaitReady(g, p);
                return g;
            } catch (DeploymentException | RuntimeException e) {
                g.retired = true;
                stopNow(g);
                deleteTree(g.dir);
                if (e instanceof DeploymentException de && portTaken(de)) {
                    if (attempt < 3) {
                        continue;
                    }
                    throw new DeploymentException(Kind.UNAVAILABLE, de.getMessage(), de);
                }
                throw e;
            }
        }
    }

    private static boolean portTaken(DeploymentException e) {
        return e.getMessage() != null && e.getMessage().contains("Address already in use");
    }

    /**
     * Makes the started generation {@code g} its service's live one (only if {@code expected} still is, when
     * {@code onlyIf}), and lets the one before drain; false, and {@code g} stopped, when it cannot.
     */
    private boolean switchTo(Generation g, Generation expected, boolean onlyIf) {
        Generation old;
        synchronized (lock) {
            if (closed || (onlyIf && current.get(g.service) != expected)) {
                g.retired = true;
                stopNow(g);
                deleteTree(g.dir);
                return false;
            }
            old = current.put(g.service, g);
            g.runningSince = System.nanoTime();
            publishEndpoints();
        }
        LOG.info(
                "workerd generation {} serves {} deployment(s) of service {} (pid {})",
                g.number,
                g.byId.size(),
                g.service,
                g.process.pid());
        retire(old);
        return true;
    }

    /** Runs the live generation's deployments on new ports: one of its ports was taken while it restarted. */
    private void relocate(Generation old) {
        if (old.byId.isEmpty()) {
            // adopted, and no apply has given its deployments yet: start it again where it was
            old.relocating = false;
            scheduleRestart(old);
            return;
        }
        try {
            Generation g = start(List.copyOf(old.byId.values()));
            if (switchTo(g, old, true)) {
                LOG.info("workerd generation {} moved to new ports as generation {}", old.number, g.number);
            }
        } catch (DeploymentException | RuntimeException e) {
            LOG.warn("workerd generation {} could not move to new ports: {}", old.number, e.getMessage());
            old.relocating = false;
            scheduleRestart(old);
        }
    }

    /** The live generation's endpoint of the deployment, else that of a generation still draining. */
    public Optional<URI> endpoint(String deploymentId) {
        URI uri = endpoints.get(deploymentId);
        if (uri == null) {
            for (Generation g : live) {
                Integer port = g.ports.get(deploymentId);
                Process p = g.process;
                if (port != null
                        && g.recordLogs
                        && g.ready
                        && p != null
                        && p.isAlive()
                        && !g.terminating
                        && !g.superseded) {
                    return Optional.of(URI.create("http://127.0.0.1:" + port));
                }
            }
        }
        return Optional.ofNullable(uri);
    }

    public Health health() {
        if (binary == null && (binary = resolveBinary(settings.binary())) == null) {
            return new Health(false, "workerd binary missing: " + settings.binary());
        }
        List<Generation> gs;
        synchronized (lock) {
            gs = List.copyOf(current.values());
        }
        if (closed) {
            return new Health(false, "stopped");
        }
        if (gs.isEmpty()) {
            return new Health(true, "workerd " + WORKERD_VERSION + ", no deployments");
        }
        int deployments = 0;
        List<String> restarting = new ArrayList<>();
        for (Generation g : gs) {
            Process p = g.process;
            deployments += g.byId.size();
            if (p == null || !p.isAlive() || !g.ready) {
                restarting.add("service " + g.service + " (" + g.restarts + " restart(s))");
            }
        }
        if (restarting.isEmpty()) {
            return new Health(true, gs.size() + " workerd process(es) serve " + deployments + " deployment(s)");
        }
        return new Health(false, "workerd is restarting for " + String.join(", ", restarting));
    }

    public List<LogLine> logs(String serviceId, long afterSeq, int limit) {
        return logs.read(serviceId, afterSeq, limit);
    }

    public AutoCloseable follow(String serviceId, Consumer<LogLine> sink) {
        return logs.follow(serviceId, sink);
    }

    /** Stops every workerd process and waits until they are gone. */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            current.clear();
            endpoints = Map.of();
        }
        // starts in flight end first (interrupted, they stop what they launched), so none launches a workerd after
        // the ones below are stopped
        starters.shutdownNow();
        try {
            if (!starters.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("workerd starts still running 10 s after the provider began to stop");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Generation g : live) {
            g.retired = true;
            Process p = g.process;
            if (p != null) {
                p.destroy(); // SIGTERM: workerd finishes what is in flight
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        for (Generation g : live) {
            Process p = g.process;
            if (p != null) {
                try {
                    p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        for (Generation g : live) {
            stopNow(g);
            deleteTree(g.dir);
        }
        live.clear();
        scheduler.shutdownNow();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is stopping: the hook runs anyway
        }
    }

    /** Live generations whose workerd process is running now. */
    public int processesUp() {
        int up = 0;
        for (Generation g : live) {
            Process p = g.process;
            if (p != null && p.isAlive()) {
                up++;
            }
        }
        return up;
    }

    /** Restarts of workerd processes that died, since this runtime started. */
    public long restarts() {
        return restartsSinceStart.sum();
    }

    /** The workerd processes running now (for tests and operators). */
    public List<ProcessHandle> processes() {
        List<ProcessHandle> out = new ArrayList<>();
        for (Generation g : live) {
            Process p = g.process;
            if (p != null && p.isAlive()) {
                p.toHandle()
                        .descendants()
                        .filter(h -> h.isAlive()
                                && h.info()
                                        .command()
                                        .map(c -> c.endsWith("/workerd") || c.equals("workerd"))
                                        .orElse(false))
                        .forEach(out::add);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------------ generations

    /** Whether {@code g} is its service's live generation. Called with the lock held. */
    private boolean isCurrent(Generation g) {
        return current.get(g.service) == g;
    }

    private static final class Generation {
        final long number;
        /** The service whose deployments it runs. */
        final String service;

        final Path dir;
        final String nonce;
        final boolean recordLogs;
        final Map<String, Deployment> byId = new LinkedHashMap<>();
        /** Deployment ids by worker index (workerd's log lines name the worker by index). */
        final Map<Integer, String> idByIndex = new HashMap<>();

        final Map<String, Integer> ports = new LinkedHashMap<>();
        final ArrayDeque<String> errors = new ArrayDeque<>();
        Path config;
        volatile Process process;
        volatile boolean retired;
        volatile boolean ready;
        volatile boolean terminating;
        /** Draining, and its service has been given again: a new generation starts in its stead. */
        volatile boolean superseded;

        volatile boolean relocating;
        volatile Path control;
        int launches;
        volatile int restarts;
        volatile long runningSince;
        volatile List<Thread> readers = List.of();
        /** The process whose exit was handled (the watch sees each exit once). */
        volatile Process exitSeen;
        /** Adopted from the previous revision: the deployment ids it runs, until an apply gives their deployments. */
        volatile Set<String> adoptedIds = Set.of();

        Generation(long number, String service, Path dir, String nonce, boolean recordLogs) {
            this.number = number;
            this.service = service;
            this.dir = dir;
            this.nonce = nonce;
            this.recordLogs = recordLogs;
        }

        void error(String line) {
            synchronized (errors) {
                errors.addLast(line);
                while (errors.size() > ERROR_TAIL) {
                    errors.removeFirst();
                }
            }
        }

        String errorText() {
            synchronized (errors) {
                String text = String.join("\n", errors).strip();
                return text.length() > 4000 ? text.substring(0, 4000) + "…" : text;
            }
        }
    }

    private static void checkKind(Deployment d) throws DeploymentException {
        if (!WORKER_BUNDLE.equals(d.artifactKind())) {
            throw new DeploymentException(
                    Kind.INVALID, "the workerd provider runs worker-bundle artifacts, not " + d.artifactKind());
        }
    }

    private Generation prepare(
            List<Deployment> deployments, Map<String, List<Modules.Module>> modules, boolean recordLogs)
            throws DeploymentException {
        long n = generations.incrementAndGet();
        Path dir = settings.directory().resolve((recordLogs ? "gen-" : "validate-") + n);
        byte[] nonceBytes = new byte[12];
        RANDOM.nextBytes(nonceBytes);
        Generation g = new Generation(
                n, deployments.get(0).serviceId(), dir, HexFormat.of().formatHex(nonceBytes), recordLogs);
        int runners = (int) deployments.stream().filter(WorkflowRunner::has).count();
        List<Integer> ports = freePorts(deployments.size() + runners);
        List<CapnpConfig.Worker> workers = new ArrayList<>();
        int nextRunnerPort = deployments.size();
        for (int i = 0; i < deployments.size(); i++) {
            Deployment d = deployments.get(i);
            g.byId.put(d.id(), d);
            g.idByIndex.put(i, d.id());
            g.ports.put(d.id(), ports.get(i));
            // a worker with workflow bindings has its runner on a second port: endpoint(<id>#workflows)
            int runnerPort = WorkflowRunner.has(d) ? ports.get(nextRunnerPort++) : 0;
            if (runnerPort > 0) {
                g.ports.put(d.id() + WorkflowRunner.SUFFIX, runnerPort);
            }
            workers.add(new CapnpConfig.Worker(i, d, ports.get(i), modules.get(d.id()), runnerPort));
        }
        try {
            Files.createDirectories(dir);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
            // a validation keeps durable objects in memory
            g.config = CapnpConfig.write(
                    dir,
                    workers,
                    g.nonce,
                    settings.compatibilityDate(),
                    recordLogs,
                    settings.refusedRanges().get());
            Files.setPosixFilePermissions(g.config, PosixFilePermissions.fromString("rw-------"));
        } catch (IOException e) {
            deleteTree(dir);
            throw new DeploymentException(
                    Kind.UNAVAILABLE, "cannot write the workerd configuration: " + e.getMessage(), e);
        } catch (DeploymentException e) {
            deleteTree(dir);
            throw e;
        }
        return g;
    }

    private static List<Integer> freePorts(int count) throws DeploymentException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            List<Integer> ports = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(s);
                ports.add(s.getLocalPort());
            }
            return ports;
        } catch (IOException e) {
            throw new DeploymentException(Kind.UNAVAILABLE, "no free loopback port: " + e.getMessage(), e);
        } finally {
            for (ServerSocket s : held) {
                try {
                    s.close();
                } catch (IOException e) {
                    // closed anyway
                }
            }
        }
    }

    /** Starts the generation's workerd (not waiting for it) and makes it the generation's process. */
    private Process launch(String bin, Generation g) throws DeploymentException {
        ProcessBuilder pb = new ProcessBuilder(
                "/bin/sh", "-c", WATCHDOG, "atrium-workerd", bin, "serve", g.config.toString(), "--control-fd", "4");
        pb.directory(g.dir.toFile());
        g.control = g.dir.resolve("control-" + ++g.launches);
        pb.environment().put("ATRIUM_WORKERD_CONTROL", g.control.toString());
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new DeploymentException(Kind.UNAVAILABLE, "cannot start workerd: " + e.getMessage(), e);
        }
        g.ready = false;
        g.process = p;
        read(g, p);
        live.add(g);
        return p;
    }

    /**
     * Waits until workerd reports every socket listening (its control descriptor says so once the workers are loaded;
     * a socket accepts connections earlier); fails with workerd's error when it exits.
     */
    private void awaitReady(Generation g, Process p) throws DeploymentException {
        long deadline = System.nanoTime() + settings.startTimeout().toNanos();
        Path control = g.control;
        while (true) {
            if (!p.isAlive()) {
                for (Thread t : g.readers) {
                    try {
                        t.join(1000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                String text = g.errorText();
                throw new DeploymentException(
                        Kind.INVALID, text.isEmpty() ? "workerd exited with status " + p.exitValue() : text);
            }
            if (listening(control) >= g.ports.size()) {
                g.ready = true;
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new DeploymentException(
                        Kind.UNAVAILABLE,
                        "workerd did not listen within "
                                + settings.startTimeout().toSeconds() + " s");
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DeploymentException(Kind.UNAVAILABLE, "interrupted while workerd started");
            }
        }
    }

    /** How many sockets workerd's control file reports listening. */
    private static int listening(Path control) {
        try {
            if (!Files.exists(control)) {
                return 0;
            }
            Set<String> sockets = new java.util.HashSet<>();
            for (String line : Files.readAllLines(control, StandardCharsets.UTF_8)) {
                if (line.contains("\"listen\"")) {
                    try {
                        JsonNode node = JSON.readTree(line);
                        if ("listen".equals(node.path("event").asText())) {
                            sockets.add(node.path("socket").asText());
                        }
                    } catch (IOException e) {
                        // a line being written
                    }
                }
            }
            return sockets.size();
        } catch (IOException e) {
            return 0;
        }
    }

    private void exited(Generation g, Process p) {
        if (g.recordLogs && !g.retired && g.ready && !closed) {
            LOG.warn(
                    "workerd generation {} (pid {}) exited with status {}{}",
                    g.number,
                    p.pid(),
                    p.exitValue(),
                    g.errorText().isEmpty() ? "" : ": " + g.errorText());
        }
        synchronized (lock) {
            if (closed || g.retired || g.relocating || !isCurrent(g) || g.process != p) {
                if (g.retired && g.process == p) {
                    live.remove(g);
                    if (!isCurrent(g)) {
                        deleteTree(g.dir);
                    }
                }
                return;
            }
            g.ready = false;
        }
        scheduleRestart(g);
    }

    /** Restarts the live generation {@code g} after the back-off its recent restarts call for. */
    private void scheduleRestart(Generation g) {
        long delay;
        synchronized (lock) {
            long ranMillis = (System.nanoTime() - g.runningSince) / 1_000_000;
            if (ranMillis > 30_000) {
                g.restarts = 0;
            }
            delay = BACKOFF_MILLIS[Math.min(g.restarts, BACKOFF_MILLIS.length - 1)];
            g.restarts++;
            restartsSinceStart.increment();
        }
        try {
            var unused = scheduler.schedule(() -> restart(g), delay, TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            // the scheduler is shut down: closing
        }
    }

    private void restart(Generation g) {
        Process p = null;
        try {
            String bin = binary();
            synchronized (lock) {
                if (closed || g.retired || g.relocating || !isCurrent(g)) {
                    return;
                }
                g.runningSince = System.nanoTime();
                p = launch(bin, g);
            }
            awaitReady(g, p);
            LOG.info("workerd generation {} restarted (pid {}, restart {})", g.number, p.pid(), g.restarts);
        } catch (DeploymentException e) {
            LOG.warn("workerd generation {} did not restart: {}", g.number, e.getMessage());
            if (portTaken(e)) {
                g.relocating = true;
                scheduler.execute(() -> relocate(g));
            } else if (p == null) {
                scheduleRestart(g); // nothing started: try again later
            } else if (p.isAlive()) {
                stopNow(g); // its exit schedules the next attempt
            }
        }
    }

    private void killAfter(Generation g, long millis) {
        var unused = scheduler.schedule(
                () -> {
                    stopNow(g);
                    live.remove(g);
                    deleteTree(g.dir);
                },
                millis,
                TimeUnit.MILLISECONDS);
    }

    /** Stops serving {@code g}: after the drain grace SIGTERM (workerd drains), after another grace SIGKILL. */
    private void retire(Generation g) {
        if (g == null) {
            return;
        }
        g.retired = true;
        long grace = settings.drainGrace().toMillis();
        try {
            var unused = scheduler.schedule(
                    () -> {
                        Process p = g.process;
                        g.terminating = true;
                        if (p != null && p.isAlive()) {
                            p.destroy();
                            killAfter(g, Math.max(grace, 1000));
                        } else {
                            live.remove(g);
                            deleteTree(g.dir);
                        }
                    },
                    grace,
                    TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            stopNow(g);
        }
    }

    /** Kills the generation's workerd and watchdog at once and waits for them. */
    private static void stopNow(Generation g) {
        Process p = g.process;
        if (p == null) {
            return;
        }
        List<ProcessHandle> children = p.toHandle().descendants().toList();
        try {
            p.getOutputStream().close(); // the watchdog kills workerd
        } catch (IOException e) {
            // already closed
        }
        children.forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        try {
            p.waitFor(5, TimeUnit.SECONDS);
            for (ProcessHandle child : children) {
                child.onExit().get(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.warn("a workerd process did not stop in time", e);
        }
    }

    private void killAll() {
        closed = true;
        for (Generation g : live) {
            Process p = g.process;
            if (p != null) {
                p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ output

    /** Starts the readers of the generation's output. */
    private void read(Generation g, Process p) {
        g.readers = List.of(reader(g, p, p.getInputStream(), "out"), reader(g, p, p.getErrorStream(), "err"));
    }

    /**
     * Reads workerd's output line by line. It reads only what is there and otherwise waits a little, never blocking in
     * a read: a revision handing its processes over stops its readers without closing the pipes, and the next
     * revision's readers go on from there (a line being written at that moment may be split in two).
     */
    private Thread reader(Generation g, Process p, InputStream stream, String which) {
        Thread t = new Thread(
                () -> {
                    byte[] buffer = new byte[8192];
                    java.io.ByteArrayOutputStream partial = new java.io.ByteArrayOutputStream();
                    try {
                        while (!handingOver) {
                            int n = stream.available();
                            if (n <= 0) {
                                if (p.isAlive()) {
                                    Thread.sleep(25);
                                    continue;
                                }
                                n = buffer.length; // gone: what is left, then the end of the stream
                            }
                            int read = stream.read(buffer, 0, Math.min(n, buffer.length));
                            if (read < 0) {
                                break;
                            }
                            int start = 0;
                            for (int i = 0; i < read; i++) {
                                if (buffer[i] == '\n') {
                                    partial.write(buffer, start, i - start);
                                    line(g, partial.toString(StandardCharsets.UTF_8));
                                    partial.reset();
                                    start = i + 1;
                                }
                            }
                            partial.write(buffer, start, read - start);
                        }
                    } catch (IOException e) {
                        // the process is gone
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    if (partial.size() > 0 && !handingOver) {
                        line(g, partial.toString(StandardCharsets.UTF_8));
                    }
                },
                "workerd-" + g.number + "-std" + which);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * Sees processes exit. Polled rather than told by {@code Process.onExit()}: a callback there would keep this
     * revision's classes reachable for as long as a process handed to the next revision runs.
     */
    private void watch() {
        for (Generation g : live) {
            Process p = g.process;
            if (p != null && !p.isAlive() && g.exitSeen != p) {
                g.exitSeen = p;
                try {
                    exited(g, p);
                } catch (RuntimeException e) {
                    LOG.warn("handling the exit of workerd generation {} failed", g.number, e);
                }
            }
        }
    }

    /** One line workerd wrote: a structured log line ({@code {"timestamp","level","message"}}) or plain text. */
    private void line(Generation g, String raw) {
        String level = "log";
        String message = raw;
        Instant at = Instant.now();
        if (raw.startsWith("{")) {
            try {
                JsonNode node = JSON.readTree(raw);
                level = node.path("level").asText("log");
                message = node.path("message").asText("");
                long ts = node.path("timestamp").asLong(0);
                if (ts > 0) {
                    at = Instant.ofEpochMilli(ts);
                }
            } catch (IOException | RuntimeException e) {
                // not JSON after all: the plain line
            }
        }
        String d = null;
        String tag = "\u001e" + g.nonce + ":";
        if (message.startsWith(tag)) {
            int end = message.indexOf('\u001f', tag.length());
            if (end > 0) {
                try {
                    d = g.idByIndex.get(Integer.parseInt(message.substring(tag.length(), end)));
                } catch (NumberFormatException e) {
                    // not ours
                }
                message = message.substring(end + 1);
                if (message.startsWith(" ")) {
                    message = message.substring(1);
                }
            }
        } else if (message.startsWith("service w")) {
            int colon = message.indexOf(": ");
            if (colon > 0) {
                try {
                    d = g.idByIndex.get(Integer.parseInt(message.substring("service w".length(), colon)));
                    message = message.substring(colon + 2);
                } catch (NumberFormatException e) {
                    // not a worker of ours
                }
            }
        }
        if (!raw.startsWith("{") || "error".equals(level) || "warn".equals(level)) {
            g.error(message);
        }
        level = switch (level) {
            case "log", "info", "warn", "error", "debug" -> level;
            case "trace" -> "debug";
            default -> "log";
        };
        if (d != null && g.recordLogs) {
            logs.append(g.service, d, at, level, message);
        } else if (d == null && g.recordLogs) {
            LOG.debug("workerd {}: {}", g.number, message);
        }
    }

    // ------------------------------------------------------------------------------------------------ files

    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // best effort
                }
            });
        } catch (IOException | UncheckedIOException e) {
            LOG.debug("cannot delete {}", dir, e);
        }
    }
}
