package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.api.Repository;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The repositories and stars tables, which this bundle owns. Workspaces are known by id only. */
@Component(service = RepositoryStore.class)
public class RepositoryStore {

    private static final String COLUMNS =
            "id, space_id, name, description, visibility, default_branch, is_default, forked_from, "
                    + "allow_force_push, created_at, updated_at";

    private final Sql sql;

    @Activate
    public RepositoryStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    /** A new repository id: {@code repo_} and 20 base62 characters (20 lower-case base36 ones before issue 14; both parse alike). */
    String newId() {
        return Ids.id("repo");
    }

    /** Inserts a repository row; 409 when the workspace already has one of that name (or a default one). */
    Repository insert(
            String id,
            String spaceId,
            String name,
            String description,
            String visibility,
            String defaultBranch,
            boolean isDefault,
            String forkedFrom) {
        try {
            return one(
                            "INSERT INTO repositories (id, space_id, name, description, visibility, default_branch, is_default, forked_from) "
                                    + "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING " + COLUMNS,
                            id,
                            spaceId,
                            name,
                            description,
                            visibility,
                            defaultBranch,
                            isDefault,
                            forkedFrom)
                    .orElseThrow();
        } catch (Sql.Conflict e) {
            throw ApiException.conflict(
                    isDefault && e.constraint().equals("repositories_one_default")
                            ? "this workspace already has a default repository"
                            : "a repository named " + name + " already exists in this workspace");
        }
    }

    Optional<Repository> byId(String id) {
        return one("SELECT " + COLUMNS + " FROM repositories WHERE id = ?", id);
    }

    Optional<Repository> byName(String spaceId, String name) {
        return one("SELECT " + COLUMNS + " FROM repositories WHERE space_id = ? AND name = ?", spaceId, name);
    }

    Optional<Repository> defaultOf(String spaceId) {
        return one("SELECT " + COLUMNS + " FROM repositories WHERE space_id = ? AND is_default", spaceId);
    }

    List<Repository> list(String spaceId) {
        return list("SELECT " + COLUMNS + " FROM repositories WHERE space_id = ? ORDER BY created_at, id", spaceId);
    }

    /** Applies the non-null parts; 409 on a name clash. */
    Repository update(
            String id,
            String name,
            String description,
            String visibility,
            String defaultBranch,
            Boolean allowForcePush) {
        try {
            return one(
                            "UPDATE repositories SET name = coalesce(?, name), description = coalesce(?, description), "
                                    + "visibility = coalesce(?, visibility), default_branch = coalesce(?, default_branch), "
                                    + "allow_force_push = coalesce(?, allow_force_push), updated_at = now() WHERE id = ? RETURNING "
                                    + COLUMNS,
                            name,
                            description,
                            visibility,
                            defaultBranch,
                            allowForcePush,
                            id)
                    .orElseThrow(() -> ApiException.notFound("repository not found"));
        } catch (Sql.Conflict e) {
            throw ApiException.conflict("a repository named " + name + " already exists in this workspace");
        }
    }

    boolean delete(String id) {
        return sql.update("DELETE FROM repositories WHERE id = ?", id) > 0;
    }

    /** Whether the star is new. */
    boolean star(String repoId, String principalId) {
        return sql.update(
                        "INSERT INTO repository_stars (repo_id, principal_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                        repoId,
                        principalId)
                > 0;
    }

    /** Whether there was a star to remove. */
    boolean unstar(String repoId, String principalId) {
        return sql.update("DELETE FROM repository_stars WHERE repo_id = ? AND principal_id = ?", repoId, principalId)
                > 0;
    }

    boolean starred(String repoId, String principalId) {
        return sql.count(
                        "SELECT count(*) FROM repository_stars WHERE repo_id = ? AND principal_id = ?",
                        repoId,
                        principalId)
                > 0;
    }

    long stars(String repoId) {
        return sql.count("SELECT count(*) FROM repository_stars WHERE repo_id = ?", repoId);
    }

    /** The repositories a Principal starred, newest star first. */
    List<Repository> starredBy(String principalId, int limit, int offset) {
        return list(
                "SELECT " + prefixed("r") + " FROM repositories r JOIN repository_stars s ON s.repo_id = r.id "
                        + "WHERE s.principal_id = ? ORDER BY s.created_at DESC, r.id LIMIT ? OFFSET ?",
                principalId,
                limit,
                offset);
    }

