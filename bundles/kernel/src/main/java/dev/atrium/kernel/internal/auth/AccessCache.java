package dev.atrium.kernel.internal.auth;

import dev.atrium.kernel.api.DatabaseChannels;
import dev.atrium.kernel.api.SchemaMigrations;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the kernel proved about a request, kept for the next one: a token's or session's Caller and a Principal's
 * workspace. Every change that can take access away (a token, session or OAuth grant revoked or deleted, a Principal
 * or workspace suspended or deleted, an owner witness changed) fires a trigger that notifies channel
 * {@value #CHANNEL}; each instance listens on it ({@link DatabaseChannels}) and forgets everything it holds, so a
 * revocation on one instance is seen on all within the notification's delay. An entry also ends at its token's own
 * expiry and after a short time as a backstop. Without a listening connection nothing is kept (fail closed): each
 * request is proven against the database until the listener is back, and what was kept before is forgotten.
 */
@Component(
        service = AccessCache.class,
        configurationPid = "dev.atrium.kernel.access",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = AccessCache.Config.class)
public class AccessCache {

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

    private static final Logger LOG = LoggerFactory.getLogger(AccessCache.class);

    private record Entry(Object value, long until) {}

    private final boolean enabled;
    private final long ttlNanos;
    private final int maxEntries;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    /** Bumped by every forgetting: a proof worked out before one is not kept after it. */
    private final AtomicLong generation = new AtomicLong();

    private volatile boolean listening;
    private final DatabaseChannels.Subscription subscription;

    @Activate
    public AccessCache(Config config, @Reference DatabaseChannels channels, @Reference SchemaMigrations migrated) {
        this.enabled = config.enabled();
        this.ttlNanos = TimeUnit.SECONDS.toNanos(Math.max(1, config.ttlSeconds()));
        this.maxEntries = Math.max(100, config.maxEntries());
        this.subscription = enabled
                ? channels.listen(CHANNEL, new DatabaseChannels.Listener() {
                    @Override
                    public void listening() {
                        // whatever changed while no one listened: start from nothing
                        forgetAll();
                        listening = true;
                    }

                    @Override
                    public void notified(String payload) {
                        forgetAll();
                    }

                    @Override
                    public void deaf() {
                        listening = false;
                        forgetAll();
                        LOG.warn(
                                "the access cache hears no revocations; proving every request against the database until it does");
                    }
                })
                : null;
    }

    @Deactivate
    void deactivate() {
        listening = false;
        if (subscription != null) {
            subscription.close();
        }
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
}
