package dev.atrium.threads.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PasswordHasher;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.threads.internal.ThreadStore.Share;
import dev.atrium.threads.internal.ThreadStore.StoredMessage;
import dev.atrium.threads.internal.ThreadStore.Thread;
import java.time.Instant;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.servlet.http.HttpServletRequest;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/public/thread-shares/:token}: a shared thread without a session. It shows that one thread's title
 * and messages and nothing of its workspace. Unknown or revoked, or its workspace deleted, suspended or no longer
 * proven to its active owner (the kernel's {@link SpaceDirectory} says): 404, all alike; expired: 410; password
 * needed or wrong: 401; too many wrong passwords for the share or from the client: 429 with {@code Retry-After}.
 */
@Component(service = PublicSharesResource.class)
@KernelResource
@Path("/api/public/thread-shares/{token}")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class PublicSharesResource {

    /** Messages per page of a public share (an anonymous caller never loads a whole long thread at once). */
    static final int PAGE = 500;

    private final ThreadStore store;
    private final SpaceDirectory spaces;
    private final ShareAccessLimiter limiter;
    private final ThreadsSettings settings;

    @Activate
    public PublicSharesResource(
            @Reference ThreadStore store,
            @Reference SpaceDirectory spaces,
            @Reference ShareAccessLimiter limiter,
            @Reference ThreadsSettings settings) {
        this.store = store;
        this.spaces = spaces;
        this.limiter = limiter;
        this.settings = settings;
    }

    private record Live(Share share, Thread thread) {}

    @GET
    @Anonymous
    @JsonShape(ThreadJson.PublicPage.class)
    public Map<String, Object> view(
            @PathParam("token") String token, @QueryParam("cursor") String cursor, @QueryParam("limit") String limit) {
        Live live = live(token);
        if (live.share().passwordHash() != null) {
            throw ApiException.unauthorized(
                    "this share needs a password: POST it to /api/public/thread-shares/:token/access");
        }
        return body(live, cursor, limit);
    }

    @POST
    @Path("access")
    @Anonymous
    @JsonShape(ThreadJson.PublicPage.class)
    public Response access(
            @PathParam("token") String token,
            @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit,
            @Context HttpServletRequest request,
            @JsonShape(ThreadJson.ShareAccessInput.class) JsonNode body) {
        NulText.reject(body);
        Live live = live(token);
        Share share = live.share();
        if (share.passwordHash() != null) {
            String password = JsonBody.of(body).string("password").orElse("");
            String client = clientAddress(request, settings.trustForwardedFor);
            long retryAfter = limiter.attempt(share.id(), client);
            if (retryAfter > 0) {
                // the kernel's error mapper sets no headers, so the spec's error body is built here with Retry-After
                return Response.status(429)
                        .type(MediaType.APPLICATION_JSON_TYPE)
                        .header("Retry-After", Long.toString(retryAfter))
                        .entity(Map.of(
                                "error",
                                Map.of(
                                        "code",
                                        "RATE_LIMITED",
                                        "message",
                                        "too many wrong passwords from this address: try again in " + retryAfter
                                                + " s")))
                        .build();
            }
            if (!PasswordHasher.verify(password.toCharArray(), share.passwordHash())) {
                throw ApiException.unauthorized("wrong password");
            }
            limiter.succeeded(share.id(), client);
        }
        return Response.ok(body(live, cursor, limit)).build();
    }

    /**
     * The client: the peer itself, unless the operator said a reverse proxy sets {@code X-Forwarded-For}; then its
     * own entry (the last) names the peer it saw. Trusted by default, the header would let every guess name a new
     * address.
     */
    static String clientAddress(HttpServletRequest request, boolean trustForwardedFor) {
        if (!trustForwardedFor) {
            return String.valueOf(request.getRemoteAddr());
        }
        String last = null;
        for (Enumeration<String> e = request.getHeaders("X-Forwarded-For"); e != null && e.hasMoreElements(); ) {
            last = e.nextElement();
        }
        if (last != null) {
            String hop = last.substring(last.lastIndexOf(',') + 1).trim();
            if (!hop.isEmpty() && hop.length() <= 100) {
                return hop;
            }
        }
        return String.valueOf(request.getRemoteAddr());
    }

    private Live live(String token) {
        Share share = token == null || !token.startsWith("ats_")
                ? null
                : store.shareByTokenHash(ThreadStore.shareTokenHash(token)).orElse(null);
        if (share == null || share.revokedAt() != null) {
            throw ApiException.notFound("share not found");
        }
        Thread t = store.get(share.threadId()).orElseThrow(() -> ApiException.notFound("share not found"));
        // the kernel proves the workspace active, its owner active and the owner witness in place; a share outlives
        // none
        if (spaces.byId(t.spaceId()).isEmpty()) {
            throw ApiException.notFound("share not found");
        }
        if (share.expiresAt() != null && !share.expiresAt().isAfter(Instant.now())) {
            throw ApiException.gone("this share has expired");
        }
        return new Live(share, t);
    }

    /** A page of the shared thread's messages, oldest first: {@code limit} 1–500 (default 500), {@code cursor} the previous page's {@code next_cursor}. */
    private Map<String, Object> body(Live live, String cursor, String limit) {
        Share share = live.share();
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
        Thread t = live.thread();
        Map<String, Object> thread = new LinkedHashMap<>();
        thread.put("id", t.id());
        thread.put("title", t.title());
        thread.put("created_at", t.createdAt().toString());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("thread", thread);
        List<StoredMessage> found = store.messages(t.id(), after, max + 1);
        boolean more = found.size() > max;
        List<StoredMessage> items = more ? found.subList(0, max) : found;
        m.put(
                "messages",
                items.stream()
                        .map(StoredMessage::message)
                        .map(msg -> {
                            Map<String, Object> j = new LinkedHashMap<>();
                            j.put("id", msg.id());
                            j.put("role", msg.role());
                            j.put("content", msg.content());
                            j.put("created_at", msg.createdAt());
                            return j;
                        })
                        .toList());
        m.put("next_cursor", more ? Long.toString(items.get(items.size() - 1).seq()) : null);
        m.put(
                "share",
                Map.of(
                        "mode",
                        share.mode(),
                        "expires_at",
                        share.expiresAt() == null ? "" : share.expiresAt().toString()));
        return m;
    }
}
