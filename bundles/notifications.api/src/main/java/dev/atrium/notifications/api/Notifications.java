package dev.atrium.notifications.api;

import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Posts notifications. Registered by the notifications capability while it is enabled; a poster references it with
 * an optional, dynamic reference and posts only when it is there.
 */
@ProviderType
public interface Notifications {

    /**
     * Stores the notice for its Principal (or, when it names only a workspace, for that workspace's owner) and
     * delivers it to the Principal's live streams on every instance.
     *
     * @return the new notification's id; empty when nothing was stored: the Principal turned notifications or this
     *         type off, or the workspace has no active owner
     * @throws IllegalArgumentException when the notice is malformed (see {@link Notice})
     */
    Optional<String> post(Notice notice);
}
