package dev.atrium.storage.api;

import java.io.IOException;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Files another capability writes into a workspace's storage on its owner's behalf (an agent tool saving what it
 * made). The caller has already proven the workspace for the Principal it acts for (an agent tool's context is);
 * storage applies its own limits (file size, quota) and path rules.
 *
 * @since 1.1
 */
@ProviderType
public interface WorkspaceFiles {

    /**
     * Writes {@code content} at {@code path} (folders are made; an existing file is replaced).
     *
     * @param path        a relative path such as {@code shots/page.png}
     * @param contentType the media type, or null to guess it from the name
     * @throws IOException when the path is not allowed, the file is too large, the quota is reached or the bytes
     *                     cannot be stored (the message says which)
     */
    StoredFile write(String spaceId, String path, byte[] content, String contentType) throws IOException;

    /** A file as stored. */
    record StoredFile(String id, String path, long size, String sha256) {}
}
