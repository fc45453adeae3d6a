package dev.atrium.kernel.internal.auth;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.atrium.kernel.api.SchemaMigrations;

/**
 * What the kernel proved about a request, kept for the next one: a token's or session's Caller and a Principal's
 * workspace. Every change that can take access away (a token, session or OAuth grant revoked or deleted, a Principal
 * or workspace suspended or deleted, an owner witness changed) fires a trigger that notifies channel
 * {@value #CHANNEL}; each instance listens on it and forgets everything it holds, so a revocation on one instance is
 * seen on all within the notification's delay. An entry also ends at its token's own expiry and after a short time as
 * a backstop. Without a listening connection nothing is kept (fail closed): each request is proven against the
 * database until the listener is back, and what was kept before is forgotten.
 */
@Component(service = AccessCache.class, configurationPid = "dev.atrium.kernel.access",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = AccessCache.Config.class)
public class AccessCache {

    /**
     * How long one wait for notifications lasts: the listener notices a stop only between waits, and a bundle's stop
     * or update (and so the update gate's hold) waits for it. A wait that returns empty costs next to nothing.
     */
    private static final int LISTEN_POLL_MILLIS = 100;

    @ObjectClassDefinition(name = "Atrium access cache")
    public @interface Config {
        @AttributeDefinition(description = "Whether proofs are kept between requests at all")
        boolean enabled() default true;

        @AttributeDefinition(description = "Longest time in seconds a proof is kept without a notification")
        long ttlSeconds() default 30;

        @AttributeDefinition(description = "Most proofs kept; past it everything is forgotten and kept anew")
        int maxEntries() default 20_000;
    }

    /** The channel the access triggers notify (kernel, identity and oauth migrations). */
    public static final String CHANNEL = "atrium_access";
    /** The listener's application_name, so an operator (or a test) can find its backend. */
    public static final String LISTENER_NAME = "atrium-access-listener";

    private static final Logger LOG = LoggerFactory.getLogger(AccessCache.class);

    private record Entry(Object value, long until) {
    }

    private final boolean enabled;
    private final long ttlNanos;
    private final int maxEntries;
    private final DataSource dataSource;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    /** Bumped by every forgetting: a proof worked out before one is not kept after it. */
    private final AtomicLong generation = new AtomicLong();
    private volatile boolean listening;
    private volatile boolean running = true;
    private final Thread listener;

    @Activate
    public AccessCache(Config config, @Reference DataSource dataSource, @Reference SchemaMigrations migrated) {
        this.enabled = config.enabled();
        this.ttlNanos = TimeUnit.SECONDS.toNanos(Math.max(1, config.ttlSeconds()));
        this.maxEntries = Math.max(100, config.maxEntries());
        this.dataSource = dataSource;
        this.listener = new Thread(this::listen, "atrium-access-listener");
        this.listener.setDaemon(true);
        if (enabled) {
            listener.start();
        }
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        running = false;
        listening = false;
        // the listener sees the flag at its next poll, within 100 ms (a stop or update waits for it)
        listener.interrupt();
        listener.join(5_000);
        entries.clear();
    }

    /**
     * The proof kept under {@code key}, or the one {@code prove} works out now (kept until {@code expiresAt} of it, the
     * TTL or the next notification, whichever comes first). Failures are never kept.
     */
    public <T> T get(String key, Supplier<T> prove, Function<T, Instant> expiresAt) {
        if (!listening) {
            return prove.get();
        }
        long now = System.nanoTime();
        Entry e = entries.get(key);
        if (e != null && now - e.until() < 0) {
            @SuppressWarnings("unchecked")
            T kept = (T) e.value();
            return kept;
        }
        long seen = generation.get();
        T value = prove.get();
        if (value == null) {
            return null;
        }
        long until = now + ttlNanos;
        Instant ends = expiresAt.apply(value);
        if (ends != null) {
            long left = Duration.between(Instant.now(), ends).toNanos();
            until = Math.min(until, now + left);
        }
        if (until - now > 0 && listening) {
            if (entries.size() >= maxEntries) {
                entries.clear();
            }
            entries.put(key, new Entry(value, until));
            // forgotten meanwhile: what was worked out before the forgetting must not outlive it
            if (generation.get() != seen) {
                entries.remove(key);
            }
        }
        return value;
    }

    /** Forgets everything: what a notification, a lost listener or a change this instance made calls for. */
    public void forgetAll() {
        generation.incrementAndGet();
        entries.clear();
    }

    private void listen() {
        while (running) {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(true);
                try (Statement st = c.createStatement()) {
                    st.execute("SET application_name = '" + LISTENER_NAME + "'");
                    st.execute("LISTEN " + CHANNEL);
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                // whatever changed while no one listened: start from nothing
                forgetAll();
                listening = true;
                try {
                    while (running) {
                        PGNotification[] ns = pg.getNotifications(LISTEN_POLL_MILLIS);
                        if (ns != null && ns.length > 0) {
                            forgetAll();
                        }
                    }
                } finally {
                    listening = false;
                    forgetAll();
                    try (Statement st = c.createStatement()) {
                        st.execute("UNLISTEN *");
                        st.execute("RESET application_name");
                    } catch (SQLException ignored) {
                        // the connection is going away anyway
                    }
                }
            } catch (SQLException | RuntimeException e) {
                listening = false;
                forgetAll();
                if (running) {
                    LOG.warn("the access listener lost its connection; proving every request against the database until it is back: {}",
                            e.toString());
                    try {
                        Thread.sleep(500);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        }
    }
}
