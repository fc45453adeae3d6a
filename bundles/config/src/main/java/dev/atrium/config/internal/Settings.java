package dev.atrium.config.internal;

import static dev.atrium.config.internal.Setting.Kind.BOOLEAN;
import static dev.atrium.config.internal.Setting.Kind.DIRECTORY;
import static dev.atrium.config.internal.Setting.Kind.INTEGER;
import static dev.atrium.config.internal.Setting.Kind.LONG;
import static dev.atrium.config.internal.Setting.Kind.STRING;
import static dev.atrium.config.internal.Setting.Source.env;
import static dev.atrium.config.internal.Setting.Source.property;

import dev.atrium.config.internal.Setting.Kind;
import dev.atrium.config.internal.Setting.Source;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every {@code ATRIUM_*} environment variable and {@code atrium.*} framework property, by the PID and property it
 * configures. The documented names (README.md) are kept exactly; this table is the only place that knows them.
 */
final class Settings {

    /** {@code <data>}: {@code --data} of {@code ./atrium run} (the framework property), else ATRIUM_DATA, else ./data. */
    static final Setting DATA_DIRECTORY =
            new Setting("dataDirectory", DIRECTORY, List.of(property("atrium.data"), env("ATRIUM_DATA")), "data");

    static final String BLOB_S3 = "dev.atrium.blob.s3";
    static final String KV_REDIS = "dev.atrium.resource.kv.redis";
    static final String QUEUE_NATS = "dev.atrium.resource.queue.nats";

    private Settings() {}

    /**
     * The PIDs whose component exists only when configured (ConfigurationPolicy.REQUIRE), each with the property that
     * says it is: their configuration is made only while the environment or the framework properties set that
     * property (an operator may still write one).
     */
    static Map<String, String> madeOnlyWhenSet() {
        return Map.of(BLOB_S3, "bucket", KV_REDIS, "url", QUEUE_NATS, "url");
    }

