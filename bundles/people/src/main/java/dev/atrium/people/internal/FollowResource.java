package dev.atrium.people.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PublicProfiles.Profile;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import javax.ws.rs.DELETE;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code POST /api/users/:username/follow} follows (or, when the account approves its followers, asks to);
 * {@code DELETE} unfollows and withdraws a pending request. Both are idempotent. A block in either direction refuses
 * a follow with 403.
 */
@Component(service = FollowResource.class)
@KernelResource
@Path("/api/users/{username}/follow")
@Produces(MediaType.APPLICATION_JSON)
public class FollowResource {

    private final People people;

    @Activate
    public FollowResource(@Reference People people) {
        this.people = people;
    }

    @POST
    @JsonShape(PeopleJson.FollowState.class)
    public Map<String, Object> follow(@Context SecurityContext sc, @PathParam("username") String username) {
        Caller caller = Caller.from(sc);
        String me = caller.principalId();
        Profile target = people.other(me, username, "follow");
        PeopleStore store = people.store;
        if (store.blocks(me, target.principalId())) {
            throw ApiException.forbidden("you block this user: unblock them before following");
        }
        if (store.blocks(target.principalId(), me)) {
            throw ApiException.forbidden("this user cannot be followed");
        }
        if (store.follows(me, target.principalId())) {
            return state("following", null);
        }
        // a follower is shown by username in every list: one without a username could be counted but never shown
        String who = people.profiles
                .byId(me)
                .map(Profile::username)
                .orElseThrow(() -> ApiException.conflict(
                        "choose a username (POST /api/auth/setup-username) before following people"));
        if (target.privateAccount()) {
            boolean existed = store.requested(me, target.principalId());
            Optional<PeopleStore.FollowRequest> request = store.request(me, target.principalId());
            if (request.isEmpty()) {
                throw ApiException.forbidden("this user cannot be followed");
            }
            if (!existed) {
                people.notice(
                        target.principalId(),
                        "people.follow_requested",
                        "@" + who + " asked to follow you",
                        "/api/users/" + target.username() + "/follow-requests");
            }
            return state("requested", request.get().id());
        }
        if (store.follow(me, target.principalId())) {
            people.notice(target.principalId(), "people.followed", "@" + who + " followed you", "/api/users/" + who);
        } else if (!store.follows(me, target.principalId())) {
            // a block landed between the checks above and the insert
            throw ApiException.forbidden("this user cannot be followed");
        }
        return state("following", null);
    }

    @DELETE
    @JsonShape(PeopleJson.FollowState.class)
    public Map<String, Object> unfollow(@Context SecurityContext sc, @PathParam("username") String username) {
        Caller caller = Caller.from(sc);
        Profile target = people.other(caller.principalId(), username, "follow");
        people.store.unfollow(caller.principalId(), target.principalId());
        return state("none", null);
    }

    static Map<String, Object> state(String state, String requestId) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("state", state);
        m.put("follow_request_id", requestId);
        return m;
    }
}
