package dev.atrium.resource.queue.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.resource.api.ConfigSchema;
import dev.atrium.resource.api.QueueFacet;
import dev.atrium.resource.api.QueueLimits;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * queue resources in one PostgreSQL table, rows kept apart by resource id. A receive takes the oldest ready rows with
 * {@code SELECT … FOR UPDATE SKIP LOCKED} (concurrent consumers never wait on, nor take, each other's rows), hides
 * them until {@code now() + visibility timeout} and gives each a fresh receipt; an ack deletes the row only while that
 * receipt is current and unexpired. A message whose last allowed delivery expired is marked dead rather than delivered
 * again. All times are the database's clock, so consumers on several servers agree.
 *
 * <p>Order: ready messages are delivered oldest first (by send order); a message whose visibility timeout passed
 * keeps its place and comes again before younger ones.
 */
@Component(service = ResourceProvider.class)
@ResourceProviderType(type = "queue", backend = "postgres")
public class PostgresQueue implements ResourceProvider, QueueFacet {

    private final Sql sql;

    @Activate
    public PostgresQueue(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    @Override
    public ConfigSchema configSchema() {
        return QueueLimits.SCHEMA;
    }

    @Override
    public void update(ResourceContext ctx, Map<String, Object> newConfig) {
        // both fields are read on every call: a change applies to the next receive
    }

    @Override
    public void deprovision(ResourceContext ctx) throws ResourceException {
        run(() -> sql.update("DELETE FROM resource_queue_messages WHERE resource_id = ?", ctx.resourceId()));
    }

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) {
        return Map.of("backend", "postgres");
    }

    @Override
    public Health health(ResourceContext ctx) {
        try {
            sql.count("SELECT 1");
            return Health.ok();
        } catch (RuntimeException e) {
            return Health.failing("PostgreSQL does not answer");
        }
    }

    @Override
    public String send(ResourceContext ctx, byte[] body, Duration delay) throws ResourceException {
        QueueLimits.checkBody(ctx, body);
        long delayMillis = QueueLimits.checkDelay(delay);
        ctx.usage().admit("writes");
        long id = run(() -> sql.one(
                        "INSERT INTO resource_queue_messages (resource_id, body, visible_at) VALUES (?, ?, now() + ? * interval '1 millisecond')"
                                + " RETURNING id",
                        rs -> rs.getLong(1),
                        ctx.resourceId(),
                        body,
                        delayMillis)
                .orElseThrow());
        ctx.usage().record("writes", 1);
        return Long.toString(id);
    }

    @Override
    public List<QueueMessage> receive(ResourceContext ctx, int max, Duration visibilityTimeout)
            throws ResourceException {
        QueueLimits.checkMax(max);
        long hideMillis = QueueLimits.checkVisibility(visibilityTimeout);
        int maxDeliveries = QueueLimits.maxDeliveries(ctx);
        List<QueueMessage> messages = run(() -> sql.tx(c -> {
            bury(c, ctx.resourceId(), maxDeliveries);
            return Sql.list(
                    c,
                    "WITH picked AS (SELECT id FROM resource_queue_messages WHERE resource_id = ? AND dead_at IS NULL"
                            + " AND visible_at <= now() AND attempts < ? ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)"
                            + " UPDATE resource_queue_messages m SET attempts = m.attempts + 1, receipt = gen_random_uuid(),"
                            + " visible_at = now() + ? * interval '1 millisecond' FROM picked WHERE m.id = picked.id"
                            + " RETURNING m.id, m.body, m.receipt, m.attempts, m.enqueued_at",
                    rs -> new QueueMessage(
                            Long.toString(rs.getLong(1)),
                            rs.getBytes(2),
                            rs.getString(3),
                            rs.getInt(4),
                            Sql.instant(rs, "enqueued_at")),
                    ctx.resourceId(),
                    maxDeliveries,
                    max,
                    hideMillis);
        }));
        ctx.usage().record("reads", 1);
        // RETURNING gives no order: deliver in send order
        return messages.stream()
                .sorted((a, b) -> Long.compare(Long.parseLong(a.id()), Long.parseLong(b.id())))
                .toList();
    }

    /** Marks dead what used its last delivery and was not acknowledged in time (rows a receive holds are skipped). */
    private static void bury(java.sql.Connection c, String resourceId, int maxDeliveries) throws java.sql.SQLException {
        Sql.update(
                c,
                "WITH spent AS (SELECT id FROM resource_queue_messages WHERE resource_id = ? AND dead_at IS NULL AND visible_at <= now()"
                        + " AND attempts >= ? FOR UPDATE SKIP LOCKED) UPDATE resource_queue_messages m SET dead_at = now(), receipt = NULL"
                        + " FROM spent WHERE m.id = spent.id",
                resourceId,
                maxDeliveries);
    }

    @Override
    public boolean ack(ResourceContext ctx, String receipt) throws ResourceException {
        UUID id = QueueLimits.parseReceipt(receipt);
        int gone = run(() -> sql.update(
                "DELETE FROM resource_queue_messages WHERE receipt = ? AND resource_id = ? AND dead_at IS NULL"
                        + " AND visible_at > now()",
                id,
                ctx.resourceId()));
        ctx.usage().record("writes", 1);
        return gone > 0;
    }

    @Override
    public List<QueueMessage> deadLetters(ResourceContext ctx, int limit) throws ResourceException {
        QueueLimits.checkLimit(limit);
        int maxDeliveries = QueueLimits.maxDeliveries(ctx);
        List<QueueMessage> dead = run(() -> sql.tx(c -> {
            bury(c, ctx.resourceId(), maxDeliveries);
            return Sql.list(
                    c,
                    "SELECT id, body, attempts, enqueued_at FROM resource_queue_messages WHERE resource_id = ? AND dead_at IS NOT NULL"
                            + " ORDER BY dead_at, id LIMIT ?",
                    rs -> new QueueMessage(
                            Long.toString(rs.getLong(1)),
                            rs.getBytes(2),
                            null,
                            rs.getInt(3),
                            Sql.instant(rs, "enqueued_at")),
                    ctx.resourceId(),
                    limit);
        }));
        ctx.usage().record("reads", 1);
        return dead;
    }

    /** Runs a statement; the kernel's database policy decides what a failure tells the client. */
    private static <T> T run(java.util.function.Supplier<T> call) throws ResourceException {
        try {
            return call.get();
        } catch (Sql.DatabaseException e) {
            throw ResourceException.unavailable("the queue failed; try again", e);
        } catch (ApiException e) {
            if (e.status() == 400) {
                throw ResourceException.badInput(e.getMessage());
            }
            throw new ResourceException(
                    e.status() == 409 ? ResourceException.Kind.CONFLICT : ResourceException.Kind.UNAVAILABLE,
                    e.getMessage());
        }
    }
}
