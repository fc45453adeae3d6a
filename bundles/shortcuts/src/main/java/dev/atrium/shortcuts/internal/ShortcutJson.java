package dev.atrium.shortcuts.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the shortcuts routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class ShortcutJson {

    private ShortcutJson() {}

    /**
     * A shortcut or a group's item as {@link Links} reads it: {@code title} (1-100) and {@code url} (a path on this
     * server or an http(s) URL) are required, {@code icon} is an optional icon name.
     */
    record Link(String title, String url, String icon) {}

    record Shortcut(
            String id,
            String title,
            String url,
            String icon,
            int position,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record OneShortcut(Shortcut shortcut) {}

    /** The caller's shortcuts, in their order. */
    record Shortcuts(List<Shortcut> shortcuts, int total) {}

    /** Every one of the caller's shortcut ids, once, in the new order. */
    record Reorder(List<String> ids) {}

    record Item(
            String id,
            @JsonProperty("group_id") String groupId,
            String title,
            String url,
            String icon,
            int position,
            @JsonProperty("created_at") Instant createdAt) {}

    record OneItem(Item item) {}

    record Group(
            String id,
            @JsonProperty("space_id") String spaceId,
            String name,
            int position,
            List<Item> items,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record OneGroup(Group group) {}

    /** A workspace's groups, in their order. */
    record Groups(List<Group> groups, int total) {}

    /** A new group: {@code name} (1-100, required) and its first items (at most 200). */
    record NewGroup(String name, List<Link> items) {}

    /** A rename and/or a move (0-based; the other groups shift): at least one of the two. */
    record GroupChange(String name, Integer position) {}

    record Deleted(boolean success) {}
}