    long countStarredBy(String principalId) {
        return sql.count("SELECT count(*) FROM repository_stars WHERE principal_id = ?", principalId);
    }

    /** Records a push: its time, and the language the default branch now mostly is (null leaves it as it was). */
    void recordPush(String repoId, String language) {
        sql.update(
                "UPDATE repositories SET pushed_at = now(), updated_at = now(), language = coalesce(?, language)"
                        + " WHERE id = ?",
                language,
                repoId);
    }

    /** What explore knows of a repository besides its row's core: topics, language, whether it is in the catalog. */
    record Explored(List<String> topics, String language, boolean inCatalog) {}

    Explored explored(String repoId) {
        return sql.one(
                        "SELECT topics, language, in_catalog FROM repositories WHERE id = ?",
                        rs -> new Explored(
                                List.of((String[]) rs.getArray(1).getArray()), rs.getString(2), rs.getBoolean(3)),
                        repoId)
                .orElse(new Explored(List.of(), null, false));
    }

    /** Whether the repository's default branch takes merges of pull requests only. */
    boolean mergesOnly(String repoId) {
        return sql.one("SELECT merges_only FROM repositories WHERE id = ?", rs -> rs.getBoolean(1), repoId)
                .orElse(false);
    }

    void setMergesOnly(String repoId, boolean mergesOnly) {
        sql.update("UPDATE repositories SET merges_only = ?, updated_at = now() WHERE id = ?", mergesOnly, repoId);
    }

    /**
     * A repository's upstream row.
     *
     * @param url        the remote it fetches from, or null (a fork fetches from its forked_from)
     * @param partial    whether it was imported blobless (its fetches stay blobless)
     * @param lastResult {@code ok}, {@code failed}, or null before the first fetch
     */
    record Upstream(String url, boolean partial, java.time.Instant lastFetchAt, String lastResult, String lastError) {}

    Optional<Upstream> upstream(String repoId) {
        return sql.one(
                "SELECT url, partial, last_fetch_at, last_result, last_error FROM repository_upstreams WHERE repo_id = ?",
                rs -> new Upstream(
                        rs.getString("url"),
                        rs.getBoolean("partial"),
                        Sql.instant(rs, "last_fetch_at"),
                        rs.getString("last_result"),
                        rs.getString("last_error")),
                repoId);
    }

    /** Records the remote a repository fetches from (an import's, or fetch-remote's). */
    void setUpstream(String repoId, String url, boolean partial) {
        sql.update(
                "INSERT INTO repository_upstreams (repo_id, url, partial) VALUES (?, ?, ?) ON CONFLICT (repo_id)"
                        + " DO UPDATE SET url = excluded.url, partial = excluded.partial",
                repoId,
                url,
                partial);
    }

    /** Records how a fetch from the upstream went ({@code error} null when it went well). */
    void fetched(String repoId, String error) {
        sql.update(
                "INSERT INTO repository_upstreams (repo_id, last_fetch_at, last_result, last_error)"
                        + " VALUES (?, now(), ?, ?) ON CONFLICT (repo_id) DO UPDATE SET last_fetch_at = now(),"
                        + " last_result = excluded.last_result, last_error = excluded.last_error",
                repoId,
                error == null ? "ok" : "failed",
                error);
    }

    private static String prefixed(String alias) {
        StringBuilder b = new StringBuilder();
        for (String c : COLUMNS.split(", ")) {
            b.append(b.length() == 0 ? "" : ", ").append(alias).append('.').append(c);
        }
        return b.toString();
    }

    private static Repository row(ResultSet rs) throws SQLException {
        return new Repository(
                rs.getString("id"),
                rs.getString("space_id"),
                rs.getString("name"),
                rs.getString("description"),
                rs.getString("visibility"),
                rs.getString("default_branch"),
                rs.getBoolean("is_default"),
                rs.getString("forked_from"),
                rs.getBoolean("allow_force_push"),
                rs.getTimestamp("created_at").toInstant(),
                rs.getTimestamp("updated_at").toInstant());
    }

    private Optional<Repository> one(String statement, Object... args) {
        return sql.one(statement, RepositoryStore::row, args);
    }

    private List<Repository> list(String statement, Object... args) {
        return sql.list(statement, RepositoryStore::row, args);
    }
}
