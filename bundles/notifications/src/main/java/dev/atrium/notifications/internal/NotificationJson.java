package dev.atrium.notifications.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The JSON the notifications routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class NotificationJson {

    private NotificationJson() {}

    /**
     * A notification ({@link NotificationStore.Notification}); {@code seq} is its position in its Principal's stream,
     * {@code data} what its poster attached.
     */
    record View(
            String id,
            long seq,
            String type,
            String title,
            String body,
            String link,
            Map<String, Object> data,
            @JsonProperty("space_id") String spaceId,
            boolean read,
            @JsonProperty("read_at") Instant readAt,
            boolean silent,
            @JsonProperty("created_at") Instant createdAt) {}

    /** One notification; the test notification's is null when the caller's preferences turn it off. */
    record One(View notification) {}

    record Page(
            List<View> notifications,
            long total,
            int limit,
            int offset,
            @JsonProperty("unread_count") long unreadCount) {}

    record UnreadCount(@JsonProperty("unread_count") long unreadCount) {}

    /** The optional body of a test notification. */
    record Test(String title, String body) {}

    /** The optional body of marking one: {@code read: false} marks it unread again (default true). */
    record Read(Boolean read) {}

    record Marked(
            View notification, @JsonProperty("unread_count") long unreadCount) {}

    /** Either {@code ids} (1 to 500, all or none) or {@code all: true}, optionally of a {@code type}. */
    record MarkMany(List<String> ids, Boolean all, String type) {}

    record MarkedMany(
            boolean success,
            int updated,
            @JsonProperty("unread_count") long unreadCount) {}

    /** Every known type with its setting (on by default), and the types the Principal set. */
    record Preferences(boolean enabled, Map<String, Boolean> types) {}

    record OnePreferences(Preferences preferences) {}

    /** A change of preferences: {@code types} is merged into the Principal's. */
    record PreferencesChange(Boolean enabled, Map<String, Boolean> types) {}

    /** The preferences with the mute: {@code muted_until} is null when not muted now. */
    record Settings(
            boolean enabled,
            Map<String, Boolean> types,
            @JsonProperty("muted_until") Instant mutedUntil,
            boolean muted,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record OneSettings(Settings settings) {}

    /** A change of settings: {@code muted_until} an ISO-8601 instant, or null to unmute. */
    record SettingsChange(
            Boolean enabled,
            Map<String, Boolean> types,
            @JsonProperty("muted_until") Instant mutedUntil) {}
}
