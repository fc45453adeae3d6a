package dev.atrium.store.inventory.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Model A's tables: the outboxes of local actors ({@code ap_inv_activities}), their followers, what was last published
 * of each repository, and the activity ids the inboxes took. Activities are kept with local URLs as paths
 * ({@code /ap/repos/o/r}); {@link #render} adds the base a reader or follower knows this server by.
 */
@Component(service = Outboxes.class)
public class Outboxes {

    static final ObjectMapper JSON = JsonMappers.create();
    /** The fields whose values (or array elements) are local URLs when they begin with '/'. */
    static final Set<String> URL_FIELDS = Set.of(
            "id",
            "actor",
            "attributedTo",
            "object",
            "target",
            "cloneUri",
            "pushUri",
            "url",
            "inbox",
            "outbox",
            "followers",
            "stores",
            "partOf",
            "inventory",
            "cc",
            "ext");

    /** What Model A last published of a repository. */
    record RepoState(String repoId, String spaceId, String actorPath, boolean published) {}

    /** A follower of a local actor. */
    record Follower(String actorPath, String follower, String inbox, String base, String followId, Instant createdAt) {}

    /** A kept activity: its template (local URLs as paths). */
    record Stored(long seq, String id, String actorPath, String type, ObjectNode template) {}

    /**
     * An activity waiting to be queued to its audience.
     *
     * @param deliverTo   null: the actor's followers; else the one inbox it goes to
     * @param deliverBase the base a direct delivery is made absolute on
     */
    record Pending(Stored activity, String deliverTo, String deliverBase) {}

    private final Sql sql;

    @Activate
    public Outboxes(@Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    Outboxes(DataSource dataSource) {
        this.sql = new Sql(dataSource);
    }

    Optional<RepoState> state(String repoId) {
        return sql.one(
                "SELECT repo_id, space_id, actor_path, published FROM ap_inv_repositories WHERE repo_id = ?",
                rs -> new RepoState(rs.getString(1), rs.getString(2), rs.getString(3), rs.getBoolean(4)),
                repoId);
    }

    void remember(String repoId, String spaceId, String actorPath, boolean published) {
        sql.update(
                "INSERT INTO ap_inv_repositories (repo_id, space_id, actor_path, published) VALUES (?, ?, ?, ?) ON CONFLICT (repo_id)"
                        + " DO UPDATE SET space_id = EXCLUDED.space_id, actor_path = EXCLUDED.actor_path, published = EXCLUDED.published, updated_at = now()",
                repoId,
                spaceId,
                actorPath,
                published);
    }

    void forget(String repoId) {
        sql.update("DELETE FROM ap_inv_repositories WHERE repo_id = ?", repoId);
    }

    /**
     * Appends an activity to {@code actorPath}'s outbox: gives it an id under the actor and its {@code published} time.
     *
     * @param template the activity without id and published; local URLs as paths
     */
    Stored append(String actorPath, ObjectNode template) {
        return sql.tx(c -> append(c, actorPath, template, null, null));
    }

    /** As {@link #append(String, ObjectNode)}, to one inbox ({@code deliverTo}, absolute on {@code deliverBase}) or the followers (null). */
    static Stored append(Connection c, String actorPath, ObjectNode template, String deliverTo, String deliverBase)
            throws SQLException {
        String id = actorPath + "/activities/" + Ids.id("act");
        ObjectNode body = JSON.createObjectNode();
        body.put("id", id);
        body.setAll(template);
        body.put("id", id);
        body.put("published", Instant.now().toString());
        long seq = Sql.one(
                        c,
                        "INSERT INTO ap_inv_activities (id, actor_path, type, body, deliver_to, deliver_base) VALUES (?, ?, ?, ?, ?, ?)"
                                + " RETURNING seq",
                        rs -> rs.getLong(1),
                        id,
                        actorPath,
                        body.path("type").asText(),
                        write(body),
                        deliverTo,
                        deliverBase)
                .orElseThrow();
        return new Stored(seq, id, actorPath, body.path("type").asText(), body);
    }

    /**
     * Claims up to {@code limit} activities not yet queued to their audience (oldest first, rows another instance holds
     * skipped), hands each to {@code queue}, and marks them queued, in one transaction: a crash before the mark leaves them
     * to be claimed again (a peer may then get one twice; activities are told apart by id).
     *
     * @return how many were claimed
     */
    int fanOut(int limit, java.util.function.Consumer<Pending> queue) {
        return sql.tx(c -> {
            List<Pending> due = Sql.list(
                    c,
                    "SELECT seq, id, actor_path, type, body, deliver_to, deliver_base FROM ap_inv_activities"
                            + " WHERE fanned_out_at IS NULL ORDER BY seq LIMIT ? FOR UPDATE SKIP LOCKED",
                    rs -> new Pending(
                            new Stored(
                                    rs.getLong(1),
                                    rs.getString(2),
                                    rs.getString(3),
                                    rs.getString(4),
                                    read(rs.getString(5))),
                            rs.getString(6),
                            rs.getString(7)),
                    limit);
            for (Pending p : due) {
                queue.accept(p);
                Sql.update(
                        c,
                        "UPDATE ap_inv_activities SET fanned_out_at = now() WHERE seq = ?",
                        p.activity().seq());
            }
            return due.size();
        });
    }

    /** The actor's activities, newest first. */
    List<Stored> outbox(String actorPath, int limit, long offset) {
        return sql.list(
                "SELECT seq, id, actor_path, type, body FROM ap_inv_activities WHERE actor_path = ? ORDER BY seq DESC LIMIT ? OFFSET ?",
                rs -> new Stored(
                        rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), read(rs.getString(5))),
                actorPath,
                limit,
                offset);
    }

    /** A kept activity by its id (a path). */
    Optional<Stored> activity(String id) {
        return sql.one(
                "SELECT seq, id, actor_path, type, body FROM ap_inv_activities WHERE id = ?",
                rs -> new Stored(
                        rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), read(rs.getString(5))),
                id);
    }

    long count(String actorPath) {
        return sql.count("SELECT count(*) FROM ap_inv_activities WHERE actor_path = ?", actorPath);
    }

    /** Adds (or renews) a follower of a local actor; false when it already followed. */
    boolean follow(Connection c, String actorPath, String follower, String inbox, String base, String followId)
            throws SQLException {
        return Sql.one(
                        c,
                        "INSERT INTO ap_inv_followers (actor_path, follower, inbox, base, follow_id) VALUES (?, ?, ?, ?, ?)"
                                + " ON CONFLICT (actor_path, follower) DO UPDATE SET inbox = EXCLUDED.inbox, base = EXCLUDED.base, follow_id = EXCLUDED.follow_id"
                                + " RETURNING (xmax = 0)",
                        rs -> rs.getBoolean(1),
                        actorPath,
                        follower,
                        inbox,
                        base,
                        followId)
                .orElse(false);
    }

    static boolean unfollow(Connection c, String actorPath, String follower) throws SQLException {
        return Sql.update(c, "DELETE FROM ap_inv_followers WHERE actor_path = ? AND follower = ?", actorPath, follower)
                == 1;
    }

    void dropFollowers(String actorPath) {
        sql.update("DELETE FROM ap_inv_followers WHERE actor_path = ?", actorPath);
    }

    List<Follower> followers(String actorPath, int limit, long offset) {
        return sql.list(
                "SELECT actor_path, follower, inbox, base, follow_id, created_at FROM ap_inv_followers WHERE actor_path = ?"
                        + " ORDER BY created_at, follower LIMIT ? OFFSET ?",
                rs -> new Follower(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getString(3),
                        rs.getString(4),
                        rs.getString(5),
                        Sql.instant(rs, "created_at")),
                actorPath,
                limit,
                offset);
    }

    long followerCount(String actorPath) {
        return sql.count("SELECT count(*) FROM ap_inv_followers WHERE actor_path = ?", actorPath);
    }

    /** Whether an inbox took the activity id from this actor already. */
    boolean seen(String actor, String activityId) {
        return sql.count(
                        "SELECT count(*) FROM ap_inv_inbox_seen WHERE actor = ? AND activity_id = ?", actor, activityId)
                > 0;
    }

    /**
     * Runs {@code effect} in one transaction with recording {@code activityId} as taken from {@code actor}; does nothing and
     * answers false when that actor sent it before (a replay). Keyed per actor so one sender can never mark another's id.
     */
    boolean once(String actor, String activityId, Sql.Work<?> effect) {
        return sql.tx(c -> {
            if (Sql.update(
                            c,
                            "INSERT INTO ap_inv_inbox_seen (actor, activity_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                            actor,
                            activityId)
                    == 0) {
                return false;
            }
            effect.run(c);
            return true;
        });
    }

    /** The template with every local URL (a path in {@link #URL_FIELDS}) made absolute on {@code base}. */
    static JsonNode render(JsonNode template, String base) {
        JsonNode copy = template.deepCopy();
        absolute(copy, base);
        return copy;
    }

    private static void absolute(JsonNode node, String base) {
        if (node instanceof ObjectNode o) {
            for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                JsonNode v = e.getValue();
                if (URL_FIELDS.contains(e.getKey())
                        && v.isTextual()
                        && v.asText().startsWith("/")) {
                    e.setValue(TextNode.valueOf(base + v.asText()));
                } else if (URL_FIELDS.contains(e.getKey()) && v instanceof ArrayNode a) {
                    for (int i = 0; i < a.size(); i++) {
                        if (a.get(i).isTextual() && a.get(i).asText().startsWith("/")) {
                            a.set(i, TextNode.valueOf(base + a.get(i).asText()));
                        } else {
                            absolute(a.get(i), base);
                        }
                    }
                } else {
                    absolute(v, base);
                }
            }
        } else if (node instanceof ArrayNode a) {
            a.forEach(x -> absolute(x, base));
        }
    }

    static String write(JsonNode node) {
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static ObjectNode read(String text) {
        try {
            return (ObjectNode) JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
