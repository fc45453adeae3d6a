package dev.atrium.people.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.Sql;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Activity items per actor ({@code people_activity}). Who may see an item is written with it ({@code audience}) and
 * whether its repository is public now is kept by the repository events ({@code repo_public}); reads take only what
 * both allow.
 */
@Component(service = ActivityStore.class)
public class ActivityStore {

    static final ObjectMapper JSON = new ObjectMapper();

    record Item(
            String id,
            String actorId,
            String kind,
            String repoId,
            String repoName,
            String audience,
            JsonNode payload,
            Instant createdAt) {}

    private final Sql sql;

    @Activate
    public ActivityStore(@Reference PeopleStore people) {
        this.sql = people.sql;
    }

    void add(
            String actorId,
            String kind,
            String repoId,
            String repoName,
            String audience,
            boolean repoPublic,
            Map<String, Object> payload) {
        String json;
        try {
            json = JSON.writeValueAsString(payload);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e);
        }
        sql.update(
                "INSERT INTO people_activity (id, actor_id, kind, repo_id, repo_name, audience, repo_public, payload) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?::jsonb)",
                Ids.id("act"),
                actorId,
                kind,
                repoId,
                repoName,
                audience,
                repoPublic,
                json);
    }

    /** An unstar takes back the actor's star items of the repository. */
    void removeStars(String actorId, String repoId) {
        sql.update("DELETE FROM people_activity WHERE actor_id = ? AND repo_id = ? AND kind = 'star'", actorId, repoId);
    }

    /** A repository's current name and visibility, for every item of it. */
    void repositoryChanged(String repoId, String name, boolean isPublic) {
        sql.update(
                "UPDATE people_activity SET repo_name = ?, repo_public = ? WHERE repo_id = ? "
                        + "AND (repo_name <> ? OR repo_public <> ?)",
                name,
                isPublic,
                repoId,
                name,
                isPublic);
    }

    /** The repositories some item shows as public: what the sweep at activation looks at again. */
    List<String> repositoriesShownAsPublic() {
        return sql.list("SELECT DISTINCT repo_id FROM people_activity WHERE repo_public", rs -> rs.getString(1));
    }

    void repositoryDeleted(String repoId) {
        sql.update("DELETE FROM people_activity WHERE repo_id = ?", repoId);
    }

    /**
     * The actor's items of public repositories whose audience is one of {@code audiences}, newest first.
     */
    List<Item> visible(String actorId, List<String> audiences, int limit, int offset) {
        if (audiences.isEmpty()) {
            return List.of();
        }
        return sql.list(
                "SELECT * FROM people_activity WHERE actor_id = ? AND repo_public AND audience = ANY (?::text[]) "
                        + "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                ActivityStore::item,
                actorId,
                "{" + String.join(",", audiences) + "}",
                limit,
                offset);
    }

    long countVisible(String actorId, List<String> audiences) {
        if (audiences.isEmpty()) {
            return 0;
        }
        return sql.count(
                "SELECT count(*) FROM people_activity WHERE actor_id = ? AND repo_public AND audience = ANY (?::text[])",
                actorId,
                "{" + String.join(",", audiences) + "}");
    }

    private static Item item(java.sql.ResultSet rs) throws java.sql.SQLException {
        JsonNode payload;
        try {
            payload = JSON.readTree(rs.getString("payload"));
        } catch (JsonProcessingException e) {
            throw new java.sql.SQLException("unreadable activity payload", e);
        }
        return new Item(
                rs.getString("id"),
                rs.getString("actor_id"),
                rs.getString("kind"),
                rs.getString("repo_id"),
                rs.getString("repo_name"),
                rs.getString("audience"),
                payload,
                Sql.instant(rs, "created_at"));
    }
}
