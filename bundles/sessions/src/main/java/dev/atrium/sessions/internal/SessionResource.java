package dev.atrium.sessions.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.BodyLimit;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.sessions.internal.SessionStore.Session;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.StreamingOutput;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.revwalk.RevCommit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/sessions/:sessionId}: a file-sync session's lifecycle (the spec's stop, resume, discard, heartbeat and
 * health) and its files (an extension: list, read, write with a raw body, delete). A session is resolved to its
 * workspace and proven through the kernel's {@link OwnerScope}, so another Principal's session is the same 404 as a
 * missing one.
 */
@Component(service = SessionResource.class)
@KernelResource
@Path("/api/sessions/{sessionId}")
@Produces(MediaType.APPLICATION_JSON)
public class SessionResource {

    private static final Set<String> STOP_FIELDS = Set.of("message", "author");

    private final OwnerScope ownerScope;
    private final SyncSessions sessions;

    @Activate
    public SessionResource(@Reference OwnerScope ownerScope, @Reference SyncSessions sessions) {
        this.ownerScope = ownerScope;
        this.sessions = sessions;
    }

    private Session owned(SecurityContext sc, String id) {
        return sessions.owned(Caller.from(sc), id, ownerScope);
    }

    @GET
    @Path("health")
    @RequiresScope("repos:read")
    @JsonShape(SessionJson.Health.class)
    public Map<String, Object> health(@Context SecurityContext sc, @PathParam("sessionId") String id) {
        return sessions.health(owned(sc, id));
    }

    @POST
    @Path("heartbeat")
    @RequiresScope("repos:write")
    @JsonShape(SessionJson.One.class)
    public Map<String, Object> heartbeat(@Context SecurityContext sc, @PathParam("sessionId") String id) {
        return Map.of("session", sessions.toJson(sessions.heartbeat(owned(sc, id))));
    }

    @POST
    @Path("stop")
    @Consumes(MediaType.APPLICATION_JSON)
    @RequiresScope("repos:write")
    @JsonShape(SessionJson.Stopped.class)
    public Map<String, Object> stop(
            @Context SecurityContext sc,
            @PathParam("sessionId") String id,
            @JsonShape(SessionJson.Stop.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        Session s = sessions.owned(caller, id, ownerScope);
        JsonBody b = JsonBody.of(body);
        NulText.reject(body);
        for (Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!STOP_FIELDS.contains(name)) {
                throw ApiException.badRequest("unknown field " + name + ": a stop takes message and author");
            }
        }
        String message = b.text("message", 1, 65_536);
        textCheck("message", message);
        PersonIdent author = null;
        JsonNode a = body.get("author");
        if (a != null && !a.isNull()) {
            JsonBody ab = JsonBody.of(a);
            author = new PersonIdent(
                    identityPart("author.name", ab.text("name", 1, 200)),
                    identityPart("author.email", ab.text("email", 3, 320)));
        }
        SyncSessions.Stopped stopped = sessions.stop(caller, s, message, author);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("session", sessions.toJson(stopped.session()));
        m.put("committed", stopped.commit() != null);
        m.put("commit", stopped.commit() == null ? null : commitJson(stopped.commit()));
        m.put("changes", SyncSessions.counts(stopped.changes()));
        return m;
    }

    static Map<String, Object> commitJson(RevCommit c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sha", c.name());
        m.put("message", c.getFullMessage());
        m.put("author_name", c.getAuthorIdent().getName());
        m.put("author_email", c.getAuthorIdent().getEmailAddress());
        m.put("time", c.getAuthorIdent().getWhenAsInstant().toString());
        return m;
    }

    private static void textCheck(String field, String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isHighSurrogate(c)
                    && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw ApiException.badRequest(field + " must not contain a lone surrogate");
            }
        }
    }

    /** A name or email git fsck accepts in an author line. */
    private static String identityPart(String field, String value) {
        textCheck(field, value);
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '<' || c == '>' || Character.isISOControl(c)) {
                throw ApiException.badRequest(field + " must not contain '<', '>' or control characters");
            }
        }
        return value;
    }

    @POST
    @Path("resume")
    @RequiresScope("repos:write")
    @JsonShape(SessionJson.Resumed.class)
    public Map<String, Object> resume(@Context SecurityContext sc, @PathParam("sessionId") String id) {
        SyncSessions.Resumed r = sessions.resume(owned(sc, id));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("session", sessions.toJson(r.session()));
        m.put("moved", r.moved());
        m.put("kept", r.kept());
        return m;
    }

    @POST
    @Path("discard")
    @RequiresScope("repos:write")
    @JsonShape(SessionJson.One.class)
    public Map<String, Object> discard(@Context SecurityContext sc, @PathParam("sessionId") String id) {
        return Map.of("session", sessions.toJson(sessions.discard(owned(sc, id))));
    }

    // ------------------------------------------------------------------------------------------- files (extension)

    @GET
    @Path("files")
    @RequiresScope("repos:read")
    @JsonShape(SessionJson.Files.class)
    public Map<String, Object> files(@Context SecurityContext sc, @PathParam("sessionId") String id) {
        List<Map<String, Object>> files = sessions.files(owned(sc, id));
        return Map.of("files", files, "total", files.size());
    }

    @GET
    @Path("files/{path: .+}")
    @Produces(MediaType.WILDCARD)
    @RequiresScope("repos:read")
    @NotJson(MediaType.APPLICATION_OCTET_STREAM)
    public Response read(
            @Context SecurityContext sc, @PathParam("sessionId") String id, @PathParam("path") String path) {
        java.nio.file.Path file = sessions.read(owned(sc, id), path);
        long size;
        InputStream in;
        try {
            size = Files.size(file);
            in = Files.newInputStream(file, java.nio.file.LinkOption.NOFOLLOW_LINKS);
        } catch (java.nio.file.NoSuchFileException e) {
            throw ApiException.notFound("file not found: " + path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        StreamingOutput body = out -> {
            try (in) {
                in.transferTo(out);
            }
        };
        return Response.ok(body, MediaType.APPLICATION_OCTET_STREAM)
                .header("Content-Length", size)
                .header("X-Content-Type-Options", "nosniff")
                .build();
    }

    @PUT
    @Path("files/{path: .+}")
    @Consumes(MediaType.WILDCARD)
    @BodyLimit(SyncSessions.MAX_FILE_BYTES_CAP)
    @RequiresScope("repos:write")
    @JsonShape(SessionJson.Written.class)
    public Response write(
            @Context SecurityContext sc,
            @PathParam("sessionId") String id,
            @PathParam("path") String path,
            InputStream body) {
        Map<String, Object> written = sessions.write(owned(sc, id), path, body);
        return Response.status(Boolean.TRUE.equals(written.get("created")) ? 201 : 200)
                .entity(written)
                .build();
    }

    @DELETE
    @Path("files/{path: .+}")
    @RequiresScope("repos:write")
    @JsonShape(SessionJson.Deleted.class)
    public Map<String, Object> delete(
            @Context SecurityContext sc, @PathParam("sessionId") String id, @PathParam("path") String path) {
        sessions.delete(owned(sc, id), path);
        return Map.of("deleted", true, "path", path);
    }
}
