package dev.atrium.threads.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.PasswordHasher;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.threads.api.Threads.Message;
import dev.atrium.threads.internal.ThreadStore.Share;
import dev.atrium.threads.internal.ThreadStore.StoredMessage;
import dev.atrium.threads.internal.ThreadStore.Thread;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.StreamingOutput;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/threads/:id}: every route loads the thread, resolves its workspace and proves it through the
 * kernel's owner scope, so another Principal's thread answers exactly as a missing one (404).
 */
@Component(service = ThreadResource.class)
@KernelResource
@Path("/api/threads/{id}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ThreadResource {

    /** A share lives at most 366 days (expires_in and expires_at alike). */
    static final long MAX_SHARE_SECONDS = 366L * 86400;

    static final int MAX_EXPORT_MESSAGES = 10_000;
    static final long MAX_EXPORT_CHARS = 8L * 1024 * 1024;

    static final int MAX_CONTENT = 100_000;
    static final Set<String> SHARE_MODES = Set.of("public", "password");

    private final ThreadsService threads;
    private final ThreadStore store;
    private final PdfFonts fonts;

    @Activate
    public ThreadResource(@Reference ThreadsService threads, @Reference ThreadStore store, @Reference PdfFonts fonts) {
        this.threads = threads;
        this.store = store;
        this.fonts = fonts;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(ThreadJson.OneThread.class)
    public Map<String, Object> get(@Context SecurityContext sc, @PathParam("id") String id) {
        return Map.of("thread", threads.owned(Caller.from(sc), id).toJson());
    }

    @PATCH
    @RequiresScope("threads:write")
    @JsonShape(ThreadJson.OneThread.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ThreadJson.ThreadInput.class) JsonNode body) {
        NulText.reject(body);
        Thread t = threads.owned(Caller.from(sc), id);
        JsonBody b = JsonBody.of(body);
        String title =
                b.optionalText("title", 1, SpaceThreadsResource.MAX_TITLE).orElse(null);
        String locale = b.optionalText("locale", 1, 35).orElse(null);
        String status = b.oneOf("status", SpaceThreadsResource.STATUSES).orElse(null);
        Integer contextWindow = contextWindow(body);
        return Map.of(
                "thread",
                store.update(t.id(), title, locale, status, contextWindow)
                        .orElseThrow(() -> ApiException.notFound(ThreadsService.NOT_FOUND))
                        .toJson());
    }

    @DELETE
    @RequiresScope("threads:write")
    @JsonShape(ThreadJson.Success.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("id") String id) {
        if (!store.delete(threads.owned(Caller.from(sc), id).id())) {
            throw ApiException.notFound(ThreadsService.NOT_FOUND);
        }
        return Map.of("success", true);
    }

    @POST
    @Path("archive")
    @RequiresScope("threads:write")
    @JsonShape(ThreadJson.OneThread.class)
    public Map<String, Object> archive(@Context SecurityContext sc, @PathParam("id") String id) {
        Thread t = threads.owned(Caller.from(sc), id);
        return Map.of(
                "thread",
                store.update(t.id(), null, null, "archived", null).orElseThrow().toJson());
    }

    @POST
    @Path("unarchive")
    @RequiresScope("threads:write")
    @JsonShape(ThreadJson.OneThread.class)
    public Map<String, Object> unarchive(@Context SecurityContext sc, @PathParam("id") String id) {
        Thread t = threads.owned(Caller.from(sc), id);
        return Map.of(
                "thread",
                store.update(t.id(), null, null, "active", null).orElseThrow().toJson());
    }

    /** The timeline, oldest first; {@code cursor} is the {@code next_cursor} of the previous page. */
    @GET
    @Path("messages")
    @RequiresScope("threads:read")
    @JsonShape(ThreadJson.MessagePage.class)
    public Map<String, Object> messages(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit) {
        Thread t = threads.owned(Caller.from(sc), id);
        PageRequest page = PageRequest.of(limit, null);
        long after = cursor(cursor);
        List<StoredMessage> found = store.messages(t.id(), after, page.limit() + 1);
        boolean more = found.size() > page.limit();
        List<StoredMessage> items = more ? found.subList(0, page.limit()) : found;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("messages", items.stream().map(StoredMessage::toJson).toList());
        m.put("next_cursor", more ? Long.toString(items.get(items.size() - 1).seq()) : null);
        m.put("total", store.messageCount(t.id()));
        m.put("limit", page.limit());
        return m;
    }

    @POST
    @Path("messages")
    @RequiresScope("threads:write")
    @JsonShape(ThreadJson.OneMessage.class)
    public Response addMessage(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ThreadJson.MessageInput.class) JsonNode body) {
        NulText.reject(body);
        Thread t = threads.owned(Caller.from(sc), id);
        JsonBody b = JsonBody.of(body);
        String role = b.oneOf("role", ThreadsService.ROLES).orElse("user");
        String content = b.text("content", 1, MAX_CONTENT);
        return Response.status(201)
                .entity(Map.of(
                        "message", store.append(t.id(), role, content, null).toJson()))
                .build();
    }

    @GET
    @Path("messages/search")
    @RequiresScope("threads:read")
    @JsonShape(ThreadJson.MessageSearch.class)
    public Map<String, Object> searchMessages(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @QueryParam("q") String q,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        Thread t = threads.owned(Caller.from(sc), id);
        SpaceThreadsResource.checkQuery(q);
        PageRequest page = PageRequest.of(limit, offset);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(
                "messages",
                store.searchMessages(t.id(), q, page.limit(), page.offset()).stream()
                        .map(StoredMessage::toJson)
                        .toList());
        m.put("query", q);
        m.put("limit", page.limit());
        m.put("offset", page.offset());
        return m;
    }

    /**
     * Creates a share: {@code mode} public (default) or password (with {@code password}, 8–200 characters), expiring
     * when {@code expires_at} (ISO 8601, in the future) or {@code expires_in} (seconds) is given. The token is shown once.
     */
    @POST
    @Path("share")
    @RequiresScope("threads:write")
    @JsonShape(ThreadJson.OneCreatedShare.class)
    public Response share(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ThreadJson.ShareInput.class) JsonNode body) {
        NulText.reject(body);
        Thread t = threads.owned(Caller.from(sc), id);
        JsonBody b = JsonBody.of(
                body == null || body.isNull()
                        ? com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode()
                        : body);
        String mode = b.oneOf("mode", SHARE_MODES).orElse(b.has("password") ? "password" : "public");
        String passwordHash = null;
        if (mode.equals("password")) {
            String password = b.string("password")
                    .orElseThrow(() -> ApiException.badRequest("password is required for a password share"));
            if (password.length() < 8 || password.length() > 200) {
                throw ApiException.badRequest("password must be 8 to 200 characters");
            }
            passwordHash = PasswordHasher.hash(password.toCharArray()).encoded();
        } else if (b.has("password")) {
            throw ApiException.badRequest("a public share takes no password");
        }
        Instant expires = null;
        if (b.has("expires_at")) {
            try {
                expires = java.time.OffsetDateTime.parse(b.requiredString("expires_at"))
                        .toInstant();
            } catch (DateTimeParseException e) {
                throw ApiException.badRequest("expires_at must be an ISO 8601 date-time with an offset");
            }
        } else if (b.has("expires_in")) {
            JsonNode v = body.get("expires_in");
            if (!v.canConvertToLong() || !v.isIntegralNumber() || v.asLong() < 1 || v.asLong() > MAX_SHARE_SECONDS) {
                throw ApiException.badRequest("expires_in must be a number of seconds between 1 and 31622400");
            }
            expires = Instant.now().plusSeconds(v.asLong());
        }
        if (expires != null && !expires.isAfter(Instant.now())) {
            throw ApiException.badRequest("expires_at must lie in the future");
        }
        if (expires != null && expires.isAfter(Instant.now().plusSeconds(MAX_SHARE_SECONDS))) {
            throw ApiException.badRequest("expires_at must lie at most 366 days ahead");
        }
        String token = Ids.random("ats_", 32);
        Share share = store.createShare(
                t.id(), ThreadStore.shareTokenHash(token), token.substring(0, 12), mode, passwordHash, expires);
        Map<String, Object> json = share.toJson();
        json.put("token", token);
        json.put("url", "/api/public/thread-shares/" + token);
        return Response.status(201).entity(Map.of("share", json)).build();
    }

    @GET
    @Path("shares")
    @RequiresScope("threads:read")
    @JsonShape(ThreadJson.Shares.class)
    public Map<String, Object> shares(@Context SecurityContext sc, @PathParam("id") String id) {
        Thread t = threads.owned(Caller.from(sc), id);
        return Map.of("shares", store.shares(t.id()).stream().map(Share::toJson).toList());
    }

    @POST
    @Path("shares/{shareId}/revoke")
    @RequiresScope("threads:write")
    @JsonShape(ThreadJson.OneShare.class)
    public Map<String, Object> revoke(
            @Context SecurityContext sc, @PathParam("id") String id, @PathParam("shareId") String shareId) {
        Thread t = threads.owned(Caller.from(sc), id);
        return Map.of(
                "share",
                store.revoke(t.id(), shareId)
                        .orElseThrow(() -> ApiException.notFound("share not found"))
                        .toJson());
    }

    @GET
    @Path("export")
    @Produces({"text/markdown", "application/pdf", MediaType.APPLICATION_JSON})
    @RequiresScope("threads:read")
    @NotJson({"text/markdown", "application/pdf"})
    public Response export(
            @Context SecurityContext sc, @PathParam("id") String id, @QueryParam("format") String format) {
        Thread t = threads.owned(Caller.from(sc), id);
        String f = format == null ? "markdown" : format;
        // both formats are written while the messages are read, a page of rows at a time: an export never holds the
        // thread
        switch (f) {
            case "markdown", "md" -> {
                StreamingOutput body = out -> {
                    Writer w = new BufferedWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8));
                    w.append("# ").append(t.title()).append("\n\n");
                    exported(
                            t,
                            m -> w.append("**")
                                    .append(m.role())
                                    .append("** (")
                                    .append(m.createdAt())
                                    .append("):\n\n")
                                    .append(m.content())
                                    .append("\n\n"));
                    w.flush();
                };
                return Response.ok(body, "text/markdown; charset=utf-8")
                        .header("Content-Disposition", "attachment; filename=\"" + t.id() + ".md\"")
                        .build();
            }
            case "pdf" -> {
                StreamingOutput body = out -> {
                    try (ThreadPdf pdf = new ThreadPdf(fonts, t.title())) {
                        exported(t, m -> pdf.message(m.role(), m.createdAt(), m.content()));
                        pdf.writeTo(out);
                    }
                };
                return Response.ok(body, "application/pdf")
                        .header("Content-Disposition", "attachment; filename=\"" + t.id() + ".pdf\"")
                        .build();
            }
            default -> throw ApiException.badRequest("format must be markdown or pdf");
        }
    }

    private interface Sink {
        void accept(Message m) throws IOException;
    }

    /** The thread's messages oldest first, read 500 at a time, up to the export caps and then a truncation line. */
    private void exported(Thread t, Sink sink) throws IOException {
        long count = 0;
        long chars = 0;
        long after = 0;
        while (true) {
            List<StoredMessage> page = store.messages(t.id(), after, 500);
            for (StoredMessage m : page) {
                chars += m.message().content().length();
                if (count >= MAX_EXPORT_MESSAGES || chars > MAX_EXPORT_CHARS) {
                    sink.accept(new Message(
                            "",
                            t.id(),
                            "system",
                            "[export truncated after " + count + " messages]",
                            null,
                            Instant.now().toString()));
                    return;
                }
                sink.accept(m.message());
                count++;
            }
            if (page.size() < 500) {
                return;
            }
            after = page.get(page.size() - 1).seq();
        }
    }

    static Integer contextWindow(JsonNode body) {
        JsonNode v = body == null ? null : body.get("context_window");
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < 1 || v.asInt() > 10_000_000) {
            throw ApiException.badRequest("context_window must be an integer between 1 and 10000000");
        }
        return v.asInt();
    }

    static long cursor(String cursor) {
        if (cursor == null || cursor.isBlank()) {
            return 0;
        }
        try {
            long c = Long.parseLong(cursor.trim());
            if (c < 0) {
                throw new NumberFormatException();
            }
            return c;
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("cursor is not valid");
        }
    }
}