    static Map<String, List<Setting>> all() {
        Map<String, List<Setting>> pids = new LinkedHashMap<>();
        pids.put(
                "dev.atrium.database",
                List.of(
                        Setting.of("url", STRING, property("atrium.db.url"), env("ATRIUM_DB_URL")),
                        Setting.of("clusterTemplates", STRING, env("ATRIUM_DB_CLUSTER_TEMPLATES")),
                        DATA_DIRECTORY));
        pids.put(
                "dev.atrium.kernel.http",
                List.of(Setting.of(
                        "publicBaseUrl", STRING, property("atrium.publicBaseUrl"), env("ATRIUM_PUBLIC_URL"))));
        pids.put(
                "dev.atrium.store.ap.ratelimit",
                List.of(
                        Setting.of("perMinute", INTEGER, env("ATRIUM_FEDERATION_PUBLIC_GETS_PER_MINUTE")),
                        Setting.of("burst", INTEGER, env("ATRIUM_FEDERATION_PUBLIC_GETS_BURST"))));
        pids.put(
                "dev.atrium.kernel.egress",
                List.of(
                        Setting.of(
                                "allowLoopback",
                                BOOLEAN,
                                property("atrium.egress.allowLoopback"),
                                env("ATRIUM_EGRESS_ALLOW_LOOPBACK")),
                        Setting.of("dnsServer", STRING, env("ATRIUM_EGRESS_DNS_SERVER"))));
        pids.put(
                "dev.atrium.mcp",
                List.of(
                        Setting.of("allowedHosts", STRING, env("ATRIUM_MCP_ALLOWED_HOSTS")),
                        Setting.of("timeoutSeconds", INTEGER, env("ATRIUM_MCP_TIMEOUT_S")),
                        Setting.of("tokenKey", STRING, env("ATRIUM_MCP_TOKEN_KEY")),
                        DATA_DIRECTORY));
        pids.put(
                "dev.atrium.browser",
                List.of(
                        Setting.of("chromium", STRING, env("ATRIUM_BROWSER_CHROMIUM"), env("CHROMIUM")),
                        Setting.of("idleSeconds", INTEGER, env("ATRIUM_BROWSER_IDLE_SECONDS")),
                        Setting.of("maxSessions", INTEGER, env("ATRIUM_BROWSER_MAX_SESSIONS")),
                        Setting.of(
                                "maxSessionsPerPrincipal", INTEGER, env("ATRIUM_BROWSER_MAX_SESSIONS_PER_PRINCIPAL")),
                        Setting.of("heapMb", INTEGER, env("ATRIUM_BROWSER_HEAP_MB")),
                        Setting.of("loopbackPorts", STRING, env("ATRIUM_BROWSER_LOOPBACK_PORTS")),
                        DATA_DIRECTORY));
        pids.put(
                "dev.atrium.metrics",
                List.of(
                        Setting.of("enabled", BOOLEAN, env("ATRIUM_METRICS")),
                        Setting.of("seriesIntervalSeconds", INTEGER, env("ATRIUM_METRICS_SERIES_INTERVAL_S"))));
        pids.put(
                "dev.atrium.agenttasks",
                List.of(
                        Setting.of("planTimeoutSeconds", LONG, env("ATRIUM_AGENT_TASKS_PLAN_TIMEOUT_S")),
                        Setting.of("reconcileSeconds", LONG, env("ATRIUM_AGENT_TASKS_RECONCILE_S")),
                        Setting.of("defaultProvider", STRING, env("ATRIUM_RUNS_DEFAULT_PROVIDER")),
                        Setting.of("defaultModel", STRING, env("ATRIUM_RUNS_DEFAULT_MODEL"))));
        pids.put(
                "dev.atrium.sessions",
                List.of(
                        Setting.of("idleTimeoutSeconds", INTEGER, env("ATRIUM_SESSIONS_IDLE_TIMEOUT_S")),
                        Setting.of("maxIdleTimeoutSeconds", INTEGER, env("ATRIUM_SESSIONS_MAX_IDLE_TIMEOUT_S")),
                        Setting.of("reapSeconds", INTEGER, env("ATRIUM_SESSIONS_REAP_S")),
                        Setting.of("maxFileBytes", LONG, env("ATRIUM_SESSIONS_MAX_FILE_BYTES")),
                        Setting.of("maxTreeBytes", LONG, env("ATRIUM_SESSIONS_MAX_TREE_BYTES")),
                        Setting.of("maxActivePerPrincipal", INTEGER, env("ATRIUM_SESSIONS_MAX_ACTIVE")),
                        DATA_DIRECTORY));
        pids.put("dev.atrium.kernel.operator", List.of(DATA_DIRECTORY));
        pids.put("dev.atrium.kernel.commonenv", List.of(DATA_DIRECTORY));
        pids.put("dev.atrium.operations", List.of(DATA_DIRECTORY));
        pids.put(
                "dev.atrium.repos",
                List.of(
                        DATA_DIRECTORY,
                        Setting.of("remoteImportMaxPackBytes", LONG, env("ATRIUM_APP_DEPLOY_REMOTE_MAX_PACK_BYTES")),
                        Setting.of("remoteImportMaxObjects", LONG, env("ATRIUM_APP_DEPLOY_REMOTE_MAX_OBJECTS")),
                        Setting.of(
                                "remoteImportTimeoutSeconds", INTEGER, env("ATRIUM_APP_DEPLOY_REMOTE_TIMEOUT_SECONDS")),
                        Setting.of("remoteImportArchiveHosts", STRING, env("ATRIUM_APP_DEPLOY_REMOTE_ARCHIVE_HOSTS"))));
        pids.put(
                "dev.atrium.repos.releases",
                List.of(Setting.of("maxAssetBytes", LONG, env("ATRIUM_RELEASE_ASSET_MAX_BYTES"))));
        pids.put(
                "dev.atrium.actions",
                List.of(
                        DATA_DIRECTORY,
                        Setting.of("maxJobs", INTEGER, env("ATRIUM_ACTIONS_MAX_JOBS")),
                        Setting.of("maxJobsPerPrincipal", INTEGER, env("ATRIUM_ACTIONS_MAX_JOBS_PER_PRINCIPAL")),
                        Setting.of("jobMemoryMb", INTEGER, env("ATRIUM_ACTIONS_JOB_MEMORY_MB")),
                        Setting.of("jobMilliCpus", INTEGER, env("ATRIUM_ACTIONS_JOB_MILLICPUS")),
                        Setting.of("maxJobMinutes", INTEGER, env("ATRIUM_ACTIONS_MAX_JOB_MINUTES")),
                        Setting.of("artifactRetentionDays", INTEGER, env("ATRIUM_ACTIONS_ARTIFACT_RETENTION_DAYS")),
                        Setting.of("maxArtifactBytes", LONG, env("ATRIUM_ACTIONS_MAX_ARTIFACT_BYTES")),
                        Setting.of("maxLogBytes", LONG, env("ATRIUM_ACTIONS_MAX_LOG_BYTES"))));
        pids.put(
                "dev.atrium.apps",
                List.of(
                        DATA_DIRECTORY,
                        Setting.of("buildTimeoutSeconds", INTEGER, env("ATRIUM_APPS_BUILD_TIMEOUT_SECONDS")),
                        Setting.of("maxArtifactBytes", LONG, env("ATRIUM_APPS_MAX_ARTIFACT_BYTES")),
                        Setting.of("secretGraceSeconds", INTEGER, env("ATRIUM_APPS_SECRET_GRACE_SECONDS"))));
        pids.put("dev.atrium.resources", List.of(DATA_DIRECTORY));
        pids.put(
                "dev.atrium.services",
                List.of(
                        DATA_DIRECTORY,
                        Setting.of("appsDomain", STRING, env("ATRIUM_SERVICES_APPS_DOMAIN")),
                        Setting.of("canaryPercent", INTEGER, env("ATRIUM_SERVICES_CANARY_PERCENT")),
                        Setting.of("internalBaseUrl", STRING, env("ATRIUM_SERVICES_INTERNAL_URL"))));
        pids.put(
                "dev.atrium.services.domains",
                List.of(
                        DATA_DIRECTORY,
                        Setting.of("dnsResolver", STRING, env("ATRIUM_SERVICES_DNS_RESOLVER")),
                        Setting.of("challengeHttpPort", INTEGER, env("ATRIUM_SERVICES_CHALLENGE_HTTP_PORT")),
                        Setting.of("acmeDirectoryUrl", STRING, env("ATRIUM_SERVICES_ACME_DIRECTORY_URL")),
                        Setting.of("acmeContactEmail", STRING, env("ATRIUM_SERVICES_ACME_EMAIL")),
                        Setting.of("acmeTrustedCaFile", STRING, env("ATRIUM_SERVICES_ACME_CA_FILE")),
                        Setting.of("acmeTimeoutSeconds", INTEGER, env("ATRIUM_SERVICES_ACME_TIMEOUT_SECONDS")),
                        Setting.of("httpsPort", INTEGER, env("ATRIUM_SERVICES_HTTPS_PORT")),
                        Setting.of("certRenewBeforeDays", INTEGER, env("ATRIUM_SERVICES_CERT_RENEW_DAYS")),
                        Setting.of("certRenewCheckSeconds", INTEGER, env("ATRIUM_SERVICES_CERT_RENEW_CHECK_S"))));
        pids.put("dev.atrium.resource.secret", List.of(DATA_DIRECTORY));
        pids.put(
                "dev.atrium.blob.fs",
                List.of(
                        DATA_DIRECTORY,
                        Setting.of("staleTempSeconds", LONG, env("ATRIUM_BLOB_FS_STALE_TEMP_S")),
                        Setting.of("directWrites", BOOLEAN, env("ATRIUM_BLOB_FS_DIRECT_WRITES"))));
        pids.put(BLOB_S3, blobS3());
        pids.put(
                KV_REDIS,
                List.of(
                        Setting.of("url", STRING, env("ATRIUM_KV_REDIS_URL"), property("atrium.kv.redis.url")),
                        Setting.of("poolSize", INTEGER, env("ATRIUM_KV_REDIS_POOL_SIZE")),
                        Setting.of("service.ranking", INTEGER, env("ATRIUM_KV_REDIS_RANKING"))));
        pids.put(
                QUEUE_NATS,
                List.of(
                        Setting.of("url", STRING, env("ATRIUM_QUEUE_NATS_URL"), property("atrium.queue.nats.url")),
                        Setting.of("service.ranking", INTEGER, env("ATRIUM_QUEUE_NATS_RANKING"))));
        pids.put(
                "dev.atrium.resource.r2",
                List.of(Setting.of("maxBytesPerResource", LONG, env("ATRIUM_R2_MAX_BYTES_PER_RESOURCE"))));
        pids.put(
                "dev.atrium.resource.vectorize",
                List.of(
                        Setting.of("maxExactVectors", LONG, env("ATRIUM_VECTORIZE_MAX_EXACT_VECTORS")),
                        Setting.of("hnswMaxConn", INTEGER, env("ATRIUM_VECTORIZE_HNSW_MAX_CONN")),
                        Setting.of("hnswBeamWidth", INTEGER, env("ATRIUM_VECTORIZE_HNSW_BEAM_WIDTH")),
                        Setting.of("hnswOversample", INTEGER, env("ATRIUM_VECTORIZE_HNSW_OVERSAMPLE")),
                        Setting.of("hnswMergeDelayMillis", LONG, env("ATRIUM_VECTORIZE_HNSW_MERGE_DELAY_MS")),
                        Setting.of("hnswQuantized", BOOLEAN, env("ATRIUM_VECTORIZE_HNSW_QUANTIZED")),
                        Setting.of("hnswFlatScan", BOOLEAN, env("ATRIUM_VECTORIZE_HNSW_FLAT_SCAN"))));
        pids.put(
                "dev.atrium.resource.analytics",
                List.of(
                        Setting.of("maxRows", INTEGER, env("ATRIUM_ANALYTICS_MAX_ROWS")),
                        Setting.of("maxRangeDays", INTEGER, env("ATRIUM_ANALYTICS_MAX_RANGE_DAYS")),
                        Setting.of("queryTimeoutMillis", INTEGER, env("ATRIUM_ANALYTICS_QUERY_TIMEOUT_MS"))));
        pids.put(
                "dev.atrium.deploy.workerd",
                List.of(
                        DATA_DIRECTORY,
                        Setting.of("binary", STRING, env("ATRIUM_WORKERD_BIN")),
                        Setting.of("drainGraceMillis", LONG, env("ATRIUM_WORKERD_DRAIN_GRACE_MS"))));
        pids.put(
                "dev.atrium.containers.podman",
                List.of(
                        DATA_DIRECTORY,
                        Setting.of("binary", STRING, env("ATRIUM_PODMAN_BIN")),
                        Setting.of("imagesDirectory", STRING, env("ATRIUM_RUNNER_IMAGES")),
                        Setting.of("serviceRegistry", STRING, env("ATRIUM_CONTAINERS_REGISTRY")),
                        Setting.of("serviceRegistryTls", BOOLEAN, env("ATRIUM_CONTAINERS_REGISTRY_TLS"))));
        pids.put("dev.atrium.git.http", List.of(Setting.of("maxBodyBytes", LONG, env("ATRIUM_GIT_MAX_BODY_BYTES"))));
        pids.put("dev.atrium.threads", threads());
        pids.put(
                "dev.atrium.runs",
                List.of(
                        Setting.of("workers", INTEGER, env("ATRIUM_RUNS_WORKERS")),
                        Setting.of("stepLimit", INTEGER, env("ATRIUM_RUNS_STEP_LIMIT")),
                        Setting.of("heartbeatMillis", LONG, env("ATRIUM_RUNS_HEARTBEAT_MS")),
                        Setting.of("fanoutThreads", INTEGER, env("ATRIUM_RUNS_FANOUT_THREADS")),
                        Setting.of("pollMillis", LONG, env("ATRIUM_RUNS_POLL_MS")),
                        Setting.of("turnTimeoutSeconds", LONG, env("ATRIUM_RUNS_TURN_TIMEOUT_S")),
                        Setting.of("fetchTimeoutSeconds", LONG, env("ATRIUM_RUNS_FETCH_TIMEOUT_S")),
                        Setting.of("openaiBaseUrl", STRING, env("ATRIUM_OPENAI_BASE_URL")),
                        Setting.of("openaiApiKey", STRING, env("ATRIUM_OPENAI_API_KEY")),
                        Setting.of("anthropicBaseUrl", STRING, env("ATRIUM_ANTHROPIC_BASE_URL")),
                        Setting.of("anthropicApiKey", STRING, env("ATRIUM_ANTHROPIC_API_KEY")),
                        Setting.of("defaultProvider", STRING, env("ATRIUM_RUNS_DEFAULT_PROVIDER")),
                        Setting.of("defaultModel", STRING, env("ATRIUM_RUNS_DEFAULT_MODEL"))));
        pids.put(
                "dev.atrium.identity",
                List.of(
                        Setting.of("oidcIssuer", STRING, env("ATRIUM_OIDC_ISSUER")),
                        Setting.of("oidcClientId", STRING, env("ATRIUM_OIDC_CLIENT_ID")),
                        Setting.of("oidcClientSecret", STRING, env("ATRIUM_OIDC_CLIENT_SECRET")),
                        Setting.of("oidcName", STRING, env("ATRIUM_OIDC_NAME")),
                        Setting.of("oidcScopes", STRING, env("ATRIUM_OIDC_SCOPES"))));
        pids.put(
                "dev.atrium.billing",
                List.of(
                        Setting.of("provider", STRING, env("ATRIUM_BILLING_PROVIDER")),
                        Setting.of("plans", STRING, env("ATRIUM_BILLING_PLANS")),
                        Setting.of("topUpCurrency", STRING, env("ATRIUM_BILLING_TOPUP_CURRENCY")),
                        Setting.of("topUpMinimum", LONG, env("ATRIUM_BILLING_TOPUP_MINIMUM")),
                        Setting.of("topUpMaximum", LONG, env("ATRIUM_BILLING_TOPUP_MAXIMUM")),
                        Setting.of("gateCacheSeconds", INTEGER, env("ATRIUM_BILLING_GATE_CACHE_S")),
                        Setting.of("aggregateSeconds", INTEGER, env("ATRIUM_BILLING_AGGREGATE_S")),
                        Setting.of("reportSeconds", INTEGER, env("ATRIUM_BILLING_REPORT_S")),
                        Setting.of("outboxFlushMillis", INTEGER, env("ATRIUM_BILLING_OUTBOX_FLUSH_MS")),
                        Setting.of("sampleSeconds", INTEGER, env("ATRIUM_BILLING_SAMPLE_S")),
                        Setting.of("smtpHost", STRING, env("ATRIUM_SMTP_HOST")),
                        Setting.of("smtpPort", INTEGER, env("ATRIUM_SMTP_PORT")),
                        Setting.of("smtpSecurity", STRING, env("ATRIUM_SMTP_SECURITY")),
                        Setting.of("smtpUsername", STRING, env("ATRIUM_SMTP_USERNAME")),
                        Setting.of("smtpPassword", STRING, env("ATRIUM_SMTP_PASSWORD")),
                        Setting.of("smtpFrom", STRING, env("ATRIUM_SMTP_FROM")),
                        DATA_DIRECTORY));
        pids.put(
                "dev.atrium.billing.stripe",
                List.of(
                        Setting.of("secretKey", STRING, env("ATRIUM_STRIPE_SECRET_KEY")),
                        Setting.of("webhookSecret", STRING, env("ATRIUM_STRIPE_WEBHOOK_SECRET")),
                        Setting.of("apiBase", STRING, env("ATRIUM_STRIPE_API_BASE")),
                        Setting.of("toleranceSeconds", LONG, env("ATRIUM_STRIPE_WEBHOOK_TOLERANCE_S")),
                        Setting.of("meterEvents", STRING, env("ATRIUM_STRIPE_METER_EVENTS"))));
        pids.put("dev.atrium.oauth", List.of(Setting.of("issuer", STRING, env("ATRIUM_OAUTH_ISSUER"))));
        pids.put(
                "dev.atrium.search",
                List.of(
                        Setting.of("embeddingsBaseUrl", STRING, env("ATRIUM_EMBEDDINGS_BASE_URL")),
                        Setting.of("embeddingsApiKey", STRING, env("ATRIUM_EMBEDDINGS_API_KEY")),
                        Setting.of("embeddingsModel", STRING, env("ATRIUM_EMBEDDINGS_MODEL")),
                        Setting.of("embeddingsBatch", INTEGER, env("ATRIUM_EMBEDDINGS_BATCH")),
                        Setting.of("pollMillis", INTEGER, env("ATRIUM_SEARCH_POLL_MS")),
                        Setting.of("cacheSeconds", INTEGER, env("ATRIUM_SEARCH_CACHE_S")),
                        Setting.of("indexIntervalSeconds", INTEGER, env("ATRIUM_SEARCH_INDEX_INTERVAL_S")),
                        DATA_DIRECTORY));
        pids.put(
                "dev.atrium.storage",
                List.of(
                        Setting.of("maxFileBytes", LONG, env("ATRIUM_STORAGE_MAX_FILE_BYTES")),
                        Setting.of("quotaBytes", LONG, env("ATRIUM_STORAGE_QUOTA_BYTES")),
                        Setting.of("quotaFiles", LONG, env("ATRIUM_STORAGE_QUOTA_FILES")),
                        Setting.of("uploadTtlSeconds", LONG, env("ATRIUM_STORAGE_UPLOAD_TTL_S")),
                        Setting.of("orphanGraceSeconds", LONG, env("ATRIUM_STORAGE_ORPHAN_GRACE_S")),
                        Setting.of("sweepSeconds", LONG, env("ATRIUM_STORAGE_SWEEP_S")),
                        Setting.of("downloadUrlKey", STRING, env("ATRIUM_STORAGE_URL_KEY"))));
        return pids;
    }

