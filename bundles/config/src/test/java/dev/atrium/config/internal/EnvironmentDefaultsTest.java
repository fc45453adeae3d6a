package dev.atrium.config.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Path;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EnvironmentDefaultsTest {

    private static Dictionary<String, Object> deliver(
            Map<String, String> env, Map<String, String> props, String pid, Map<String, Object> operator) {
        Hashtable<String, Object> configuration = new Hashtable<>(operator);
        configuration.put("service.pid", pid);
        new EnvironmentDefaults(Settings.all(), env::get, props::get).modifyConfiguration(null, configuration);
        return configuration;
    }

    @Test
    void theS3BlobStoreIsConfiguredByItsVariablesOrFrameworkProperties() {
        Dictionary<String, Object> s3 = deliver(
                Map.of(
                        "ATRIUM_BLOB_S3_ENDPOINT",
                        "http://127.0.0.1:9000",
                        "ATRIUM_BLOB_S3_BUCKET",
                        "blobs",
                        "ATRIUM_BLOB_S3_ACCESS_KEY",
                        "id",
                        "ATRIUM_BLOB_S3_SECRET_KEY",
                        "secret",
                        "ATRIUM_BLOB_S3_PATH_STYLE",
                        "false",
                        "ATRIUM_BLOB_S3_PART_SIZE_MIB",
                        "16"),
                Map.of("atrium.blob.s3.region", "eu-west-3"),
                "dev.atrium.blob.s3",
                Map.of());
        assertEquals("http://127.0.0.1:9000", s3.get("endpoint"));
        assertEquals("blobs", s3.get("bucket"));
        assertEquals("id", s3.get("accessKey"));
        assertEquals("secret", s3.get("secretKey"));
        assertEquals(Boolean.FALSE, s3.get("pathStyle"));
        assertEquals(16, s3.get("partSizeMiB"));
        assertEquals("eu-west-3", s3.get("region"));
        assertEquals(Path.of("data").toAbsolutePath().toString(), s3.get("dataDirectory"));
        assertEquals(
                Map.of(
                        "dev.atrium.blob.s3",
                        "bucket",
                        "dev.atrium.resource.kv.redis",
                        "url",
                        "dev.atrium.resource.queue.nats",
                        "url"),
                Settings.madeOnlyWhenSet(),
                "only a bucket makes the S3 store exist, only a URL the Redis kv backend");
    }

    @Test
    void environmentValuesArriveTyped() {
        Dictionary<String, Object> runs = deliver(
                Map.of("ATRIUM_RUNS_WORKERS", " 0 ", "ATRIUM_RUNS_HEARTBEAT_MS", "250", "ATRIUM_OPENAI_API_KEY", "sk"),
                Map.of(),
                "dev.atrium.runs",
                Map.of());
        assertEquals(0, runs.get("workers"));
        assertEquals(250L, runs.get("heartbeatMillis"));
        assertEquals("sk", runs.get("openaiApiKey"));
        assertNull(runs.get("stepLimit"));
        Dictionary<String, Object> egress =
                deliver(Map.of("ATRIUM_EGRESS_ALLOW_LOOPBACK", "TRUE"), Map.of(), "dev.atrium.kernel.egress", Map.of());
        assertEquals(Boolean.TRUE, egress.get("allowLoopback"));
    }

    @Test
    void blankOrMalformedIsUnsetSoTheComponentDefaultApplies() {
        Dictionary<String, Object> git =
                deliver(Map.of("ATRIUM_GIT_MAX_BODY_BYTES", "lots"), Map.of(), "dev.atrium.git.http", Map.of());
        assertNull(git.get("maxBodyBytes"));
        Dictionary<String, Object> runs = deliver(
                Map.of("ATRIUM_RUNS_WORKERS", "  ", "ATRIUM_OPENAI_API_KEY", ""),
                Map.of(),
                "dev.atrium.runs",
                Map.of());
        assertNull(runs.get("workers"));
        assertNull(runs.get("openaiApiKey"));
    }

    @Test
    void theOperatorsPropertyWinsAndTheOthersStillComeFromTheEnvironment() {
        Dictionary<String, Object> runs = deliver(
                Map.of("ATRIUM_RUNS_WORKERS", "7", "ATRIUM_OPENAI_API_KEY", "sk"),
                Map.of(),
                "dev.atrium.runs",
                Map.of("workers", 2));
        assertEquals(2, runs.get("workers"));
        assertEquals("sk", runs.get("openaiApiKey"));
        Dictionary<String, Object> git = deliver(
                Map.of("ATRIUM_GIT_MAX_BODY_BYTES", "999"),
                Map.of(),
                "dev.atrium.git.http",
                Map.of("maxBodyBytes", "4096"));
        assertEquals("4096", git.get("maxBodyBytes"));
    }

    @Test
    void theDataDirectoryIsResolvedOnceForEveryPidThatNeedsIt() {
        Map<String, String> env = Map.of("ATRIUM_DATA", "/env/data");
        for (String pid : new String[] {
            "dev.atrium.database",
            "dev.atrium.kernel.operator",
            "dev.atrium.operations",
            "dev.atrium.repos",
            "dev.atrium.blob.fs"
        }) {
            assertEquals(
                    "/flag/data",
                    deliver(env, Map.of("atrium.data", "/flag/data"), pid, Map.of())
                            .get("dataDirectory"));
            assertEquals("/env/data", deliver(env, Map.of(), pid, Map.of()).get("dataDirectory"));
            assertEquals(
                    Path.of("data").toAbsolutePath().toString(),
                    deliver(Map.of(), Map.of(), pid, Map.of()).get("dataDirectory"));
        }
    }

    @Test
    void frameworkPropertiesComeBeforeOrAfterTheEnvironmentAsDocumented() {
        // the database: --db-url (the framework property) before ATRIUM_DB_URL; threads: ATRIUM_THREADS_* first
        assertEquals(
                "jdbc:flag",
                deliver(
                                Map.of("ATRIUM_DB_URL", "jdbc:env"),
                                Map.of("atrium.db.url", "jdbc:flag"),
                                "dev.atrium.database",
                                Map.of())
                        .get("url"));
        assertEquals(
                65536L,
                deliver(Map.of(), Map.of("atrium.threads.pdfMemoryBytes", "65536"), "dev.atrium.threads", Map.of())
                        .get("pdfMemoryBytes"));
        assertEquals(
                5L,
                deliver(
                                Map.of("ATRIUM_THREADS_PDF_MEMORY_BYTES", "5"),
                                Map.of("atrium.threads.pdfMemoryBytes", "65536"),
                                "dev.atrium.threads",
                                Map.of())
                        .get("pdfMemoryBytes"));
    }

    @Test
    void otherPidsAreLeftAlone() {
        Dictionary<String, Object> other =
                deliver(Map.of("ATRIUM_RUNS_WORKERS", "3"), Map.of(), "org.example", Map.of("a", "b"));
        assertEquals(2, other.size());
    }

    @Test
    void eachValueFromTheEnvironmentIsDeliveredWithTheNameOfItsSource() {
        Dictionary<String, Object> git =
                deliver(Map.of("ATRIUM_GIT_MAX_BODY_BYTES", "4096"), Map.of(), "dev.atrium.git.http", Map.of());
        assertEquals(4096L, git.get("maxBodyBytes"));
        assertEquals(
                "environment variable ATRIUM_GIT_MAX_BODY_BYTES",
                git.get(EnvironmentDefaults.SOURCE_PREFIX + "maxBodyBytes"));
        Dictionary<String, Object> operator = deliver(
                Map.of("ATRIUM_GIT_MAX_BODY_BYTES", "4096"),
                Map.of(),
                "dev.atrium.git.http",
                Map.of("maxBodyBytes", 9L));
        assertNull(operator.get(EnvironmentDefaults.SOURCE_PREFIX + "maxBodyBytes"), "the operator's value has none");
    }
}
