package dev.atrium.search.api;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Items of one kind that workspace search covers (memories, thread messages, …), registered as a service by the
 * capability that owns them. The search capability reads {@link #changes} from a cursor it keeps in the database, so
 * an item changed while search was stopped is indexed when it starts again; it asks {@link #current} for the items an
 * answer would show, so a deleted item is never shown and is dropped from the index then.
 */
@ConsumerType
public interface IndexSource {

    /** The kind of every item of this source, e.g. {@code memory}; unique among sources. */
    String kind();

    /**
     * Items created or changed at or after {@code since}, ordered by {@code (changedAt, id)} and strictly after
     * {@code (since, afterId)} in that order, at most {@code limit} of them, of every workspace.
     *
     * @param afterId the id of the last item already read at {@code since}, or {@code ""} to read from {@code since} on
     */
    List<Item> changes(Instant since, String afterId, int limit);

    /**
     * Every item of workspace {@code spaceId}, ordered by id and strictly after {@code afterId}, at most {@code limit}:
     * a workspace whose content arrived with times earlier than the cursor (an import) is read this way. A source
     * that cannot list by workspace returns none.
     *
     * @since 1.1
     */
    default List<Item> inSpace(String spaceId, String afterId, int limit) {
        return List.of();
    }

    /** Those of {@code ids} that still exist in workspace {@code spaceId}, as they are now, by id. */
    Map<String, Item> current(String spaceId, Collection<String> ids);

    /**
     * An item as search indexes and shows it.
     *
     * @param parentId  the item it belongs to ({@code thread:<id>} for a message), or null
     * @param title     a short name (a thread's title, a file's path), or null
     * @param text      the text searched
     * @param changedAt when it was created or last changed
     */
    record Item(String id, String spaceId, String parentId, String title, String text, Instant changedAt) {}
}
