package dev.atrium.repos.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.Sql;
import java.net.URI;
import java.net.URISyntaxException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The operator's curated seed repositories ({@code seed_repositories}): what a new user is offered to import, in the
 * operator's order. Anyone reads the list; only the operator changes it.
 */
@Component(service = SeedRepositories.class)
public class SeedRepositories {

    static final int MOST = 500;

    record Seed(
            String id, String url, String name, String description, String category, boolean checked, int position) {
        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("url", url);
            m.put("name", name);
            m.put("description", description);
            m.put("category", category);
            m.put("checked", checked);
            return m;
        }
    }

    private static final String COLUMNS = "id, url, name, description, category, checked, position";

    private final Sql sql;

    @Activate
    public SeedRepositories(@Reference DataSource dataSource, @Reference RepositoryStore migrated) {
        this.sql = new Sql(dataSource);
    }

    List<Seed> list() {
        return sql.list(
                "SELECT " + COLUMNS + " FROM seed_repositories ORDER BY position, created_at, id",
                SeedRepositories::row);
    }

    Seed create(JsonNode body) {
        JsonBody b = JsonBody.of(body);
        NulText.reject(body);
        String url = url(b.text("url", 1, 2000));
        String name = b.text("name", 1, 100);
        String description = b.optionalText("description", 0, 1000).orElse("");
        String category = b.optionalText("category", 0, 100).orElse("");
        boolean checked = b.bool("checked").orElse(false);
        int position =
                position(body).orElse((int) sql.count("SELECT coalesce(max(position) + 1, 0) FROM seed_repositories"));
        if (sql.count("SELECT count(*) FROM seed_repositories") >= MOST) {
            throw ApiException.conflict("the seed list holds at most " + MOST + " repositories");
        }
        try {
            return sql.one(
                            "INSERT INTO seed_repositories (id, url, name, description, category, checked, position)"
                                    + " VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING " + COLUMNS,
                            SeedRepositories::row,
                            Ids.id("seed"),
                            url,
                            name,
                            description,
                            category,
                            checked,
                            position)
                    .orElseThrow();
        } catch (Sql.Conflict e) {
            throw ApiException.conflict("a seed repository with this url exists");
        }
    }

    Seed update(String id, JsonNode body) {
        JsonBody b = JsonBody.of(body);
        NulText.reject(body);
        String url = b.optionalText("url", 1, 2000).map(SeedRepositories::url).orElse(null);
        try {
            return sql.one(
                            "UPDATE seed_repositories SET url = coalesce(?, url), name = coalesce(?, name),"
                                    + " description = coalesce(?, description), category = coalesce(?, category),"
                                    + " checked = coalesce(?, checked), position = coalesce(?, position) WHERE id = ?"
                                    + " RETURNING " + COLUMNS,
                            SeedRepositories::row,
                            url,
                            b.optionalText("name", 1, 100).orElse(null),
                            b.optionalText("description", 0, 1000).orElse(null),
                            b.optionalText("category", 0, 100).orElse(null),
                            b.bool("checked").orElse(null),
                            position(body).orElse(null),
                            id)
                    .orElseThrow(() -> ApiException.notFound("seed repository not found"));
        } catch (Sql.Conflict e) {
            throw ApiException.conflict("a seed repository with this url exists");
        }
    }

    void delete(String id) {
        if (sql.update("DELETE FROM seed_repositories WHERE id = ?", id) == 0) {
            throw ApiException.notFound("seed repository not found");
        }
    }

    private static java.util.Optional<Integer> position(JsonNode body) {
        JsonNode p = body == null ? null : body.get("position");
        if (p == null || p.isNull()) {
            return java.util.Optional.empty();
        }
        if (!p.canConvertToInt() || !p.isIntegralNumber() || p.intValue() < 0) {
            throw ApiException.badRequest("position must be a non-negative integer");
        }
        return java.util.Optional.of(p.intValue());
    }

    /** An http(s) URL of a Git repository (the import reads it later through the egress guard). */
    private static String url(String text) {
        try {
            URI u = new URI(text.trim());
            if (!("https".equalsIgnoreCase(u.getScheme()) || "http".equalsIgnoreCase(u.getScheme()))
                    || u.getHost() == null) {
                throw ApiException.badRequest("url must be an http or https URL");
            }
            return u.toString();
        } catch (URISyntaxException e) {
            throw ApiException.badRequest("url must be an http or https URL");
        }
    }

    private static Seed row(ResultSet rs) throws SQLException {
        return new Seed(
                rs.getString("id"),
                rs.getString("url"),
                rs.getString("name"),
                rs.getString("description"),
                rs.getString("category"),
                rs.getBoolean("checked"),
                rs.getInt("position"));
    }
}
