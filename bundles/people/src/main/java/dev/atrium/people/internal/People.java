package dev.atrium.people.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.PublicProfiles;
import dev.atrium.kernel.api.PublicProfiles.Profile;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.notifications.api.Notice;
import dev.atrium.notifications.api.Notifications;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the people routes share: who a username names (the kernel's {@link PublicProfiles}), who is asking (a signed-in
 * caller or nobody), a profile as anyone may see it, a Principal's public repositories (through {@code repos.api}, for
 * the workspaces the kernel lists), the activity a viewer may see, and notices of new followers.
 */
@Component(service = People.class)
public class People {

    static final String USER_NOT_FOUND = "user not found";

    private static final Logger LOG = LoggerFactory.getLogger(People.class);

    final PublicProfiles profiles;
    final PeopleStore store;
    final ActivityStore activity;
    private final RepositoryRegistry repositories;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile Notifications notifications;

    @Activate
    public People(
            @Reference PublicProfiles profiles,
            @Reference PeopleStore store,
            @Reference ActivityStore activity,
            @Reference RepositoryRegistry repositories) {
        this.profiles = profiles;
        this.store = store;
        this.activity = activity;
        this.repositories = repositories;
    }

    /** The Principal {@code username} names; 404 when there is none (or it is suspended). */
    Profile user(String username) {
        return profiles.byUsername(username).orElseThrow(() -> ApiException.notFound(USER_NOT_FOUND));
    }

    /** The user {@code username} as the object of the caller's {@code verb} (follow, block, mute): never the caller. */
    Profile other(String me, String username, String verb) {
        Profile target = user(username);
        if (target.principalId().equals(me)) {
            throw ApiException.badRequest("you cannot " + verb + " yourself");
        }
        return target;
    }

    /** The signed-in caller's Principal id, or null for an anonymous request. */
    static String viewer(SecurityContext sc) {
        return sc != null && sc.getUserPrincipal() instanceof Caller c ? c.principalId() : null;
    }

    /** The profile as anyone sees it, and, for a signed-in caller who is someone else, how the two are related. */
    Map<String, Object> profile(Profile p, String viewerId) {
        Map<String, Object> m = summary(p);
        PeopleStore.Extra extra = store.extra(p.principalId());
        m.put("bio", extra.bio());
        m.put("website", extra.website());
        m.put("joined_at", time(p.joinedAt()));
        m.put("public_repos", publicRepositories(p.principalId()).size());
        m.put("followers", store.countRelated(p.principalId(), true, null));
        m.put("following", store.countRelated(p.principalId(), false, null));
        m.put("private_account", p.privateAccount());
        if (viewerId != null) {
            m.put("viewer", relation(p.principalId(), viewerId));
        }
        return m;
    }

    /** The caller-specific fields: whether the viewer follows, is followed by, asked to follow, blocks, mutes. */
    Map<String, Object> relation(String principalId, String viewerId) {
        Map<String, Object> v = new LinkedHashMap<>();
        boolean self = principalId.equals(viewerId);
        v.put("is_self", self);
        v.put("following", !self && store.follows(viewerId, principalId));
        v.put("followed_by", !self && store.follows(principalId, viewerId));
        v.put("follow_requested", !self && store.requested(viewerId, principalId));
        v.put("blocking", !self && store.blocks(viewerId, principalId));
        v.put("muting", !self && store.mutes(viewerId, principalId));
        return v;
    }

    /** The fields a list shows of a Principal. */
    static Map<String, Object> summary(Profile p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("username", p.username());
        m.put("display_name", p.name() == null || p.name().isBlank() ? p.username() : p.name());
        m.put("avatar_url", p.picture());
        return m;
    }

    /** Public repositories of every workspace of the Principal, newest first. */
    List<Repository> publicRepositories(String principalId) {
        List<Repository> out = new ArrayList<>();
        for (SpaceRef space : profiles.workspaces(principalId)) {
            for (Repository r : repositories.list(space.id())) {
                if (r.isPublic()) {
                    out.add(r);
                }
            }
        }
        out.sort(Comparator.comparing(Repository::updatedAt, Comparator.nullsLast(Comparator.reverseOrder())));
        return out;
    }

    /** A public repository as a profile lists it: no workspace (workspaces are private), the owner by username. */
    static Map<String, Object> repository(Repository r, String username) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", r.id());
        m.put("name", r.name());
        m.put("full_name", username + "/" + r.name());
        m.put("description", r.description());
        m.put("default_branch", r.defaultBranch());
        m.put("fork", r.forkedFrom() != null);
        m.put("created_at", time(r.createdAt()));
        m.put("updated_at", time(r.updatedAt()));
        return m;
    }

    /**
     * The actor's activity as {@code viewerId} (null: anonymous) may see it: nothing for a viewer who muted the actor or
     * is on either side of a block with it; items written for everyone while the actor's setting still allows it;
     * items written for followers to followers and to the actor; never an item of a repository that is not public now.
     */
    Map<String, Object> activity(Profile actor, String viewerId, PageRequest page) {
        List<String> audiences = audiences(actor, viewerId);
        List<ActivityStore.Item> items = activity.visible(actor.principalId(), audiences, page.limit(), page.offset());
        Map<String, Optional<RepositoryRegistry.PublicRepository>> current = new HashMap<>();
        List<Map<String, Object>> out = new ArrayList<>();
        for (ActivityStore.Item item : items) {
            // the repository as it is now, in case an event about it was missed: only a public one is shown, named by
            // its owner (a star or a push may be of another Principal's repository)
            Optional<RepositoryRegistry.PublicRepository> repo =
                    current.computeIfAbsent(item.repoId(), repositories::publicRepository);
            if (repo.isEmpty()) {
                continue;
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", item.id());
            m.put("type", item.kind());
            m.put("actor", summary(actor));
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("id", repo.get().repository().id());
            r.put("name", repo.get().repository().name());
            r.put("full_name", repo.get().fullName());
            m.put("repository", r);
            m.put("payload", item.payload());
            m.put("created_at", time(item.createdAt()));
            out.add(m);
        }
        return page.body("activity", out, activity.countVisible(actor.principalId(), audiences));
    }

    private List<String> audiences(Profile actor, String viewerId) {
        String actorId = actor.principalId();
        boolean self = actorId.equals(viewerId);
        if (viewerId != null
                && !self
                && (store.mutes(viewerId, actorId)
                        || store.blocks(viewerId, actorId)
                        || store.blocks(actorId, viewerId))) {
            return List.of();
        }
        // the actor's setting now narrows what was written under a wider one (never widens it); the actor sees all
        // that was written for anyone but nobody (items of private repositories)
        if (self) {
            return List.of("public", "followers", "self");
        }
        boolean follower = viewerId != null && store.follows(viewerId, actorId);
        return switch (actor.activityVisibility()) {
            case "public" -> follower ? List.of("public", "followers") : List.of("public");
            case "followers" -> follower ? List.of("public", "followers") : List.of();
            default -> List.of();
        };
    }

    /** An instant as the API writes it (RFC 3339, UTC), or null. */
    static String time(java.time.Instant t) {
        return t == null ? null : t.toString();
    }

    /** Posts a notice when the notifications capability runs; a failure to post never fails the follow. */
    void notice(String principalId, String type, String title, String link) {
        Notifications to = notifications;
        if (to == null) {
            return;
        }
        try {
            var unused = to.post(Notice.toPrincipal(principalId, type, title).withLink(link));
        } catch (RuntimeException e) {
            LOG.warn("posting a {} notice: {}", type, e.toString());
        }
    }
}
