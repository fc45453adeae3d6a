package dev.atrium.threads.internal;

import dev.atrium.kernel.api.NulText;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsExtensionSelect;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsResource;

import com.fasterxml.jackson.databind.JsonNode;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.KernelExtensions;
import dev.atrium.threads.internal.ThreadStore.Share;
import dev.atrium.threads.internal.ThreadStore.StoredMessage;
import dev.atrium.threads.internal.ThreadStore.Thread;

/**
 * {@code /api/public/thread-shares/:token}: a shared thread without a session. It shows that one thread's title
 * and messages and nothing of its workspace. Unknown or revoked: 404; expired: 410; password needed or wrong: 401.
 */
@Component(service = PublicSharesResource.class)
@JaxrsResource
@JaxrsExtensionSelect({ KernelExtensions.SELECT, KernelExtensions.JSON })
@Path("/api/public/thread-shares/{token}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class PublicSharesResource {

    /** Messages per page of a public share (an anonymous caller never loads a whole long thread at once). */
    static final int PAGE = 500;

    private final ThreadStore store;
    private final ThreadsService threads;

    @Activate
    public PublicSharesResource(@Reference ThreadStore store, @Reference ThreadsService threads) {
        this.store = store;
        this.threads = threads;
    }

    @GET
    @Anonymous
    public Map<String, Object> view(@PathParam("token") String token, @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit) {
        Share share = live(token);
        if (share.passwordHash() != null) {
            throw ApiException.unauthorized("this share needs a password: POST it to /api/public/thread-shares/:token/access");
        }
        return body(share, cursor, limit);
    }

    @POST
    @Path("access")
    @Anonymous
    public Map<String, Object> access(@PathParam("token") String token, @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit, JsonNode body) {
        NulText.reject(body);
        Share share = live(token);
        if (share.passwordHash() != null) {
            String password = JsonBody.of(body).string("password").orElse("");
            if (!Passwords.verify(password, share.passwordHash())) {
                throw ApiException.unauthorized("wrong password");
            }
        }
        return body(share, cursor, limit);
    }

    private Share live(String token) {
        Share share = token == null || !token.startsWith("ats_") ? null : store.shareByTokenHash(Passwords.sha256(token)).orElse(null);
        if (share == null || share.revokedAt() != null) {
            throw ApiException.notFound("share not found");
        }
        if (share.expiresAt() != null && !share.expiresAt().isAfter(Instant.now())) {
            throw ApiException.gone("this share has expired");
        }
        return share;
    }

    /** A page of the shared thread's messages, oldest first: {@code limit} 1–500 (default 500), {@code cursor} the previous page's {@code next_cursor}. */
    private Map<String, Object> body(Share share, String cursor, String limit) {
        long after = ThreadResource.cursor(cursor);
        int max = PAGE;
        if (limit != null && !limit.isBlank()) {
            try {
                max = Integer.parseInt(limit.trim());
            } catch (NumberFormatException e) {
                max = -1;
            }
            if (max < 1 || max > PAGE) {
                throw ApiException.badRequest("limit must be between 1 and " + PAGE);
            }
        }
        Thread t = store.get(share.threadId()).orElseThrow(() -> ApiException.notFound("share not found"));
        Map<String, Object> thread = new LinkedHashMap<>();
        thread.put("id", t.id());
        thread.put("title", t.title());
        thread.put("created_at", t.createdAt().toString());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("thread", thread);
        List<StoredMessage> found = store.messages(t.id(), after, max + 1);
        boolean more = found.size() > max;
        List<StoredMessage> items = more ? found.subList(0, max) : found;
        m.put("messages", items.stream().map(StoredMessage::message).map(msg -> {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("id", msg.id());
            j.put("role", msg.role());
            j.put("content", msg.content());
            j.put("created_at", msg.createdAt());
            return j;
        }).toList());
        m.put("next_cursor", more ? Long.toString(items.get(items.size() - 1).seq()) : null);
        m.put("share", Map.of("mode", share.mode(), "expires_at", share.expiresAt() == null ? "" : share.expiresAt().toString()));
        return m;
    }
}
