package dev.atrium.people.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.PublicProfiles.Profile;
import dev.atrium.kernel.api.RequiresScope;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.GET;
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
 * {@code /api/users/:username/follow-requests}: the requests to follow an account that approves its followers, for
 * its owner only. Someone else's requests are the same 404 as a missing user's.
 */
@Component(service = FollowRequestsResource.class)
@KernelResource
@Path("/api/users/{username}/follow-requests")
@Produces(MediaType.APPLICATION_JSON)
public class FollowRequestsResource {

    static final String REQUEST_NOT_FOUND = "follow request not found";

    private final People people;

    @Activate
    public FollowRequestsResource(@Reference People people) {
        this.people = people;
    }

    @GET
    @RequiresScope("account:read")
    @JsonShape(PeopleJson.FollowRequests.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("username") String username,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        PageRequest page = PageRequest.of(limit, offset);
        Profile me = own(Caller.from(sc), username);
        List<Map<String, Object>> items = new ArrayList<>();
        for (PeopleStore.FollowRequest r : people.store.requestsTo(me.principalId(), page.limit(), page.offset())) {
            people.profiles.byId(r.requesterId()).ifPresent(requester -> {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("id", r.id());
                m.put("requester", People.summary(requester));
                m.put("created_at", People.time(r.createdAt()));
                items.add(m);
            });
        }
        return page.body("follow_requests", items, people.store.countRequestsTo(me.principalId()));
    }

    /** Makes the requester a follower (unless a block came between) and tells them. */
    @POST
    @Path("{id}/accept")
    @JsonShape(PeopleJson.Decision.class)
    public Map<String, Object> accept(
            @Context SecurityContext sc, @PathParam("username") String username, @PathParam("id") String id) {
        Profile me = own(Caller.from(sc), username);
        PeopleStore.FollowRequest r = people.store
                .decide(me.principalId(), id, true)
                .orElseThrow(() -> ApiException.notFound(REQUEST_NOT_FOUND));
        if (people.store.follows(r.requesterId(), me.principalId())) {
            people.notice(
                    r.requesterId(),
                    "people.follow_accepted",
                    "@" + me.username() + " accepted your follow request",
                    "/api/users/" + me.username());
        }
        return Map.of("follow_request_id", r.id(), "state", "accepted");
    }

    /** Drops the request; the requester is not told (as a pending request looks to them). */
    @POST
    @Path("{id}/reject")
    @JsonShape(PeopleJson.Decision.class)
    public Map<String, Object> reject(
            @Context SecurityContext sc, @PathParam("username") String username, @PathParam("id") String id) {
        Profile me = own(Caller.from(sc), username);
        PeopleStore.FollowRequest r = people.store
                .decide(me.principalId(), id, false)
                .orElseThrow(() -> ApiException.notFound(REQUEST_NOT_FOUND));
        return Map.of("follow_request_id", r.id(), "state", "rejected");
    }

    private Profile own(Caller caller, String username) {
        Profile p = people.user(username);
        if (!p.principalId().equals(caller.principalId())) {
            throw ApiException.notFound(People.USER_NOT_FOUND);
        }
        return p;
    }
}
