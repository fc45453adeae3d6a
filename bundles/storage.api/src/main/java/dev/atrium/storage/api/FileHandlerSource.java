package dev.atrium.storage.api;

import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A whiteboard service contributing file handlers to workspaces: storage asks every registered source each time it
 * lists a workspace's handlers ({@code GET /api/spaces/:spaceId/storage/file-handlers}), after its built-in ones. A
 * source answers from its own store, so every server of a cluster lists the same handlers.
 */
@ConsumerType
public interface FileHandlerSource {

    /** The handlers offered in workspace {@code spaceId} (proven by the kernel before storage asks); never null. */
    List<FileHandler> handlers(String spaceId);

    /**
     * A handler: {@code id} unique among all handlers, the {@code appId} offering it, the media types ({@code
     * image/*} allowed) and extensions (without their dot) it opens, and the {@code url} a file is opened at.
     */
    record FileHandler(
            String id, String name, String appId, List<String> mimeTypes, List<String> extensions, String url) {
        public FileHandler {
            mimeTypes = List.copyOf(mimeTypes);
            extensions = List.copyOf(extensions);
        }
    }
}
