package dev.atrium.resource.workflow.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.resource.api.ConfigSchema;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;
import dev.atrium.resource.api.WorkflowFacet;
import dev.atrium.resource.api.WorkflowFacet.StepAnswer.Action;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * workflow resources in two PostgreSQL tables, rows kept apart by resource id: the instances, and the steps each
 * reached. An engine claims due instances with {@code SELECT … FOR UPDATE SKIP LOCKED} and a lease; every step call of
 * the run checks the lease under the instance row's lock and renews it, so that a run whose lease was taken over (its
 * runtime died, or the instance was paused, terminated or restarted) changes nothing. All times are the database's
 * clock, so engines on several servers agree.
 *
 * <p>Why one class of about 640 lines: it is the {@code WorkflowFacet}, one method per step of the lease protocol, and
 * every method checks the lease under the same row lock with the same helpers; split, the lease rules would be spread
 * over classes that each see half of them.
 */
@Component(service = ResourceProvider.class)
@ResourceProviderType(type = "workflow", backend = "postgres")
public class PostgresWorkflows implements ResourceProvider, WorkflowFacet {

    /** A JavaScript identifier (ASCII), as an exported class name is. */
    static final Pattern CLASS_NAME = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]{0,99}");
    /** Cloudflare's instance ids. */
    static final Pattern INSTANCE_ID = Pattern.compile("[a-zA-Z0-9_][a-zA-Z0-9_-]{0,99}");

    static final int MAX_JSON = 1 << 20;
    static final int MAX_KEY = 300;
    static final int MAX_MESSAGE = 4096;
    /** A retry delay at most this long is waited in memory; a longer one suspends the run. */
    static final long INLINE_WAIT_MILLIS = 1000;

    static final ConfigSchema SCHEMA = ConfigSchema.builder()
            .string(
                    "class_name",
                    "the exported class (extends WorkflowEntrypoint) whose run(event, step) an instance runs",
                    true,
                    List.of(),
                    null)
            .build();

    private final Sql sql;

    @Activate
    public PostgresWorkflows(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    @Override
    public ConfigSchema configSchema() {
        return SCHEMA;
    }

    static void checkClassName(Object className) throws ResourceException {
        if (!(className instanceof String s) || !CLASS_NAME.matcher(s).matches()) {
            throw ResourceException.badInput(
                    "config.class_name must be a JavaScript identifier (the exported class's name), 1 to 100 characters");
        }
    }

    @Override
    public Map<String, Object> provision(ResourceContext ctx) throws ResourceException {
        checkClassName(ctx.config().get("class_name"));
        return Map.of();
    }

    @Override
    public void update(ResourceContext ctx, Map<String, Object> newConfig) throws ResourceException {
        checkClassName(newConfig.get("class_name"));
    }

    @Override
    public void deprovision(ResourceContext ctx) throws ResourceException {
        run(() -> sql.update("DELETE FROM resource_workflow_instances WHERE resource_id = ?", ctx.resourceId()));
    }

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) {
        return Map.of(
                "backend", "postgres", "class_name", String.valueOf(ctx.config().get("class_name")));
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

    // ------------------------------------------------------------------ the binding's calls

    private static final String INSTANCE_COLUMNS = "id, status, output, error_name, error_message, created_at";

    private static Instance instance(java.sql.ResultSet rs) throws SQLException {
        return new Instance(
                rs.getString("id"),
                rs.getString("status"),
                rs.getString("output"),
                rs.getString("error_name"),
                rs.getString("error_message"),
                Sql.instant(rs, "created_at"));
    }

    @Override
    public Instance create(ResourceContext ctx, String runner, String id, String paramsJson) throws ResourceException {
        String instanceId = id == null ? UUID.randomUUID().toString() : id;
        if (!INSTANCE_ID.matcher(instanceId).matches()) {
            throw ResourceException.badInput("an instance id is 1 to 100 of [a-zA-Z0-9_-], not starting with '-'");
        }
        if (paramsJson != null && paramsJson.length() > MAX_JSON) {
            throw new ResourceException(ResourceException.Kind.TOO_LARGE, "params must be at most 1 MiB of JSON");
        }
        try {
            Instance created = sql.one(
                            "INSERT INTO resource_workflow_instances (resource_id, id, runner, params, status, due_at)"
                                    + " VALUES (?, ?, ?, ?, 'queued', now()) RETURNING " + INSTANCE_COLUMNS,
                            PostgresWorkflows::instance,
                            ctx.resourceId(),
                            instanceId,
                            runner,
                            paramsJson)
                    .orElseThrow();
            ctx.usage().record("writes", 1);
            return created;
        } catch (Sql.Conflict e) {
            throw new ResourceException(
                    ResourceException.Kind.CONFLICT,
                    "instance.already_exists: Workflow instance with id \"" + instanceId + "\" already exists");
        } catch (RuntimeException e) {
            throw translate(e);
        }
    }

    @Override
    public Optional<Instance> get(ResourceContext ctx, String id) throws ResourceException {
        ctx.usage().record("reads", 1);
        return run(() -> sql.one(
                "SELECT " + INSTANCE_COLUMNS + " FROM resource_workflow_instances WHERE resource_id = ? AND id = ?",
                PostgresWorkflows::instance,
                ctx.resourceId(),
                id));
    }

    @Override
    public void control(ResourceContext ctx, String id, Control action) throws ResourceException {
        String problem = run(() -> sql.tx(c -> {
            Optional<String> status = Sql.one(
                    c,
                    "SELECT status FROM resource_workflow_instances WHERE resource_id = ? AND id = ? FOR UPDATE",
                    rs -> rs.getString(1),
                    ctx.resourceId(),
                    id);
            if (status.isEmpty()) {
                return "NOT_FOUND";
            }
            String s = status.get();
            boolean finished = s.equals("complete") || s.equals("errored") || s.equals("terminated");
            switch (action) {
                case PAUSE -> {
                    if (finished || s.equals("paused")) {
                        return "instance.cannot_pause: Cannot pause instance with status \"" + s + "\"";
                    }
                    Sql.update(
                            c,
                            "UPDATE resource_workflow_instances SET status = 'paused', lease = NULL, lease_until = NULL, updated_at = now()"
                                    + " WHERE resource_id = ? AND id = ?",
                            ctx.resourceId(),
                            id);
                }
                case RESUME -> {
                    if (!s.equals("paused")) {
                        return "instance.cannot_resume: Cannot resume instance with status \"" + s + "\"";
                    }
                    Sql.update(
                            c,
                            "UPDATE resource_workflow_instances SET status = CASE WHEN due_at > now() THEN 'waiting' ELSE 'queued' END,"
                                    + " due_at = COALESCE(due_at, now()), updated_at = now() WHERE resource_id = ? AND id = ?",
                            ctx.resourceId(),
                            id);
                }
                case TERMINATE -> {
                    if (finished) {
                        return "instance.cannot_terminate: Cannot terminate instance since its on a finite state";
                    }
                    Sql.update(
                            c,
                            "UPDATE resource_workflow_instances SET status = 'terminated', due_at = NULL, lease = NULL, lease_until = NULL,"
                                    + " updated_at = now() WHERE resource_id = ? AND id = ?",
                            ctx.resourceId(),
                            id);
                }
                case RESTART -> {
                    Sql.update(
                            c,
                            "DELETE FROM resource_workflow_steps WHERE resource_id = ? AND instance_id = ?",
                            ctx.resourceId(),
                            id);
                    Sql.update(
                            c,
                            "UPDATE resource_workflow_instances SET status = 'queued', due_at = now(), lease = NULL, lease_until = NULL,"
                                    + " output = NULL, error_name = NULL, error_message = NULL, updated_at = now() WHERE resource_id = ? AND id = ?",
                            ctx.resourceId(),
                            id);
                }
                case DELETE ->
                    Sql.update(
                            c,
                            "DELETE FROM resource_workflow_instances WHERE resource_id = ? AND id = ?",
                            ctx.resourceId(),
                            id);
            }
            return null;
        }));
        ctx.usage().record("writes", 1);
        if ("NOT_FOUND".equals(problem)) {
            throw ResourceException.notFound("instance.not_found: Instance does not exist");
        }
        if (problem != null) {
            throw new ResourceException(ResourceException.Kind.CONFLICT, problem);
        }
    }

    // ------------------------------------------------------------------ the engine's calls

    @Override
    public List<Claim> claim(ResourceContext ctx, String runner, int max, Duration lease) throws ResourceException {
        long leaseMillis = Math.max(1000, lease.toMillis());
        return run(() -> sql.tx(c -> Sql.list(
                c,
                "WITH picked AS (SELECT resource_id, id FROM resource_workflow_instances"
                        + " WHERE resource_id = ? AND runner = ? AND due_at IS NOT NULL AND due_at <= now()"
                        + " AND status IN ('queued', 'running', 'waiting') AND (lease_until IS NULL OR lease_until < now())"
                        + " ORDER BY due_at LIMIT ? FOR UPDATE SKIP LOCKED)"
                        + " UPDATE resource_workflow_instances i SET status = 'running', lease = gen_random_uuid(),"
                        + " lease_until = now() + ? * interval '1 millisecond', lease_ms = ?, updated_at = now()"
                        + " FROM picked WHERE i.resource_id = picked.resource_id AND i.id = picked.id RETURNING i.id, i.lease, i.params, i.created_at",
                rs -> new Claim(rs.getString(1), rs.getString(2), rs.getString(3), Sql.instant(rs, "created_at")),
                ctx.resourceId(),
                runner,
                Math.max(1, Math.min(100, max)),
                leaseMillis,
                leaseMillis)));
    }

    @Override
    public boolean renew(ResourceContext ctx, String instanceId, String lease, Duration duration)
            throws ResourceException {
        UUID l = lease(lease);
        return run(() -> sql.update(
                        "UPDATE resource_workflow_instances SET lease_until = now() + ? * interval '1 millisecond'"
                                + " WHERE resource_id = ? AND id = ? AND lease = ? AND status = 'running'",
                        duration.toMillis(),
                        ctx.resourceId(),
                        instanceId,
                        l))
                > 0;
    }

    @Override
    public void release(ResourceContext ctx, String instanceId, String lease) throws ResourceException {
        UUID l = lease(lease);
        run(() -> sql.update(
                "UPDATE resource_workflow_instances SET lease = NULL, lease_until = NULL, due_at = now(), updated_at = now()"
                        + " WHERE resource_id = ? AND id = ? AND lease = ?",
                ctx.resourceId(),
                instanceId,
                l));
    }

    private static UUID lease(String lease) throws ResourceException {
        try {
            if (lease == null || lease.length() != 36) {
                throw new IllegalArgumentException();
            }
            return UUID.fromString(lease);
        } catch (IllegalArgumentException e) {
            throw ResourceException.badInput("lease is not one this engine handed out");
        }
    }

    private static void checkKey(String key) throws ResourceException {
        if (key == null
                || key.isEmpty()
                || key.length() > MAX_KEY
                || key.chars().anyMatch(ch -> ch < 0x20)) {
            throw ResourceException.badInput("a step name is 1 to 256 characters without control characters");
        }
    }

    /** Whether the run holding {@code lease} still owns the instance (its row locked until the transaction ends); renews the lease. */
    private static boolean owns(Connection c, String resourceId, String instanceId, UUID lease) throws SQLException {
        return Sql.update(
                        c,
                        "UPDATE resource_workflow_instances SET lease_until = now() + lease_ms * interval '1 millisecond'"
                                + " WHERE resource_id = ? AND id = ? AND lease = ? AND status = 'running'",
                        resourceId,
                        instanceId,
                        lease)
                > 0;
    }

    /** Ends the run until {@code dueAt}: the instance waits, held by no lease. */
    private static void suspend(
            Connection c, String resourceId, String instanceId, String dueAtExpression, Object... args)
            throws SQLException {
        Object[] all = new Object[args.length + 2];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = resourceId;
        all[args.length + 1] = instanceId;
        Sql.update(
                c,
                "UPDATE resource_workflow_instances SET status = 'waiting', due_at = " + dueAtExpression
                        + ", lease = NULL, lease_until = NULL, updated_at = now() WHERE resource_id = ? AND id = ?",
                all);
    }

    private static final StepAnswer ABORT = new StepAnswer(Action.ABORT, null, null, null, 0, 0);
    private static final StepAnswer SUSPEND = new StepAnswer(Action.SUSPEND, null, null, null, 0, 0);

    private record StepRow(
            boolean done,
            String value,
            String errorName,
            String errorMessage,
            int attempts,
            Long retryInMillis,
            Long untilInMillis) {}

    private static Optional<StepRow> step(Connection c, String resourceId, String instanceId, String key)
            throws SQLException {
        return Sql.one(
                c,
                "SELECT done, value, error_name, error_message, attempts,"
                        + " (EXTRACT(EPOCH FROM (retry_at - now())) * 1000)::bigint AS retry_in,"
                        + " (EXTRACT(EPOCH FROM (until_at - now())) * 1000)::bigint AS until_in"
                        + " FROM resource_workflow_steps WHERE resource_id = ? AND instance_id = ? AND key = ? FOR UPDATE",
                rs -> new StepRow(
                        rs.getBoolean(1),
                        rs.getString(2),
                        rs.getString(3),
                        rs.getString(4),
                        rs.getInt(5),
                        (Long) rs.getObject(6),
                        (Long) rs.getObject(7)),
                resourceId,
                instanceId,
                key);
    }

    private static Optional<StepAnswer> settled(StepRow row) {
        if (row.done()) {
            return Optional.of(new StepAnswer(Action.REPLAY, row.value(), null, null, row.attempts(), 0));
        }
        if (row.errorName() != null) {
            return Optional.of(
                    new StepAnswer(Action.THROW, null, row.errorName(), row.errorMessage(), row.attempts(), 0));
        }
        return Optional.empty();
    }

    @Override
    public StepAnswer beginStep(ResourceContext ctx, String instanceId, String lease, String key)
            throws ResourceException {
        UUID l = lease(lease);
        checkKey(key);
        String r = ctx.resourceId();
        return run(() -> sql.tx(c -> {
            if (!owns(c, r, instanceId, l)) {
                return ABORT;
            }
            Optional<StepRow> row = step(c, r, instanceId, key);
            if (row.isPresent()) {
                Optional<StepAnswer> settled = settled(row.get());
                if (settled.isPresent()) {
                    return settled.get();
                }
                Long retryIn = row.get().retryInMillis();
                if (retryIn != null && retryIn > 0) {
                    if (retryIn <= INLINE_WAIT_MILLIS) {
                        return new StepAnswer(
                                Action.WAIT, null, null, null, row.get().attempts(), retryIn);
                    }
                    suspend(
                            c,
                            r,
                            instanceId,
                            "(SELECT retry_at FROM resource_workflow_steps WHERE resource_id = ? AND instance_id = ? AND key = ?)",
                            r,
                            instanceId,
                            key);
                    return SUSPEND;
                }
            }
            int attempt = Sql.one(
                            c,
                            "INSERT INTO resource_workflow_steps (resource_id, instance_id, key, attempts) VALUES (?, ?, ?, 1)"
                                    + " ON CONFLICT (resource_id, instance_id, key) DO UPDATE SET attempts = resource_workflow_steps.attempts + 1, retry_at = NULL"
                                    + " RETURNING attempts",
                            rs -> rs.getInt(1),
                            r,
                            instanceId,
                            key)
                    .orElseThrow();
            return new StepAnswer(Action.RUN, null, null, null, attempt, 0);
        }));
    }

    @Override
    public StepAnswer completeStep(ResourceContext ctx, String instanceId, String lease, String key, String valueJson)
            throws ResourceException {
        UUID l = lease(lease);
        checkKey(key);
        if (valueJson != null && valueJson.length() > MAX_JSON) {
            throw new ResourceException(
                    ResourceException.Kind.TOO_LARGE, "a step's result must be at most 1 MiB of JSON");
        }
        String r = ctx.resourceId();
        StepAnswer answer = run(() -> sql.tx(c -> {
            if (!owns(c, r, instanceId, l)) {
                return ABORT;
            }
            Optional<StepRow> row = step(c, r, instanceId, key);
            if (row.isEmpty()) {
                return ABORT;
            }
            Optional<StepAnswer> settled = settled(row.get());
            if (settled.isPresent()) {
                return settled.get();
            }
            Sql.update(
                    c,
                    "UPDATE resource_workflow_steps SET done = true, value = ?, retry_at = NULL WHERE resource_id = ? AND instance_id = ? AND key = ?",
                    valueJson,
                    r,
                    instanceId,
                    key);
            return new StepAnswer(
                    Action.REPLAY, valueJson, null, null, row.get().attempts(), 0);
        }));
        ctx.usage().record("writes", 1);
        return answer;
    }

    /** The delay before retry {@code attempt} + 1 after {@code attempt} failed attempts (Cloudflare's backoffs). */
    static long delay(Retries retries, int attempt) {
        long d = Math.max(0, retries.delayMillis());
        long out = switch (retries.backoff() == null ? "exponential" : retries.backoff()) {
            case "constant" -> d;
            case "linear" -> d * attempt;
            default -> d * (1L << Math.min(30, Math.max(0, attempt - 1)));
        };
        return Math.min(out, Duration.ofDays(365).toMillis());
    }

    @Override
    public StepAnswer failStep(
            ResourceContext ctx,
            String instanceId,
            String lease,
            String key,
            String errorName,
            String errorMessage,
            boolean retryable,
            Retries retries)
            throws ResourceException {
        UUID l = lease(lease);
        checkKey(key);
        String name = cut(errorName == null || errorName.isBlank() ? "Error" : errorName, 200);
        String message = cut(errorMessage == null ? "" : errorMessage, MAX_MESSAGE);
        String r = ctx.resourceId();
        return run(() -> sql.tx(c -> {
            if (!owns(c, r, instanceId, l)) {
                return ABORT;
            }
            Optional<StepRow> row = step(c, r, instanceId, key);
            if (row.isEmpty()) {
                return ABORT;
            }
            Optional<StepAnswer> settled = settled(row.get());
            if (settled.isPresent()) {
                return settled.get();
            }
            int attempts = row.get().attempts();
            if (!retryable || attempts > Math.max(0, retries.limit())) {
                Sql.update(
                        c,
                        "UPDATE resource_workflow_steps SET error_name = ?, error_message = ?, retry_at = NULL"
                                + " WHERE resource_id = ? AND instance_id = ? AND key = ?",
                        name,
                        message,
                        r,
                        instanceId,
                        key);
                return new StepAnswer(Action.THROW, null, name, message, attempts, 0);
            }
            long delay = delay(retries, attempts);
            Sql.update(
                    c,
                    "UPDATE resource_workflow_steps SET retry_at = now() + ? * interval '1 millisecond'"
                            + " WHERE resource_id = ? AND instance_id = ? AND key = ?",
                    delay,
                    r,
                    instanceId,
                    key);
            if (delay <= INLINE_WAIT_MILLIS) {
                return new StepAnswer(Action.WAIT, null, null, null, attempts, delay);
            }
            suspend(c, r, instanceId, "now() + ? * interval '1 millisecond'", delay);
            return SUSPEND;
        }));
    }

    @Override
    public StepAnswer sleep(ResourceContext ctx, String instanceId, String lease, String key, Instant until)
            throws ResourceException {
        UUID l = lease(lease);
        checkKey(key);
        String r = ctx.resourceId();
        java.sql.Timestamp at = java.sql.Timestamp.from(until);
        return run(() -> sql.tx(c -> {
            if (!owns(c, r, instanceId, l)) {
                return ABORT;
            }
            Sql.update(
                    c,
                    "INSERT INTO resource_workflow_steps (resource_id, instance_id, key, until_at) VALUES (?, ?, ?, ?)"
                            + " ON CONFLICT (resource_id, instance_id, key) DO NOTHING",
                    r,
                    instanceId,
                    key,
                    at);
            StepRow row = step(c, r, instanceId, key).orElseThrow();
            if (row.done()) {
                return new StepAnswer(Action.REPLAY, null, null, null, 0, 0);
            }
            if (row.untilInMillis() == null || row.untilInMillis() <= 0) {
                Sql.update(
                        c,
                        "UPDATE resource_workflow_steps SET done = true WHERE resource_id = ? AND instance_id = ? AND key = ?",
                        r,
                        instanceId,
                        key);
                return new StepAnswer(Action.REPLAY, null, null, null, 0, 0);
            }
            suspend(
                    c,
                    r,
                    instanceId,
                    "(SELECT until_at FROM resource_workflow_steps WHERE resource_id = ? AND instance_id = ? AND key = ?)",
                    r,
                    instanceId,
                    key);
            return SUSPEND;
        }));
    }

    @Override
    public boolean finish(
            ResourceContext ctx,
            String instanceId,
            String lease,
            String outputJson,
            String errorName,
            String errorMessage)
            throws ResourceException {
        UUID l = lease(lease);
        if (outputJson != null && outputJson.length() > MAX_JSON) {
            errorName = "WorkflowFatalError";
            errorMessage = "the output of run() is larger than 1 MiB";
            outputJson = null;
        }
        boolean errored = errorName != null;
        String output = errored ? null : outputJson;
        String name = errored ? cut(errorName, 200) : null;
        String message = errored ? cut(errorMessage == null ? "" : errorMessage, MAX_MESSAGE) : null;
        boolean done = run(() -> sql.update(
                        "UPDATE resource_workflow_instances SET status = ?, output = ?, error_name = ?, error_message = ?,"
                                + " due_at = NULL, lease = NULL, lease_until = NULL, updated_at = now() WHERE resource_id = ? AND id = ? AND lease = ? AND status = 'running'",
                        errored ? "errored" : "complete",
                        output,
                        name,
                        message,
                        ctx.resourceId(),
                        instanceId,
                        l))
                > 0;
        ctx.usage().record("writes", 1);
        return done;
    }

    private static String cut(String s, int max) {
        return s.length() > max ? s.substring(0, max) : s;
    }

    private static ResourceException translate(RuntimeException e) {
        if (e instanceof Sql.DatabaseException) {
            return ResourceException.unavailable("the workflow store failed; try again", e);
        }
        if (e instanceof ApiException a) {
            if (a.status() == 400) {
                return ResourceException.badInput(a.getMessage());
            }
            return new ResourceException(
                    a.status() == 409 ? ResourceException.Kind.CONFLICT : ResourceException.Kind.UNAVAILABLE,
                    a.getMessage());
        }
        throw e;
    }

    /** Runs a statement; the kernel's database policy decides what a failure tells the client. */
    private static <T> T run(java.util.function.Supplier<T> call) throws ResourceException {
        try {
            return call.get();
        } catch (RuntimeException e) {
            throw translate(e);
        }
    }
}