    /**
     * The S3 BlobStore exists only when configured (its component requires a configuration): each setting from its
     * ATRIUM_BLOB_S3_* variable, else the framework property atrium.blob.s3.<property>.
     */
    private static List<Setting> blobS3() {
        return List.of(
                blobS3("endpoint", STRING, "ATRIUM_BLOB_S3_ENDPOINT"),
                blobS3("region", STRING, "ATRIUM_BLOB_S3_REGION"),
                blobS3("bucket", STRING, "ATRIUM_BLOB_S3_BUCKET"),
                blobS3("accessKey", STRING, "ATRIUM_BLOB_S3_ACCESS_KEY"),
                blobS3("secretKey", STRING, "ATRIUM_BLOB_S3_SECRET_KEY"),
                blobS3("pathStyle", BOOLEAN, "ATRIUM_BLOB_S3_PATH_STYLE"),
                blobS3("partSizeMiB", INTEGER, "ATRIUM_BLOB_S3_PART_SIZE_MIB"),
                blobS3("staleUploadSeconds", LONG, "ATRIUM_BLOB_S3_STALE_UPLOAD_S"),
                DATA_DIRECTORY);
    }

    private static Setting blobS3(String property, Kind kind, String variable) {
        return Setting.of(property, kind, Source.env(variable), Source.property("atrium.blob.s3." + property));
    }

