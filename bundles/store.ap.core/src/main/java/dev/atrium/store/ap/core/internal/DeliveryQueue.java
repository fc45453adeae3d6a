package dev.atrium.store.ap.core.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.Sql;
import dev.atrium.store.ap.api.ActivityMedia;
import dev.atrium.store.ap.api.Deliveries;
import dev.atrium.store.ap.api.HttpSignatures;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.http.HttpMethod;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outgoing queue in {@code ap_deliveries}. A poller claims due rows ({@code FOR UPDATE SKIP LOCKED}, pushing their
 * next attempt past a lease, so another instance skips them and a crash mid-send only delays them) and POSTs each,
 * signed, through the guarded client. A 2xx delivers it; a refusal that will not change (4xx other than 408 and 429)
 * makes it a dead letter at once; anything else (the peer down, 5xx, a timeout) is tried again after
 * {@code backoffBaseSeconds · 2^(attempt-1)} (±10%, at most {@code backoffMaxSeconds}), and after {@code maxAttempts}
 * it is a dead letter, listed at {@code GET /admin/federation/deliveries?state=dead} and sent again on
 * {@code POST …/:id/retry}.
 */
@Component(
        service = {Deliveries.class, DeliveryQueue.class},
        configurationPid = "dev.atrium.store.ap.deliveries")
@Designate(ocd = DeliveryQueue.Config.class)
public class DeliveryQueue implements Deliveries {

    @ObjectClassDefinition(name = "Atrium federation deliveries")
    public @interface Config {
        @AttributeDefinition(description = "Attempts before a delivery becomes a dead letter")
        int maxAttempts() default 8;

        @AttributeDefinition(description = "Wait before the second attempt, in seconds; doubled for each later one")
        double backoffBaseSeconds() default 30;

        @AttributeDefinition(description = "Longest wait between attempts, in seconds")
        double backoffMaxSeconds() default 21_600;

        @AttributeDefinition(description = "How often the queue is polled for due deliveries, in milliseconds")
        long pollMillis() default 1000;

        @AttributeDefinition(description = "Deliveries sent at once by this instance")
        int senders() default 4;
    }

    private static final Logger LOG = LoggerFactory.getLogger(DeliveryQueue.class);
    /** How long a claimed delivery is hidden from other senders; longer than any send may take. */
    private static final long LEASE_SECONDS = 120;

    private static final int MAX_ERROR_CHARS = 500;

    private final Sql sql;
    private final GuardedFetcher http;
    private final HttpSignatures signatures;
    private final Config config;
    private final ScheduledExecutorService poller;
    private final ExecutorService senders;
    /** Claimed deliveries not yet finished: at most {@link #capacity()}, so a claimed row is sent long before its lease ends. */
    private final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
    /** A poll is queued on the poller already: wake-ups in the meantime are folded into it. */
    private final java.util.concurrent.atomic.AtomicBoolean pollQueued =
            new java.util.concurrent.atomic.AtomicBoolean();

    @Activate
    public DeliveryQueue(
            @Reference DataSource dataSource,
            @Reference GuardedFetcher http,
            @Reference HttpSignatures signatures,
            Config config) {
        this.sql = new Sql(dataSource);
        this.http = http;
        this.signatures = signatures;
        this.config = config;
        this.poller = NamedThreads.scheduler("atrium-ap-delivery-poll");
        this.senders =
                Executors.newFixedThreadPool(Math.max(1, config.senders()), NamedThreads.factory("atrium-ap-delivery"));
        NamedThreads.repeat(
                poller,
                this::pollQuietly,
                Duration.ofMillis(config.pollMillis()),
                Duration.ofMillis(Math.max(10, config.pollMillis())));
    }

    @Deactivate
    void stop() throws InterruptedException {
        poller.shutdownNow();
        senders.shutdownNow();
        poller.awaitTermination(10, TimeUnit.SECONDS);
        senders.awaitTermination(10, TimeUnit.SECONDS);
    }

