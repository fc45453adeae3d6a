package dev.atrium.resource.api;

import dev.atrium.blob.api.BlobStore;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * A resource as a provider's own tests hand it over: a fresh id per instance, the backends the test passes, and a
 * usage meter the test can read. (The core's real context is what the integration tests use.)
 */
public final class TestResourceContext implements ResourceContext {

    private final String resourceId;
    private final DataSource dataSource;
    private final Path dataDirectory;
    private final Map<String, Object> config;
    private final Map<String, AtomicLong> usage = new ConcurrentHashMap<>();
    /** The metrics providers asked the gate about, in order. */
    public final java.util.List<String> admitted = new java.util.concurrent.CopyOnWriteArrayList<>();

    public TestResourceContext(DataSource dataSource, Path dataDirectory, Map<String, Object> config) {
        this(UUID.randomUUID().toString(), dataSource, dataDirectory, config);
    }

    /** The resource {@code resourceId} again (another process's view of the same resource, say). */
    public TestResourceContext(
            String resourceId, DataSource dataSource, Path dataDirectory, Map<String, Object> config) {
        this.resourceId = resourceId;
        this.dataSource = dataSource;
        this.dataDirectory = dataDirectory;
        this.config = Map.copyOf(config);
    }

    /** What was recorded under {@code metric}. */
    public long used(String metric) {
        AtomicLong counted = usage.get(metric);
        return counted == null ? 0 : counted.get();
    }

    @Override
    public String resourceId() {
        return resourceId;
    }

    @Override
    public String workspaceId() {
        return "test-workspace";
    }

    @Override
    public String name() {
        return "test-" + resourceId.substring(0, 8);
    }

    @Override
    public String type() {
        return "test";
    }

    @Override
    public Map<String, Object> config() {
        return config;
    }

    @Override
    public Map<String, Object> state() {
        return Map.of();
    }

    @Override
    public Access access() {
        return Access.ADMIN;
    }

    @Override
    public DataSource dataSource() {
        if (dataSource == null) {
            throw new IllegalStateException("this test gave the provider no DataSource");
        }
        return dataSource;
    }

    @Override
    public BlobStore blobStore() throws ResourceException {
        throw ResourceException.unavailable("this test gave the provider no blob store", null);
    }

    @Override
    public Path dataDirectory() {
        if (dataDirectory == null) {
            throw new IllegalStateException("this test gave the provider no data directory");
        }
        return dataDirectory;
    }

    @Override
    public UsageMeter usage() {
        return new UsageMeter() {
            @Override
            public void record(String metric, long amount) {
                usage.computeIfAbsent(metric, m -> new AtomicLong()).addAndGet(amount);
            }

            @Override
            public void admit(String metric) {
                admitted.add(metric);
            }
        };
    }
}