    /** Each threads setting: its ATRIUM_THREADS_* variable, else the framework property atrium.threads.<property>. */
    private static List<Setting> threads() {
        List<Setting> out = new ArrayList<>();
        out.add(threads("pdfFontDirs", STRING, "ATRIUM_THREADS_PDF_FONT_DIRS"));
        out.add(threads("pdfMemoryBytes", LONG, "ATRIUM_THREADS_PDF_MEMORY_BYTES"));
        out.add(threads("shareMaxFailures", INTEGER, "ATRIUM_THREADS_SHARE_MAX_FAILURES"));
        out.add(threads("shareMaxAddressFailures", INTEGER, "ATRIUM_THREADS_SHARE_MAX_ADDRESS_FAILURES"));
        out.add(threads("shareFailureWindowSeconds", LONG, "ATRIUM_THREADS_SHARE_FAILURE_WINDOW_S"));
        out.add(threads("shareMaxGlobalFailures", INTEGER, "ATRIUM_THREADS_SHARE_MAX_GLOBAL_FAILURES"));
        out.add(threads("shareDelayAfterFailures", INTEGER, "ATRIUM_THREADS_SHARE_DELAY_AFTER_FAILURES"));
        out.add(threads("shareDelayBaseMillis", LONG, "ATRIUM_THREADS_SHARE_DELAY_BASE_MS"));
        out.add(threads("shareDelayMaxSeconds", LONG, "ATRIUM_THREADS_SHARE_DELAY_MAX_S"));
        out.add(threads("trustForwardedFor", BOOLEAN, "ATRIUM_THREADS_TRUST_FORWARDED_FOR"));
        return List.copyOf(out);
    }

    private static Setting threads(String property, Kind kind, String variable) {
        return Setting.of(property, kind, Source.env(variable), Source.property("atrium.threads." + property));
    }
}
