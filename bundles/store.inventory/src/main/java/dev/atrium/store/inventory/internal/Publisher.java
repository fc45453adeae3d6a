package dev.atrium.store.inventory.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.repos.api.RepositoryEvents;
import dev.atrium.store.ap.api.LocalStores;
import dev.atrium.store.inventory.internal.Directory.RepoView;
import dev.atrium.store.inventory.internal.Directory.StoreView;
import dev.atrium.store.inventory.internal.Outboxes.Stored;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Turns repository events ({@code atrium/repo/*}) and inventory edits into activities: each is kept in its actor's
 * outbox (PostgreSQL), and the {@link FanOut} queues it, signed, to every follower. Repository outbox: {@code Create} (made,
 * or made public), {@code Update} (changed, or its default branch moved), {@code Delete} (deleted, made private, or
 * renamed away), {@code Push}, tag {@code Create}/{@code Delete}. Store outbox: in automatic mode {@code Create}/{@code
 * Update} of its workspace's repositories and {@code Announce} of their other activities; in explicit mode {@code Add}/
 * {@code Remove} and {@code Announce} of the activities of the local repositories it lists. Private repositories never
 * produce anything.
 */
final class Publisher {

    static final String PUBLIC = "https://www.w3.org/ns/activitystreams#Public";
    private static final String ZERO = "0000000000000000000000000000000000000000";

    private final Outboxes outboxes;
    private final Directory directory;
    private final Runnable wake;

    /** @param wake asks the fan-out to queue what was just kept */
    Publisher(Outboxes outboxes, Directory directory, Runnable wake) {
        this.outboxes = outboxes;
        this.directory = directory;
        this.wake = wake;
    }

    /** One repository event. */
    void repositoryEvent(String topic, Map<String, Object> props) {
        String repoId = String.valueOf(props.get(RepositoryEvents.REPO_ID));
        String spaceId = String.valueOf(props.get(RepositoryEvents.SPACE_ID));
        String name = String.valueOf(props.get(RepositoryEvents.NAME));
        Optional<Outboxes.RepoState> state = outboxes.state(repoId);
        switch (topic) {
            case RepositoryEvents.CREATED, RepositoryEvents.UPDATED -> {
                Optional<RepoView> now = directory.repository(spaceId, name).filter(r -> r.id().equals(repoId));
                if (now.isEmpty()) {
                    return; // renamed or deleted again since: its own event follows
                }
                lifecycle(state, now.get());
            }
            case RepositoryEvents.DELETED -> {
                if (state.isPresent() && state.get().published()) {
                    repositoryActivity(
                            state.get().spaceId(),
                            state.get().actorPath(),
                            false,
                            deleteOf(state.get().actorPath()));
                }
                outboxes.forget(repoId);
            }
            case RepositoryEvents.PUSHED -> {
                Optional<RepoView> now = published(state, spaceId, name, repoId);
                if (now.isPresent()) {
                    pushed(now.get(), props);
                }
            }
            case RepositoryEvents.TAG_CREATED, RepositoryEvents.TAG_DELETED -> {
                Optional<RepoView> now = published(state, spaceId, name, repoId);
                if (now.isPresent()) {
                    tag(
                            now.get(),
                            topic.equals(RepositoryEvents.TAG_CREATED),
                            String.valueOf(props.get(RepositoryEvents.REF)),
                            String.valueOf(props.get(RepositoryEvents.NEW_ID)),
                            String.valueOf(props.get(RepositoryEvents.OLD_ID)));
                }
            }
            default -> {
                // branch events: the Push says it
            }
        }
    }

    /** A repository as Model A publishes it now, when it is public; remembered if it was not known yet. */
    private Optional<RepoView> published(
            Optional<Outboxes.RepoState> state, String spaceId, String name, String repoId) {
        Optional<RepoView> now = directory.repository(spaceId, name).filter(r -> r.id().equals(repoId) && r.isPublic());
        if (now.isPresent()
                && (state.isEmpty()
                        || !state.get().published()
                        || !state.get().actorPath().equals(now.get().actorPath()))) {
            lifecycle(state, now.get());
        }
        return now;
    }

    private void lifecycle(Optional<Outboxes.RepoState> state, RepoView now) {
        String path = now.actorPath();
        boolean was = state.isPresent() && state.get().published();
        if (was && !state.get().actorPath().equals(path)) {
            // renamed (or its workspace renamed): the old actor is gone, a new one appears
            repositoryActivity(
                    state.get().spaceId(),
                    state.get().actorPath(),
                    false,
                    deleteOf(state.get().actorPath()));
            was = false;
        }
        outboxes.remember(now.id(), now.spaceId(), path, now.isPublic());
        if (now.isPublic()) {
            ObjectNode a = activity(was ? "Update" : "Create", path);
            a.set("object", repositoryObject(now));
            repositoryActivity(now.spaceId(), path, true, a);
        } else if (was) {
            repositoryActivity(now.spaceId(), path, false, deleteOf(path));
        }
    }

    private void pushed(RepoView r, Map<String, Object> props) {
        String branch = null;
        boolean defaultMoved = false;
        for (Object line : list(props.get(RepositoryEvents.REFS))) {
            String[] parts = String.valueOf(line).split(" ");
            if (parts.length == 3 && parts[0].startsWith("refs/heads/") && !ZERO.equals(parts[2])) {
                branch = branch == null ? parts[0] : branch;
                if (parts[0].equals("refs/heads/" + r.defaultBranch())) {
                    branch = parts[0];
                    defaultMoved = true;
                }
            }
        }
        if (branch == null) {
            return; // tags or deletions only: their own activities say it
        }
        String path = r.actorPath();
        ObjectNode a = activity("Push", path);
        a.put("attributedTo", path);
        a.put("target", branch);
        ObjectNode commits = a.putObject("object");
        commits.put("type", "OrderedCollection");
        ArrayNode items = commits.putArray("orderedItems");
        for (Object c : list(props.get(RepositoryEvents.COMMITS))) {
            if (c instanceof Map<?, ?> m) {
                ObjectNode commit = items.addObject();
                commit.put("type", "Commit");
                commit.put("hash", String.valueOf(m.get("sha")));
                commit.put("message", String.valueOf(m.get("message")));
                ObjectNode author = commit.putObject("attributedTo");
                author.put("name", String.valueOf(m.get("author_name")));
                author.put("email", String.valueOf(m.get("author_email")));
                commit.put("committed", String.valueOf(m.get("time")));
            }
        }
        commits.put("totalItems", items.size());
        repositoryActivity(r.spaceId(), path, false, a);
        if (defaultMoved) {
            ObjectNode u = activity("Update", path);
            u.set("object", repositoryObject(r));
            repositoryActivity(r.spaceId(), path, true, u);
        }
    }

    private void tag(RepoView r, boolean created, String ref, String newId, String oldId) {
        String path = r.actorPath();
        String name = ref.startsWith("refs/tags/") ? ref.substring("refs/tags/".length()) : ref;
        ObjectNode a = activity(created ? "Create" : "Delete", path);
        ObjectNode tag = a.putObject("object");
        tag.put("id", path + "/tags/" + name);
        tag.put("type", "Tag");
        tag.put("name", name);
        tag.put("ref", ref);
        tag.put("target", created ? newId : oldId);
        tag.put("published", Instant.now().toString());
        repositoryActivity(r.spaceId(), path, false, a);
    }

    /** An explicit inventory edit: {@code Add} or {@code Remove} in the store's outbox. */
    void inventoryEvent(String topic, Map<String, Object> props) {
        String slug = String.valueOf(props.get(LocalStores.STORE_SLUG));
        String uri = String.valueOf(props.get(LocalStores.REPOSITORY_URI));
        String store = Model.storePath(slug);
        ObjectNode a = activity(LocalStores.INVENTORY_ADDED.equals(topic) ? "Add" : "Remove", store);
        a.put("object", uri);
        a.put("target", store + "/inventory");
        publish(store, a);
    }

    /**
     * A deleted store: a {@code Delete} of its actor to its followers, after which they are dropped (a new store under the
     * same slug starts with none).
     */
    void storeDeleted(String slug) {
        String store = Model.storePath(slug);
        ObjectNode a = activity("Delete", store);
        ObjectNode tomb = a.putObject("object");
        tomb.put("id", store);
        tomb.put("type", "Tombstone");
        tomb.put("formerType", "Store");
        publish(store, a);
    }

    /** Keeps a repository's activity in its outbox, delivers it, and passes it on to the stores that list the repository. */
    private void repositoryActivity(String spaceId, String repoPath, boolean lifecycle, ObjectNode template) {
        Stored stored = publish(repoPath, template);
        for (StoreView s : directory.automaticStores(spaceId)) {
            if (lifecycle) {
                ObjectNode copy = template.deepCopy();
                copy.put("actor", s.actorPath());
                copy.putArray("cc").add(s.actorPath() + "/followers");
                publish(s.actorPath(), copy);
            } else {
                publish(s.actorPath(), announce(s, stored));
            }
        }
        for (StoreView s : directory.explicitStores(repoPath)) {
            publish(s.actorPath(), announce(s, stored));
        }
    }

    private static ObjectNode announce(StoreView s, Stored stored) {
        ObjectNode a = activity("Announce", s.actorPath());
        a.put("object", stored.id());
        return a;
    }

    /** Appends to the actor's outbox; the {@link FanOut} queues it to the followers once it is committed. */
    Stored publish(String actorPath, ObjectNode template) {
        Stored stored = outboxes.append(actorPath, template);
        wake.run();
        return stored;
    }

    static ObjectNode activity(String type, String actorPath) {
        ObjectNode a = Outboxes.JSON.createObjectNode();
        // the context on a path base ("ext": "/ns/ext#"), made absolute with the rest when served or delivered
        a.set("@context", Outboxes.JSON.valueToTree(Docs.context("")));
        a.put("type", type);
        a.put("actor", actorPath);
        a.putArray("to").add(PUBLIC);
        a.putArray("cc").add(actorPath + "/followers");
        return a;
    }

    private static ObjectNode deleteOf(String path) {
        ObjectNode a = activity("Delete", path);
        ObjectNode tomb = a.putObject("object");
        tomb.put("id", path);
        tomb.put("type", "Tombstone");
        tomb.put("formerType", "Repository");
        return a;
    }

    /** The repository as an activity's object: the actor's main fields, URLs as paths. */
    static ObjectNode repositoryObject(RepoView r) {
        String path = r.actorPath();
        ObjectNode o = Outboxes.JSON.createObjectNode();
        o.put("id", path);
        o.put("type", "Repository");
        o.put("name", r.name());
        o.put("summary", r.description() == null ? "" : r.description());
        o.put("url", "/@" + r.owner() + "/" + r.name());
        o.putArray("cloneUri").add("/git/" + r.owner() + "/" + r.name() + ".git");
        o.put("published", r.createdAt().toString());
        o.put("updated", r.updatedAt().toString());
        o.put("defaultBranchRef", "refs/heads/" + r.defaultBranch());
        if (r.defaultBranchHash() != null) {
            o.put("defaultBranchHash", r.defaultBranchHash());
        }
        return o;
    }

    private static List<?> list(Object value) {
        if (value instanceof List<?> l) {
            return l;
        }
        if (value instanceof Object[] a) {
            return List.of(a);
        }
        return List.of();
    }
}
