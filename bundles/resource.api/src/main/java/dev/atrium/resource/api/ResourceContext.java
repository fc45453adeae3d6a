package dev.atrium.resource.api;

import dev.atrium.blob.api.BlobStore;
import java.nio.file.Path;
import java.util.Map;
import javax.sql.DataSource;
import org.osgi.annotation.versioning.ProviderType;

/**
 * One resource, as the core hands it to its provider for one call. The core made it after authorising the caller:
 * {@link #access()} is what the caller may do, and a provider enforces it where its backend can (a read-only SQL
 * connection, say), never by trusting its own reading of the request.
 */
@ProviderType
public interface ResourceContext {

    /** The resource's id (stable for its life; use it to name your storage). */
    String resourceId();

    /** The id of the workspace that owns the resource. */
    String workspaceId();

    /** The resource's name, unique in its workspace (it may change on update: do not name storage after it). */
    String name();

    /** The resource type. */
    String type();

    /** The resource's configuration, validated against the provider's {@link ConfigSchema} (defaults filled in). */
    Map<String, Object> config();

    /** What the provider returned from {@link ResourceProvider#provision}, as stored with the resource. */
    Map<String, Object> state();

    /** What the caller may do in this call. */
    Access access();

    /**
     * The server's PostgreSQL. A provider that keeps data there creates its own tables (prefix their names with the
     * provider's type and backend) and keeps rows of different resources apart by {@link #resourceId()}.
     */
    DataSource dataSource();

    /**
     * The server's blob store.
     *
     * @throws ResourceException {@link ResourceException.Kind#UNAVAILABLE} when no blob store is running
     */
    BlobStore blobStore() throws ResourceException;

    /** A directory only this resource's provider uses, created on first call; deleted with the resource. */
    Path dataDirectory() throws ResourceException;

    /** Where to report usage for metering. */
    UsageMeter usage();
}