    @Override
    public String enqueue(String actorUri, URI inbox, byte[] activity) {
        String id = Ids.id("dlv");
        sql.update(
                "INSERT INTO ap_deliveries (id, actor_uri, inbox, body) VALUES (?, ?, ?, ?)",
                id,
                actorUri,
                inbox.toString(),
                activity);
        wake(); // now, not at the next tick
        return id;
    }

    /** Polls soon: at once when no poll is queued yet, else within the one that is. */
    private void wake() {
        if (pollQueued.compareAndSet(false, true)) {
            try {
                poller.execute(() -> {
                    pollQueued.set(false);
                    pollQuietly();
                });
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                pollQueued.set(false); // stopping: the rows wait for the next start or another instance
            }
        }
    }

    private int capacity() {
        return Math.max(1, config.senders()) * 4;
    }

    private void pollQuietly() {
        try {
            poll();
        } catch (RuntimeException e) {
            LOG.warn("federation: the delivery queue could not be read: {}", e.toString());
        }
    }

    /**
     * Claims what is due, as many as the senders have room for (four each), and sends them; returns how many were
     * claimed. Never more: rows claimed but waiting behind a long backlog would outlive their lease and be claimed and
     * sent a second time.
     */
    int poll() {
        record Claimed(String id, String actor, String inbox, byte[] body, int attempt) {}
        int room = capacity() - inFlight.get();
        if (room <= 0) {
            return 0; // a finishing send wakes the poller again
        }
        List<Claimed> due = sql.list(
                "UPDATE ap_deliveries SET next_attempt_at = now() + make_interval(secs => ?), attempts = attempts + 1"
                        + " WHERE id IN (SELECT id FROM ap_deliveries WHERE state = 'pending' AND next_attempt_at <= now()"
                        + " ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED) RETURNING id, actor_uri, inbox, body, attempts",
                rs -> new Claimed(rs.getString(1), rs.getString(2), rs.getString(3), rs.getBytes(4), rs.getInt(5)),
                (double) LEASE_SECONDS,
                room);
        inFlight.addAndGet(due.size());
        for (Claimed c : due) {
            try {
                senders.execute(() -> {
                    try {
                        send(c.id(), c.actor(), c.inbox(), c.body(), c.attempt());
                    } finally {
                        inFlight.decrementAndGet();
                        wake();
                    }
                });
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                inFlight.decrementAndGet(); // stopping: the lease lapses and the row is sent again
            }
        }
        return due.size();
    }

    private void send(String id, String actor, String inbox, byte[] body, int attempt) {
        Integer status = null;
        String error;
        try {
            URI target = new URI(inbox);
            http.checkAllowed(target);
            Map<String, String> signed = signatures.sign(actor, "POST", target, body);
            Request request = http.client()
                    .newRequest(target)
                    .method(HttpMethod.POST)
                    .timeout(TimeUnit.NANOSECONDS.toMillis(http.timeoutNanos()), TimeUnit.MILLISECONDS)
                    .body(new BytesRequestContent(ActivityMedia.ACTIVITY_JSON, body))
                    .headers(h -> signed.forEach((name, value) -> {
                        if (!name.equals("Host")) {
                            h.put(name, value);
                        }
                    }));
            ContentResponse response = request.send();
            status = response.getStatus();
            if (status / 100 == 2) {
                sql.update(
                        "UPDATE ap_deliveries SET state = 'delivered', last_status = ?, last_error = NULL, finished_at = now() WHERE id = ?",
                        status,
                        id);
                return;
            }
            error = inbox + " answered " + status;
            if (status / 100 == 4 && status != 408 && status != 429) {
                dead(id, status, error + " (a refusal: not tried again)");
                return;
            }
        } catch (URISyntaxException e) {
            dead(id, null, "the inbox is not a URL: " + inbox);
            return;
        } catch (dev.atrium.store.ap.api.RemoteDocuments.RemoteException e) {
            // the guard refuses the inbox's address: that will not change by waiting
            dead(id, null, e.getMessage());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return; // stopping: the lease lapses and the row is sent again
        } catch (TimeoutException e) {
            error = inbox + " did not answer within " + TimeUnit.NANOSECONDS.toSeconds(http.timeoutNanos()) + " s";
        } catch (ExecutionException | RuntimeException e) {
            EgressGuard.Refused refused = EgressGuard.Refused.in(e);
            if (refused != null || e instanceof ApiException) {
                error = "refused: " + (refused != null ? refused.getMessage() : e.getMessage());
            } else {
                Throwable cause = e.getCause() == null ? e : e.getCause();
                error = inbox + " could not be reached: " + cause.getMessage();
            }
        }
        retryOrDie(id, status, error, attempt);
    }

