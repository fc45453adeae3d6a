package dev.atrium.billing.api;

import java.util.Set;

/** The meters Atrium counts. A meter's name is also its default event name at the provider, prefixed with {@code atrium_}. */
public final class Meters {

    /** Model input tokens of runs; the dimension is the model. */
    public static final String RUN_TOKENS_IN = "run_tokens_in";
    /** Model output tokens of runs; the dimension is the model. */
    public static final String RUN_TOKENS_OUT = "run_tokens_out";
    /** Queries of vectorize indexes; the dimension is the resource id. */
    public static final String VECTOR_QUERIES = "vector_queries";
    /** Messages written to queues; the dimension is the resource id. */
    public static final String QUEUE_WRITES = "queue_writes";
    /** Data points written to analytics datasets; the dimension is the resource id. */
    public static final String ANALYTICS_WRITES = "analytics_writes";
    /** Bytes stored in a workspace's files, per hour sampled (bytes-hours; the month's figure divides by its hours). */
    public static final String STORAGE_BYTE_HOURS = "storage_byte_hours";
    /** Bytes stored in r2 buckets, per hour sampled; the dimension is the resource id. */
    public static final String R2_BYTE_HOURS = "r2_byte_hours";
    /** Requests served by workers; the dimension is the service id. */
    public static final String WORKER_REQUESTS = "worker_requests";
    /** Requests served by containers; the dimension is the service id. */
    public static final String CONTAINER_REQUESTS = "container_requests";
    /** Minutes of Actions jobs, rounded up per job. */
    public static final String ACTIONS_MINUTES = "actions_minutes";
    /** Minutes of browser sessions, rounded up per session. */
    public static final String BROWSER_MINUTES = "browser_minutes";

    private static final Set<String> ALL = Set.of(
            RUN_TOKENS_IN,
            RUN_TOKENS_OUT,
            VECTOR_QUERIES,
            QUEUE_WRITES,
            ANALYTICS_WRITES,
            STORAGE_BYTE_HOURS,
            R2_BYTE_HOURS,
            WORKER_REQUESTS,
            CONTAINER_REQUESTS,
            ACTIONS_MINUTES,
            BROWSER_MINUTES);

    private Meters() {}

    /** Every meter's name. */
    public static Set<String> all() {
        return ALL;
    }
}
