package dev.atrium.store.inventory.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.store.ap.api.HttpSignatures;
import dev.atrium.store.ap.api.Origins;
import dev.atrium.store.ap.api.RemoteDocuments;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The inboxes of local actors: {@code Follow} and {@code Undo} (of a Follow), nothing else. A request must be signed
 * (draft-cavage, verified by the core's {@link HttpSignatures} against the key fetched through the egress guard): a
 * missing {@code Date} is 400, a skew over five minutes 401, a wrong {@code Digest} 400, a missing or wrong signature
 * 401; the key's owner must be the activity's {@code actor} (else 403), and the activity's id (and an undone Follow's)
 * must be on the actor's origin (else 403). An activity id the same actor sent before answers 200 and changes nothing;
 * ids are recorded per actor, so no sender can shadow another's. A Follow adds the follower and answers with an
 * {@code Accept}, kept in the actor's outbox in the same transaction and delivered signed through the queue by the
 * {@link FanOut}; an Undo removes it. A new activity answers 202.
 */
@Component(service = Inbox.class)
public class Inbox {

    /** Largest activity accepted. */
    static final int MAX_BYTES = 256 * 1024;

    private final HttpSignatures signatures;
    private final RemoteDocuments documents;
    private final Outboxes outboxes;
    private final FanOut fanOut;

    @Activate
    public Inbox(
            @Reference HttpSignatures signatures,
            @Reference RemoteDocuments documents,
            @Reference Outboxes outboxes,
            @Reference FanOut fanOut) {
        this.signatures = signatures;
        this.documents = documents;
        this.outboxes = outboxes;
        this.fanOut = fanOut;
    }

    /**
     * @param actorPath    the local actor the inbox belongs to ({@code /ap/stores/s})
     * @param base         the base URL the request came in by
     * @param pathAndQuery the request target as received
     */
    Response receive(
            String actorPath, String base, String pathAndQuery, Map<String, List<String>> headers, InputStream in) {
        byte[] body;
        try {
            body = in.readNBytes(MAX_BYTES + 1);
        } catch (IOException e) {
            throw ApiException.badRequest("the activity could not be read");
        }
        if (body.length > MAX_BYTES) {
            throw new ApiException(413, "PAYLOAD_TOO_LARGE", "an activity may be at most " + MAX_BYTES + " bytes");
        }
        if (body.length == 0) {
            throw ApiException.badRequest("the request has no activity");
        }
        HttpSignatures.Signer signer;
        try {
            signer = signatures.verify("POST", pathAndQuery, headers, body);
        } catch (HttpSignatures.SignatureRefused e) {
            throw new ApiException(e.status(), e.status() == 400 ? "BAD_REQUEST" : "UNAUTHORIZED", e.getMessage());
        }
        JsonNode activity;
        try {
            activity = Outboxes.JSON.readTree(new String(body, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw ApiException.badRequest("the activity is not JSON");
        }
        if (activity == null || !activity.isObject()) {
            throw ApiException.badRequest("the activity is not a JSON object");
        }
        String actor = idOf(activity.path("actor"));
        if (actor == null) {
            throw ApiException.badRequest("the activity names no actor");
        }
        if (!actor.equals(signer.owner())) {
            throw ApiException.forbidden(
                    "the activity's actor " + actor + " is not the owner of the signing key " + signer.keyId());
        }
        String id = activity.path("id").asText("");
        if (id.isEmpty() || id.length() > 2048 || !absolute(id)) {
            throw ApiException.badRequest("the activity needs an absolute id");
        }
        // an actor names only its own server's activities; otherwise a peer could take another sender's next id first
        if (!Origins.same(id, actor)) {
            throw ApiException.forbidden("the activity id " + id + " is not on the origin of its actor " + actor);
        }
        String type = activity.path("type").asText("");
        String self = base + actorPath;
        switch (type) {
            case "Follow" -> {
                if (!self.equals(idOf(activity.path("object")))) {
                    throw ApiException.badRequest("the Follow's object must be " + self);
                }
                if (outboxes.seen(actor, id)) {
                    return taken();
                }
                String inbox = inboxOf(actor);
                ObjectNode accept = Publisher.activity("Accept", actorPath);
                accept.remove("cc");
                accept.putArray("to").add(actor);
                accept.set("object", activity);
                boolean fresh = outboxes.once(actor, id, c -> {
                    outboxes.follow(c, actorPath, actor, inbox, base, id);
                    return Outboxes.append(c, actorPath, accept, inbox, base);
                });
                if (!fresh) {
                    return taken();
                }
                fanOut.wake();
                return Response.status(202).build();
            }
            case "Undo" -> {
                JsonNode undone = activity.path("object");
                String undoneType = undone.isObject() ? undone.path("type").asText("") : "Follow";
                if (!"Follow".equals(undoneType)) {
                    throw ApiException.badRequest("this inbox undoes only a Follow");
                }
                if (undone.isObject() && !actor.equals(idOf(undone.path("actor")))) {
                    throw ApiException.forbidden("an actor may undo only its own Follow");
                }
                String undoneId = idOf(undone);
                if (undoneId != null && !Origins.same(undoneId, actor)) {
                    throw ApiException.forbidden(
                            "the undone activity " + undoneId + " is not on the origin of the actor " + actor);
                }
                boolean fresh = outboxes.once(actor, id, c -> Outboxes.unfollow(c, actorPath, actor));
                return fresh ? Response.status(202).build() : taken();
            }
            default ->
                throw ApiException.badRequest("this inbox accepts Follow and Undo (of a Follow), not '" + type + "'");
        }
    }

    private static Response taken() {
        return Response.ok().build();
    }

    /** The follower's inbox, from its actor document (fetched through the egress guard). */
    private String inboxOf(String actor) {
        JsonNode doc;
        try {
            doc = documents.fetch(URI.create(actor), null);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("the actor is not a URL");
        } catch (RemoteDocuments.RemoteException e) {
            throw new ApiException(
                    e.status(),
                    e.status() == 400 ? "BAD_REQUEST" : e.status() == 504 ? "GATEWAY_TIMEOUT" : "BAD_GATEWAY",
                    "the follower's actor could not be read: " + e.getMessage());
        }
        String inbox = doc.path("inbox").asText("");
        if (!absolute(inbox)) {
            throw new ApiException(502, "BAD_GATEWAY", "the follower's actor names no inbox");
        }
        return inbox;
    }

    static String idOf(JsonNode node) {
        if (node.isTextual()) {
            return node.asText();
        }
        if (node.isObject() && node.path("id").isTextual()) {
            return node.path("id").asText();
        }
        return null;
    }

    private static boolean absolute(String uri) {
        try {
            URI u = new URI(uri);
            return ("https".equals(u.getScheme()) || "http".equals(u.getScheme())) && u.getHost() != null;
        } catch (URISyntaxException e) {
            return false;
        }
    }
}
