package dev.atrium.billing.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.billing.api.UsageEvent;
import dev.atrium.billing.api.UsageRecorder;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable record of usage. An event recorded outside a transaction is appended at once to a local outbox file
 * (one JSON line: a write the kernel keeps when the process dies, without the cost of a database round trip per
 * action), and a background thread moves the outbox into {@code billing_usage_events}. Rows are keyed by the event's
 * idempotency key, so moving a file twice (a crash after the insert, before the delete) counts each event once.
 */
@Component(service = {UsageRecorder.class, UsageLedger.class})
public class UsageLedger implements UsageRecorder {

    private static final Logger LOG = LoggerFactory.getLogger(UsageLedger.class);
    private static final ObjectMapper JSON = JsonMappers.create();
    private static final String CURRENT = "outbox.jsonl";
    /** The start of the current calendar month in UTC, whatever the session's time zone. */
    static final String MONTH_START = "(date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')";

    private static final String INSERT = "INSERT INTO billing_usage_events"
            + " (idempotency_key, principal_id, space_id, meter, dimension, quantity, occurred_at)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING";

    private final Sql sql;
    private final DataSource dataSource;
    private final SpaceDirectory spaces;
    private final Path directory;
    private final ScheduledExecutorService flusher;
    private final Object lock = new Object();
    private final AtomicLong sealed = new AtomicLong();
    private BufferedWriter writer;

    @Activate
    public UsageLedger(
            @Reference DataSource dataSource,
            @Reference SchemaMigrations migrations,
            @Reference SpaceDirectory spaces,
            @Reference BillingSettings settings,
            BundleContext context) {
        this.dataSource = dataSource;
        this.sql = new Sql(dataSource);
        this.spaces = spaces;
        this.directory = settings.outbox;
        migrations.apply(context.getBundle());
        try {
            Files.createDirectories(directory);
            writer = open();
        } catch (IOException e) {
            throw new UncheckedIOException("the usage outbox " + directory + " cannot be opened", e);
        }
        flusher = NamedThreads.scheduler("billing-outbox");
        NamedThreads.repeat(flusher, this::flush, Duration.ZERO, Duration.ofMillis(settings.outboxFlushMillis));
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        flusher.shutdown();
        flusher.awaitTermination(10, TimeUnit.SECONDS);
        synchronized (lock) {
            try {
                writer.close();
            } catch (IOException e) {
                LOG.warn("closing the usage outbox failed", e);
            }
        }
    }

    private BufferedWriter open() throws IOException {
        return new BufferedWriter(new OutputStreamWriter(
                Files.newOutputStream(directory.resolve(CURRENT), StandardOpenOption.CREATE, StandardOpenOption.APPEND),
                StandardCharsets.UTF_8));
    }

    @Override
    public void record(UsageEvent event) {
        ObjectNode line = JSON.createObjectNode()
                .put("key", event.idempotencyKey())
                .put("space", event.spaceId())
                .put("meter", event.meter())
                .put("dimension", event.dimension())
                .put("quantity", event.quantity())
                .put("at", event.occurredAt().toString());
        String text = line.toString();
        synchronized (lock) {
            try {
                writer.write(text);
                writer.write('\n');
                writer.flush();
            } catch (IOException e) {
                // the action already happened; losing its count is better than failing it
                LOG.error("usage event {} could not be written to the outbox", event.idempotencyKey(), e);
            }
        }
    }

    @Override
    public void record(Connection transaction, UsageEvent event) throws SQLException {
        Optional<String> owner = owner(event.spaceId());
        if (owner.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = transaction.prepareStatement(INSERT)) {
            bind(ps, owner.get(), event);
            ps.executeUpdate();
        }
    }

    private Optional<String> owner(String spaceId) {
        return spaces.byId(spaceId).map(SpaceRef::ownerPrincipalId);
    }

    private static void bind(PreparedStatement ps, String principal, UsageEvent e) throws SQLException {
        ps.setString(1, e.idempotencyKey());
        ps.setString(2, principal);
        ps.setString(3, e.spaceId());
        ps.setString(4, e.meter());
        ps.setString(5, e.dimension());
        ps.setLong(6, e.quantity());
        ps.setTimestamp(7, Timestamp.from(e.occurredAt()));
    }

    /** Seals the current outbox file (if it holds anything) and moves every sealed file into the database. */
    void flush() {
        try {
            synchronized (lock) {
                Path current = directory.resolve(CURRENT);
                if (Files.size(current) > 0) {
                    writer.close();
                    try {
                        Files.move(
                                current,
                                directory.resolve(String.format(
                                        "sealed-%d-%06d.jsonl", System.currentTimeMillis(), sealed.incrementAndGet())),
                                StandardCopyOption.ATOMIC_MOVE);
                    } finally {
                        // appending goes on, to the sealed name's successor or, if the move failed, the same file
                        writer = open();
                    }
                }
            }
            List<Path> files = new ArrayList<>();
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(directory, "sealed-*.jsonl")) {
                ds.forEach(files::add);
            }
            files.sort(null);
            for (Path file : files) {
                move(file);
            }
        } catch (IOException e) {
            LOG.warn("the usage outbox could not be moved into the database; retrying", e);
        }
    }

    private void move(Path file) throws IOException {
        List<UsageEvent> events = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            try {
                JsonNode n = JSON.readTree(line);
                events.add(new UsageEvent(
                        n.path("space").asText(),
                        n.path("meter").asText(),
                        n.path("dimension").asText(""),
                        n.path("quantity").asLong(),
                        n.path("key").asText(),
                        Instant.parse(n.path("at").asText())));
            } catch (IOException | RuntimeException e) {
                // the last line of a file a dying process was writing can be cut short; the action it counted never
                // answered its caller
                LOG.warn("skipping a malformed usage outbox line in {}: {}", file.getFileName(), line);
            }
        }
        Map<String, Optional<String>> owners = new TreeMap<>();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(INSERT)) {
                for (UsageEvent e : events) {
                    Optional<String> owner = owners.computeIfAbsent(e.spaceId(), this::owner);
                    if (owner.isEmpty()) {
                        continue; // the workspace is gone: no one to bill
                    }
                    bind(ps, owner.get(), e);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            c.commit();
        } catch (SQLException e) {
            throw new IOException("usage events could not be stored: " + e.getMessage(), e);
        }
        Files.delete(file);
    }

    @Override
    public Map<String, Long> monthTotals(String spaceId, String dimension) {
        Map<String, Long> out = new LinkedHashMap<>();
        sql.list(
                        "SELECT meter, sum(q)::bigint AS q FROM ("
                                + " SELECT meter, quantity AS q FROM billing_usage_hours"
                                + " WHERE space_id = ? AND dimension = ? AND hour >= " + MONTH_START + ""
                                + " UNION ALL SELECT meter, quantity FROM billing_usage_events"
                                + " WHERE NOT aggregated AND space_id = ? AND dimension = ?"
                                + " AND occurred_at >= " + MONTH_START + ") u GROUP BY meter ORDER BY meter",
                        rs -> Map.entry(rs.getString("meter"), rs.getLong("q")),
                        spaceId,
                        dimension,
                        spaceId,
                        dimension)
                .forEach(e -> out.put(e.getKey(), e.getValue()));
        return out;
    }
}
