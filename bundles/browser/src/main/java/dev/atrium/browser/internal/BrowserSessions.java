package dev.atrium.browser.internal;

import dev.atrium.billing.api.BillingGate;
import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageEvent;
import dev.atrium.billing.api.UsageRecorder;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.NamedThreads;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
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
 * The browser sessions of this server, in memory: a session lives in the server that started it and ends with it
 * (a second server behind the same database does not know it; its id is 404 there). Starts them under a per-Principal
 * and a server-wide cap, ends them on {@code DELETE}, after their idle timeout, when Chromium dies, and all of them when
 * this bundle stops (an update or uninstall leaves no Chromium and no profile behind).
 */
@Component(
        service = BrowserSessions.class,
        configurationPid = "dev.atrium.browser",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = BrowserSessions.Config.class)
public class BrowserSessions {

    private static final Logger LOG = LoggerFactory.getLogger(BrowserSessions.class);

    @ObjectClassDefinition(name = "Atrium browser sessions")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "The data directory (--data, ATRIUM_DATA); sessions' profiles live in its browser-sessions/")
        String dataDirectory() default "data";

        @AttributeDefinition(description = "The Chromium binary (ATRIUM_BROWSER_CHROMIUM, else CHROMIUM)")
        String chromium() default "/usr/bin/chromium";

        @AttributeDefinition(
                description = "Seconds a session may stay unused before it ends, and the most a create may ask for"
                        + " (ATRIUM_BROWSER_IDLE_SECONDS)")
        int idleSeconds() default 300;

        @AttributeDefinition(description = "Sessions this server runs at once (ATRIUM_BROWSER_MAX_SESSIONS)")
        int maxSessions() default 4;

        @AttributeDefinition(
                description = "Sessions one Principal has at once (ATRIUM_BROWSER_MAX_SESSIONS_PER_PRINCIPAL)")
        int maxSessionsPerPrincipal() default 2;

        @AttributeDefinition(
                description = "V8 heap of each page's renderer in MiB, --max-old-space-size (ATRIUM_BROWSER_HEAP_MB)")
        int heapMb() default 512;

        @AttributeDefinition(description = "Seconds Chromium has to open its DevTools port")
        int startTimeoutSeconds() default 20;

        @AttributeDefinition(
                description = "For tests only: loopback ports pages may reach while the egress guard allows loopback"
                        + " (ATRIUM_BROWSER_LOOPBACK_PORTS, comma-separated); every other loopback port is refused")
        String loopbackPorts() default "";
    }

    static final int MIN_SIDE = 100;
    static final int MAX_WIDTH = 3840;
    static final int MAX_HEIGHT = 2160;
    private static final String NOT_FOUND = "browser session not found";

    private final Map<String, BrowserSession> sessions = new ConcurrentHashMap<>();
    /** Sessions being started, by Principal: counted against the caps before Chromium is up. */
    private final Map<String, Integer> starting = new ConcurrentHashMap<>();

    private final Object caps = new Object();
    private final Path root;
    private final String binary;
    private final Duration idle;
    private final int maxSessions;
    private final int maxPerPrincipal;
    private final int heapMb;
    private final Duration startTimeout;
    private final RequestPolicy policy;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ScheduledExecutorService reaper = NamedThreads.scheduler("browser-sessions-reaper");
    private final Map<String, ExecutorService> eventThreads = new ConcurrentHashMap<>();
    private final java.util.concurrent.ScheduledFuture<?> reaping;
    private volatile boolean stopping;

    /** Where the minutes of sessions are counted; absent while billing is not installed. */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile UsageRecorder usage;

    /** Asked before a session starts; absent while billing is not installed (everything is allowed). */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile BillingGate gate;

    @Activate
    public BrowserSessions(Config config, @Reference EgressGuard guard) {
        this.root = Path.of(config.dataDirectory()).toAbsolutePath().resolve("browser-sessions");
        this.binary = config.chromium().isBlank()
                ? "/usr/bin/chromium"
                : config.chromium().trim();
        this.idle = Duration.ofSeconds(Math.max(1, config.idleSeconds()));
        this.maxSessions = Math.max(1, config.maxSessions());
        this.maxPerPrincipal = Math.max(1, config.maxSessionsPerPrincipal());
        this.heapMb = Math.max(0, config.heapMb());
        this.startTimeout = Duration.ofSeconds(Math.max(1, config.startTimeoutSeconds()));
        this.policy = new RequestPolicy(guard, RequestPolicy.ports(config.loopbackPorts()));
        sweepProfiles();
        this.reaping = reaper.scheduleWithFixedDelay(this::reapIdle, 1, 1, TimeUnit.SECONDS);
    }

    /** Profiles a crashed or killed server left: no session of this server can own them. */
    private void sweepProfiles() {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> left = Files.list(root)) {
            left.forEach(Chromium::deleteTree);
        } catch (IOException e) {
            LOG.warn("cannot list {} to remove old browser profiles: {}", root, e.toString());
        }
    }

    Duration maxIdle() {
        return idle;
    }

    /**
     * Starts a session for {@code principalId} in {@code spaceId} (proven by the caller); 429 past a cap, with the
     * seconds until a session of the Principal (or any) would end idle.
     */
    BrowserSession start(String principalId, String spaceId, int width, int height, Duration idleTimeout)
            throws CapReached {
        BillingGate g = gate;
        if (g != null) {
            BillingGate.Decision d = g.check(spaceId, Meters.BROWSER_MINUTES);
            if (!d.allowed()) {
                throw new ApiException(402, "PAYMENT_REQUIRED", d.reason());
            }
        }
        reserve(principalId);
        String id = Ids.id("bs");
        Path profile = root.resolve(id);
        Chromium chromium = null;
        EgressProxy proxy = null;
        ExecutorService events = Executors.newSingleThreadExecutor(NamedThreads.factory("browser-session-" + id));
        try {
            proxy = new EgressProxy(policy, id);
            chromium = Chromium.start(binary, profile, heapMb, width, height, proxy.port(), startTimeout);
            Cdp cdp = Cdp.connect(http, chromium.devtools, events, startTimeout);
            BrowserSession session = new BrowserSession(
                    id, principalId, spaceId, width, height, idleTimeout, chromium, proxy, cdp, policy);
            try {
                session.open();
            } catch (IOException | RuntimeException e) {
                session.close();
                throw e;
            }
            eventThreads.put(id, events);
            sessions.put(id, session);
            endWhenExited(id, chromium.process);
            if (stopping) {
                end(id, "the server is stopping");
                throw ApiException.unavailable("the browser sessions are stopping");
            }
            LOG.info(
                    "browser session {} started for {} in {} (Chromium pid {})",
                    id,
                    principalId,
                    spaceId,
                    chromium.pid());
            return session;
        } catch (IOException e) {
            if (chromium != null) {
                chromium.close();
            }
            if (proxy != null) {
                proxy.close();
            }
            events.shutdownNow();
            LOG.warn("browser session {} could not start: {}", id, e.getMessage());
            throw ApiException.unavailable("the browser could not start: " + e.getMessage());
        } catch (RuntimeException e) {
            if (chromium != null) {
                chromium.close();
            }
            if (proxy != null) {
                proxy.close();
            }
            events.shutdownNow();
            throw e;
        } finally {
            release(principalId);
        }
    }

    /** A Chromium that dies (a crash, the OOM killer) ends its session at once rather than at the next sweep. */
    @SuppressWarnings("FutureReturnValueIgnored")
    private void endWhenExited(String id, Process process) {
        process.onExit().thenRun(() -> end(id, "Chromium exited"));
    }

    /** Refused start: past the Principal's or the server's cap. */
    static final class CapReached extends Exception {
        private static final long serialVersionUID = 1L;
        final long retryAfterSeconds;

        CapReached(String message, long retryAfterSeconds) {
            super(message);
            this.retryAfterSeconds = retryAfterSeconds;
        }
    }

    private void reserve(String principalId) throws CapReached {
        synchronized (caps) {
            if (stopping) {
                throw ApiException.unavailable("the browser sessions are stopping");
            }
            List<BrowserSession> own = sessions.values().stream()
                    .filter(s -> s.principalId.equals(principalId))
                    .toList();
            int ownStarting = starting.getOrDefault(principalId, 0);
            if (own.size() + ownStarting >= maxPerPrincipal) {
                throw new CapReached(
                        "at most " + maxPerPrincipal + " browser sessions per Principal at once; end one first",
                        soonestIdle(own));
            }
            int startingAll =
                    starting.values().stream().mapToInt(Integer::intValue).sum();
            if (sessions.size() + startingAll >= maxSessions) {
                throw new CapReached(
                        "this server runs at most " + maxSessions + " browser sessions at once; try again later",
                        soonestIdle(List.copyOf(sessions.values())));
            }
            starting.merge(principalId, 1, Integer::sum);
        }
    }

    private void release(String principalId) {
        synchronized (caps) {
            starting.computeIfPresent(principalId, (k, n) -> n <= 1 ? null : n - 1);
        }
    }

    private static long soonestIdle(List<BrowserSession> among) {
        return among.stream().mapToLong(BrowserSession::secondsUntilIdle).min().orElse(5);
    }

    /** A live session by id, whoever owns it: the resource proves the owner through the kernel before using it. */
    Optional<BrowserSession> find(String id) {
        BrowserSession s = id == null ? null : sessions.get(id);
        if (s != null && s.endClaimed()) {
            s.awaitClosed(Duration.ofSeconds(10));
            return Optional.empty();
        }
        return s == null || !s.alive() ? Optional.empty() : Optional.of(s);
    }

    BrowserSession require(String id) {
        return find(id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
    }

    static ApiException notFound() {
        return ApiException.notFound(NOT_FOUND);
    }

    /** Ends a session: Chromium's process tree and the profile are gone when this returns. */
    boolean end(String id, String why) {
        BrowserSession session = sessions.get(id);
        if (session == null || !session.claimEnd()) {
            return false;
        }
        try {
            session.close();
        } finally {
            // out of the map only now: until Chromium is gone the session counts against the caps
            sessions.remove(id);
            ExecutorService events = eventThreads.remove(id);
            if (events != null) {
                events.shutdownNow();
            }
        }
        double minutes =
                Duration.between(session.createdAt, java.time.Instant.now()).toMillis() / 60_000.0;
        LOG.info("browser session {} ended ({}) after {} min", id, why, String.format("%.2f", minutes));
        sessionEnded(id, session.spaceId, minutes);
        return true;
    }

    /**
     * Counts a session's minutes, rounded up, once for every session that ends, however it ends (DELETE, idle, crash,
     * bundle stop); the session's id is the event's key.
     */
    void sessionEnded(String sessionId, String spaceId, double minutes) {
        UsageRecorder recorder = usage;
        if (recorder != null) {
            recorder.record(new UsageEvent(
                    spaceId,
                    Meters.BROWSER_MINUTES,
                    "",
                    Math.max(1, (long) Math.ceil(minutes)),
                    "browser-session:" + sessionId,
                    java.time.Instant.now()));
        }
    }

    private void reapIdle() {
        long now = System.nanoTime();
        for (BrowserSession s : List.copyOf(sessions.values())) {
            try {
                if (!s.alive()) {
                    end(s.id, "Chromium is gone");
                } else if (s.idle(now)) {
                    end(s.id, "idle for " + s.idleTimeout.toSeconds() + " s");
                }
            } catch (RuntimeException e) {
                LOG.warn("cannot end browser session {}", s.id, e);
            }
        }
    }

    @Deactivate
    void deactivate() {
        synchronized (caps) {
            stopping = true;
        }
        reaping.cancel(false);
        reaper.shutdownNow();
        List<String> ids = new ArrayList<>(sessions.keySet());
        for (String id : ids) {
            try {
                end(id, "the bundle stops");
            } catch (RuntimeException e) {
                LOG.warn("cannot end browser session {} at stop", id, e);
            }
        }
        sweepProfiles();
    }
}
