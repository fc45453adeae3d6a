package dev.atrium.notifications.api;

import java.util.Map;
import java.util.regex.Pattern;

/**
 * A notification to post. {@code principalId} names whom it is for; when it is null, {@code spaceId} must name a
 * workspace and its owner receives it. {@code type} is a dotted lower-case name ({@code run.finished},
 * {@code reminder.fired}); {@code title} 1-200 characters; {@code body} (at most 4,000) and {@code link} (a path on
 * this server or an http(s) URL, at most 2,000) may be null; {@code data} is a small JSON-able map (strings,
 * numbers, booleans, lists and maps of them; no null values).
 */
public record Notice(
        String principalId,
        String spaceId,
        String type,
        String title,
        String body,
        String link,
        Map<String, Object> data) {

    private static final Pattern TYPE = Pattern.compile("[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*");

    public Notice {
        if (principalId == null && spaceId == null) {
            throw new IllegalArgumentException("a notice names a Principal or a workspace");
        }
        if (type == null || type.length() > 64 || !TYPE.matcher(type).matches()) {
            throw new IllegalArgumentException(
                    "type must be a dotted lower-case name of at most 64 characters: " + type);
        }
        if (title == null || title.isBlank() || title.length() > 200) {
            throw new IllegalArgumentException("title must be 1-200 characters");
        }
        if (body != null && body.length() > 4_000) {
            throw new IllegalArgumentException("body must be at most 4000 characters");
        }
        if (link != null
                && (link.length() > 2_000
                        || !(link.startsWith("/") || link.startsWith("https://") || link.startsWith("http://")))) {
            throw new IllegalArgumentException(
                    "link must be a path on this server or an http(s) URL of at most 2000 characters");
        }
        data = data == null ? Map.of() : Map.copyOf(data);
    }

    /** A notice for a Principal. */
    public static Notice toPrincipal(String principalId, String type, String title) {
        if (principalId == null) {
            throw new IllegalArgumentException("principalId is required");
        }
        return new Notice(principalId, null, type, title, null, null, Map.of());
    }

    /** A notice for the owner of a workspace, about that workspace. */
    public static Notice toSpaceOwner(String spaceId, String type, String title) {
        if (spaceId == null) {
            throw new IllegalArgumentException("spaceId is required");
        }
        return new Notice(null, spaceId, type, title, null, null, Map.of());
    }

    /** The same notice, about workspace {@code spaceId}. */
    public Notice inSpace(String spaceId) {
        return new Notice(principalId, spaceId, type, title, body, link, data);
    }

    public Notice withBody(String body) {
        return new Notice(principalId, spaceId, type, title, body, link, data);
    }

    public Notice withLink(String link) {
        return new Notice(principalId, spaceId, type, title, body, link, data);
    }

    public Notice withData(Map<String, Object> data) {
        return new Notice(principalId, spaceId, type, title, body, link, data);
    }
}
