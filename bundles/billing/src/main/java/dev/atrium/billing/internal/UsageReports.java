package dev.atrium.billing.internal;

import dev.atrium.billing.api.BillingProvider;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.Sql;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Aggregates usage events per hour and reports them to the provider exactly once. One transaction marks events
 * aggregated, adds them to the hourly aggregate and writes what is owed as report rows, each with a key made then. A
 * report is sent with its key until the provider took it; a crash after the provider took it and before the row says
 * so sends it again with the same key, which the provider counts once.
 */
@Component(service = UsageReports.class, immediate = true)
public class UsageReports {

    private static final Logger LOG = LoggerFactory.getLogger(UsageReports.class);
    private static final String HOUR = "(date_trunc('hour', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')";
    /** Events aggregated in one transaction at most; the rest wait for the next round. */
    private static final int BATCH = 50_000;

    private final Sql sql;
    private final BillingSettings settings;
    private final ProviderChoice choice;
    private final Accounts accounts;
    private final ScheduledExecutorService aggregator;
    private final ScheduledExecutorService reporter;

    private record Owed(long id, String key, String principalId, String meter, Instant hour, long quantity) {}

    @Activate
    public UsageReports(
            @Reference DataSource dataSource,
            @Reference BillingSettings settings,
            @Reference ProviderChoice choice,
            @Reference Accounts accounts) {
        this.sql = new Sql(dataSource);
        this.settings = settings;
        this.choice = choice;
        this.accounts = accounts;
        aggregator = NamedThreads.scheduler("billing-aggregate");
        reporter = NamedThreads.scheduler("billing-report");
        NamedThreads.repeat(
                aggregator, this::aggregate, Duration.ofSeconds(1), Duration.ofSeconds(settings.aggregateSeconds));
        NamedThreads.repeat(reporter, this::report, Duration.ofSeconds(2), Duration.ofSeconds(settings.reportSeconds));
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        aggregator.shutdownNow();
        reporter.shutdownNow();
        aggregator.awaitTermination(10, TimeUnit.SECONDS);
        reporter.awaitTermination(10, TimeUnit.SECONDS);
    }

    /** One round of aggregation; the number of events it took. */
    int aggregate() {
        boolean owed = settings.billing();
        return sql.tx(c -> {
            // one aggregator at a time across instances; the others find nothing left
            Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtext('atrium_billing_aggregate'))");
            return Sql.one(
                            c,
                            "WITH moved AS (UPDATE billing_usage_events SET aggregated = true"
                                    + " WHERE idempotency_key IN (SELECT idempotency_key FROM billing_usage_events"
                                    + " WHERE NOT aggregated LIMIT " + BATCH + " FOR UPDATE SKIP LOCKED)"
                                    + " RETURNING principal_id, space_id, meter, dimension, " + HOUR
                                    + " AS hour, quantity),"
                                    + " hours AS (INSERT INTO billing_usage_hours AS h"
                                    + " (principal_id, space_id, meter, dimension, hour, quantity)"
                                    + " SELECT principal_id, space_id, meter, dimension, hour, sum(quantity) FROM moved"
                                    + " GROUP BY 1, 2, 3, 4, 5"
                                    + " ON CONFLICT (principal_id, hour, meter, space_id, dimension)"
                                    + " DO UPDATE SET quantity = h.quantity + excluded.quantity RETURNING 1),"
                                    + " owed AS (INSERT INTO billing_usage_reports (principal_id, meter, hour, quantity)"
                                    + " SELECT principal_id, meter, hour, sum(quantity) FROM moved WHERE ?"
                                    + " GROUP BY 1, 2, 3 HAVING sum(quantity) > 0 RETURNING 1)"
                                    + " SELECT count(*) FROM moved",
                            rs -> rs.getInt(1),
                            owed)
                    .orElse(0);
        });
    }

    /** Sends what is owed, oldest first; the number of reports the provider took. */
    int report() {
        Optional<BillingProvider> provider = choice.active();
        if (provider.isEmpty()) {
            return 0;
        }
        int sent = 0;
        List<Owed> owed = sql.list(
                "SELECT id, idempotency_key, principal_id, meter, hour, quantity FROM billing_usage_reports"
                        + " WHERE sent_at IS NULL ORDER BY id LIMIT 500",
                rs -> new Owed(
                        rs.getLong("id"),
                        rs.getString("idempotency_key"),
                        rs.getString("principal_id"),
                        rs.getString("meter"),
                        Sql.instant(rs, "hour"),
                        rs.getLong("quantity")));
        java.util.Set<String> failing = new java.util.HashSet<>();
        for (Owed o : owed) {
            if (Thread.currentThread().isInterrupted()) {
                break;
            }
            if (failing.contains(o.meter())) {
                continue; // this meter's reports keep their order: the next round tries its oldest again
            }
            Optional<String> customer =
                    accounts.of(o.principalId(), provider.get().name()).map(Accounts.Account::customerId);
            if (customer.isEmpty()) {
                // never billed: the Principal had no customer at the provider when the usage happened
                sql.update(
                        "UPDATE billing_usage_reports SET sent_at = now(), outcome = 'no_customer' WHERE id = ?",
                        o.id());
                continue;
            }
            Instant at = o.hour().isAfter(Instant.now()) ? Instant.now() : o.hour();
            try {
                provider.get().reportUsage(customer.get(), o.meter(), o.quantity(), at, o.key());
                sql.update(
                        "UPDATE billing_usage_reports SET sent_at = now(), outcome = 'reported',"
                                + " attempts = attempts + 1, last_error = NULL WHERE id = ?",
                        o.id());
                sent++;
            } catch (IOException e) {
                sql.update(
                        "UPDATE billing_usage_reports SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                        String.valueOf(e.getMessage()),
                        o.id());
                LOG.warn(
                        "usage report {} was not taken by {}: {}",
                        o.id(),
                        provider.get().name(),
                        e.getMessage());
                // one meter the provider refuses (say, it has no meter of that event name) holds up no other
                failing.add(o.meter());
            }
        }
        return sent;
    }
}
