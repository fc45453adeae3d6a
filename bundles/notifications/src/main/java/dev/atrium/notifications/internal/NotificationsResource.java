package dev.atrium.notifications.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.notifications.api.Notice;
import dev.atrium.notifications.api.Notifications;
import dev.atrium.notifications.internal.NotificationStore.Notification;
import dev.atrium.notifications.internal.NotificationStore.Settings;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/notifications}: the caller's own notifications. They belong to the Principal the kernel
 * authenticated ({@link Caller#principalId()}); another Principal's notification is the same 404 as a missing one.
 * Like the account's other endpoints they declare no scope: a limited token may read them but not change them.
 */
@Component(service = NotificationsResource.class)
@KernelResource
@Path("/api/notifications")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class NotificationsResource {

    static final Pattern TYPE = Pattern.compile("[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*");
    static final int MAX_IDS = 500;
    /** Types a Principal may set, all PATCHes together. */
    static final int MAX_TYPES = 100;

    private static final String NOT_FOUND = "notification not found";

    private final NotificationStore store;
    private final Notifications notifications;

    @Activate
    public NotificationsResource(@Reference NotificationStore store, @Reference Notifications notifications) {
        this.store = store;
        this.notifications = notifications;
    }

    /**
     * Sends the caller a test notification (type {@code notification.test}) through the same service other
     * capabilities post with: what "send a test notification" in a settings page does. The body is optional
     * ({@code {title, body}}). 201 with the notification; 200 with {@code notification: null} when the caller's
     * preferences turn notifications (or this type) off.
     */
    @POST
    @Path("test")
    @Consumes(MediaType.WILDCARD)
    @JsonShape(NotificationJson.One.class)
    public javax.ws.rs.core.Response test(
            @Context SecurityContext sc, @JsonShape(NotificationJson.Test.class) String raw) {
        String principal = Caller.from(sc).principalId();
        String title = "Test notification";
        String text = null;
        if (raw != null && !raw.isBlank()) {
            JsonNode body = parse(raw, "{\"title\": \"...\", \"body\": \"...\"}");
            NulText.reject(body);
            JsonBody b = JsonBody.of(body);
            rejectUnknown(body, Set.of("title", "body"));
            title = b.optionalText("title", 1, 200).orElse(title);
            text = b.optionalText("body", 0, 4_000).filter(t -> !t.isEmpty()).orElse(null);
        }
        var id = notifications.post(
                Notice.toPrincipal(principal, "notification.test", title).withBody(text));
        if (id.isEmpty()) {
            Map<String, Object> none = new LinkedHashMap<>();
            none.put("notification", null);
            return javax.ws.rs.core.Response.ok(none).build();
        }
        return javax.ws.rs.core.Response.status(201)
                .entity(Map.of(
                        "notification",
                        store.get(principal, id.get())
                                .orElseThrow(() -> ApiException.notFound(NOT_FOUND))
                                .toJson()))
                .build();
    }

    private static JsonNode parse(String raw, String shape) {
        try {
            return NotificationStore.JSON.readTree(raw);
        } catch (java.io.IOException e) {
            throw ApiException.badRequest("the body must be JSON: " + shape);
        }
    }

    @RequiresScope("account:read")
    @GET
    @JsonShape(NotificationJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @QueryParam("read") String read,
            @QueryParam("type") String type,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        String principal = Caller.from(sc).principalId();
        Boolean readFilter = readFilter(read);
        String typeFilter = type(type);
        PageRequest page = PageRequest.of(limit, offset);
        // one snapshot: a notification posted meanwhile is in the page, the total and the unread count, or in none
        NotificationStore.Page found = store.page(principal, readFilter, typeFilter, page.limit(), page.offset());
        Map<String, Object> body = page.body(
                "notifications",
                found.items().stream().map(Notification::toJson).toList(),
                found.total());
        body.put("unread_count", found.unread());
        return body;
    }

    @RequiresScope("account:read")
    @GET
    @Path("unread-count")
    @JsonShape(NotificationJson.UnreadCount.class)
    public Map<String, Object> unreadCount(@Context SecurityContext sc, @QueryParam("type") String type) {
        return Map.of("unread_count", store.count(Caller.from(sc).principalId(), false, type(type)));
    }

    /** The body is optional ({@code {"read": false}} marks it unread again): a bare PATCH marks it read. */
    @PATCH
    @Path("{id}/read")
    @Consumes(MediaType.WILDCARD)
    @JsonShape(NotificationJson.Marked.class)
    public Map<String, Object> markRead(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(NotificationJson.Read.class) String raw) {
        String principal = Caller.from(sc).principalId();
        boolean read = true;
        if (raw != null && !raw.isBlank()) {
            JsonNode body = parse(raw, "{\"read\": true|false}");
            NulText.reject(body);
            JsonBody b = JsonBody.of(body);
            rejectUnknown(body, Set.of("read"));
            read = b.bool("read").orElse(true);
        }
        Notification n = store.markRead(principal, id, read).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("notification", n.toJson());
        m.put("unread_count", store.count(principal, false, null));
        return m;
    }

    /** Several at once ({@code {"ids": [...]}}, all or none) or every unread one ({@code {"all": true}}, optionally of a {@code type}). */
    @POST
    @Path("read")
    @JsonShape(NotificationJson.MarkedMany.class)
    public Map<String, Object> markManyRead(
            @Context SecurityContext sc, @JsonShape(NotificationJson.MarkMany.class) JsonNode body) {
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        String principal = Caller.from(sc).principalId();
        boolean all = b.bool("all").orElse(false);
        JsonNode idsNode = body.get("ids");
        boolean hasIds = idsNode != null && !idsNode.isNull();
        if (all == hasIds) {
            throw ApiException.badRequest("send either ids (an array of notification ids) or all: true");
        }
        int updated;
        if (all) {
            updated = store.markAllRead(principal, type(b.string("type").orElse(null)));
        } else {
            if (b.has("type")) {
                throw ApiException.badRequest("type goes with all: true only");
            }
            if (!idsNode.isArray() || idsNode.isEmpty() || idsNode.size() > MAX_IDS) {
                throw ApiException.badRequest("ids must be an array of 1 to " + MAX_IDS + " notification ids");
            }
            List<String> ids = new ArrayList<>();
            for (JsonNode id : idsNode) {
                if (!id.isTextual()
                        || id.textValue().isEmpty()
                        || id.textValue().length() > 64) {
                    throw ApiException.badRequest("ids must be an array of notification ids (strings)");
                }
                ids.add(id.textValue());
            }
            updated = store.markRead(principal, ids).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("success", true);
        m.put("updated", updated);
        m.put("unread_count", store.count(principal, false, null));
        return m;
    }

    @RequiresScope("account:read")
    @GET
    @Path("preferences")
    @JsonShape(NotificationJson.OnePreferences.class)
    public Map<String, Object> preferences(@Context SecurityContext sc) {
        return Map.of(
                "preferences", preferencesJson(store.settings(Caller.from(sc).principalId())));
    }

    @PATCH
    @Path("preferences")
    @JsonShape(NotificationJson.OnePreferences.class)
    public Map<String, Object> updatePreferences(
            @Context SecurityContext sc, @JsonShape(NotificationJson.PreferencesChange.class) JsonNode body) {
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        rejectUnknown(body, Set.of("enabled", "types"));
        Settings s = update(
                Caller.from(sc).principalId(), b.bool("enabled").orElse(null), types(body.get("types")), false, null);
        return Map.of("preferences", preferencesJson(s));
    }

    private Settings update(
            String principal, Boolean enabled, Map<String, Boolean> types, boolean setMute, Instant mutedUntil) {
        if (types != null) {
            java.util.Set<String> all =
                    new java.util.HashSet<>(store.settings(principal).types().keySet());
            all.addAll(types.keySet());
            if (all.size() > MAX_TYPES) {
                throw ApiException.badRequest("at most " + MAX_TYPES + " notification types may be set");
            }
        }
        return store.update(principal, enabled, types, setMute, mutedUntil);
    }

    @RequiresScope("account:read")
    @GET
    @Path("settings")
    @JsonShape(NotificationJson.OneSettings.class)
    public Map<String, Object> settings(@Context SecurityContext sc) {
        return Map.of("settings", settingsJson(store.settings(Caller.from(sc).principalId())));
    }

    @PATCH
    @Path("settings")
    @JsonShape(NotificationJson.OneSettings.class)
    public Map<String, Object> updateSettings(
            @Context SecurityContext sc, @JsonShape(NotificationJson.SettingsChange.class) JsonNode body) {
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        rejectUnknown(body, Set.of("enabled", "types", "muted_until"));
        boolean setMute = body.has("muted_until");
        Instant mutedUntil = null;
        if (setMute && !body.get("muted_until").isNull()) {
            String text = b.string("muted_until").orElseThrow();
            try {
                mutedUntil = Instant.parse(text);
            } catch (DateTimeParseException e) {
                throw ApiException.badRequest(
                        "muted_until must be an ISO-8601 UTC timestamp (2026-01-31T18:00:00Z) or null");
            }
            if (mutedUntil.isAfter(Instant.parse("9999-12-31T23:59:59Z"))) {
                throw ApiException.badRequest("muted_until is too far in the future");
            }
        }
        Settings s = update(
                Caller.from(sc).principalId(),
                b.bool("enabled").orElse(null),
                types(body.get("types")),
                setMute,
                mutedUntil);
        return Map.of("settings", settingsJson(s));
    }

    private static Map<String, Object> preferencesJson(Settings s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("enabled", s.enabled());
        m.put("types", s.allTypes());
        return m;
    }

    private static Map<String, Object> settingsJson(Settings s) {
        Map<String, Object> m = preferencesJson(s);
        Instant now = Instant.now();
        m.put("muted_until", s.mutedAt(now) ? s.mutedUntil().toString() : null);
        m.put("muted", s.mutedAt(now));
        m.put("updated_at", s.updatedAt() == null ? null : s.updatedAt().toString());
        return m;
    }

    private static void rejectUnknown(JsonNode body, Set<String> allowed) {
        body.fieldNames().forEachRemaining(f -> {
            if (!allowed.contains(f)) {
                throw ApiException.badRequest(
                        "unknown field " + f + "; allowed: " + String.join(", ", new java.util.TreeSet<>(allowed)));
            }
        });
    }

    /** {@code {"run.finished": false, ...}}: type names to booleans; null when absent. */
    private static Map<String, Boolean> types(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isObject()) {
            throw ApiException.badRequest("types must be an object of notification types to booleans");
        }
        if (node.size() > 100) {
            throw ApiException.badRequest("types may name at most 100 notification types");
        }
        Map<String, Boolean> types = new TreeMap<>();
        var fields = node.fields();
        while (fields.hasNext()) {
            var e = fields.next();
            if (e.getKey().length() > 64 || !TYPE.matcher(e.getKey()).matches()) {
                throw ApiException.badRequest(
                        "types: " + e.getKey() + " is not a notification type (dotted lower-case names)");
            }
            if (!e.getValue().isBoolean()) {
                throw ApiException.badRequest("types: " + e.getKey() + " must be true or false");
            }
            types.put(e.getKey(), e.getValue().booleanValue());
        }
        return types;
    }

    private static Boolean readFilter(String read) {
        if (read == null || read.isBlank()) {
            return null;
        }
        return switch (read.trim()) {
            case "true" -> true;
            case "false" -> false;
            default -> throw ApiException.badRequest("read must be true or false");
        };
    }

    private static String type(String type) {
        if (type == null || type.isBlank()) {
            return null;
        }
        if (type.length() > 64 || !TYPE.matcher(type).matches()) {
            throw ApiException.badRequest("type must be a notification type such as run.finished");
        }
        return type;
    }
}