    private void retryOrDie(String id, Integer status, String error, int attempt) {
        if (attempt >= config.maxAttempts()) {
            dead(id, status, error + " (attempt " + attempt + " of " + config.maxAttempts() + ")");
            return;
        }
        double wait = Math.min(config.backoffMaxSeconds(), config.backoffBaseSeconds() * Math.pow(2, attempt - 1));
        wait *= 0.9 + 0.2 * ThreadLocalRandom.current().nextDouble();
        sql.update(
                "UPDATE ap_deliveries SET next_attempt_at = now() + make_interval(secs => ?), last_status = ?, last_error = ? WHERE id = ?",
                wait,
                status,
                clip(error),
                id);
    }

    private void dead(String id, Integer status, String error) {
        sql.update(
                "UPDATE ap_deliveries SET state = 'dead', last_status = ?, last_error = ?, finished_at = now() WHERE id = ?",
                status,
                clip(error),
                id);
        LOG.info("federation: delivery {} is a dead letter: {}", id, error);
    }

    private static String clip(String s) {
        return s == null || s.length() <= MAX_ERROR_CHARS ? s : s.substring(0, MAX_ERROR_CHARS);
    }

    /** Deliveries in {@code state} (or all), newest first. */
    List<Map<String, Object>> list(String state, int limit) {
        return sql.list(
                "SELECT id, actor_uri, inbox, state, attempts, next_attempt_at, last_status, last_error, created_at, finished_at"
                        + " FROM ap_deliveries" + (state == null ? "" : " WHERE state = ?")
                        + " ORDER BY created_at DESC, id LIMIT ?",
                rs -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("id", rs.getString("id"));
                    m.put("actor", rs.getString("actor_uri"));
                    m.put("inbox", rs.getString("inbox"));
                    m.put("state", rs.getString("state"));
                    m.put("attempts", rs.getInt("attempts"));
                    Instant next = Sql.instant(rs, "next_attempt_at");
                    m.put(
                            "next_attempt_at",
                            "pending".equals(rs.getString("state")) && next != null ? next.toString() : null);
                    int lastStatus = rs.getInt("last_status");
                    m.put("last_status", rs.wasNull() ? null : lastStatus);
                    m.put("last_error", rs.getString("last_error"));
                    m.put("created_at", Sql.instant(rs, "created_at").toString());
                    Instant finished = Sql.instant(rs, "finished_at");
                    m.put("finished_at", finished == null ? null : finished.toString());
                    return m;
                },
                state == null ? new Object[] {limit} : new Object[] {state, limit});
    }

    /** A dead letter queued again from its first attempt; false when {@code id} is no dead letter. */
    boolean retry(String id) {
        boolean again = sql.update(
                        "UPDATE ap_deliveries SET state = 'pending', attempts = 0, next_attempt_at = now(), finished_at = NULL"
                                + " WHERE id = ? AND state = 'dead'",
                        id)
                == 1;
        if (again) {
            wake();
        }
        return again;
    }

    boolean exists(String id) {
        return sql.count("SELECT count(*) FROM ap_deliveries WHERE id = ?", id) > 0;
    }
}
