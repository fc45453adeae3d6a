package dev.atrium.kernel.internal.domain;

import dev.atrium.kernel.api.PublicProfiles;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The kernel's {@link PublicProfiles}: active Principals with a username, and the proven-for-nobody workspaces of one. */
@Component(service = PublicProfiles.class)
public class PublicProfileDirectory implements PublicProfiles {

    private static final String SELECT = "SELECT id, username, name, picture, created_at, private_account, "
            + "activity_visibility FROM principals WHERE status = 'active' AND username IS NOT NULL ";

    /** The same three-way proof as the owner scope: an owner witness must agree with the owner column. */
    private static final String WORKSPACES = "SELECT " + WorkspaceRecord.COLUMNS + " FROM workspaces w "
            + "JOIN principals p ON p.id = w.owner_principal_id "
            + "JOIN owner_witnesses o ON o.workspace_id = w.id AND o.principal_id = w.owner_principal_id "
            + "WHERE p.status = 'active' AND w.status = 'active' AND o.status = 'active' AND p.id = ? "
            + "ORDER BY w.created_at, w.id";

    private final Sql sql;

    @Activate
    public PublicProfileDirectory(@Reference DataSource dataSource, @Reference SchemaMigrations migrated) {
        this.sql = new Sql(dataSource);
    }

    @Override
    public Optional<Profile> byUsername(String username) {
        if (username == null || username.isEmpty() || username.length() > 100) {
            return Optional.empty();
        }
        return sql.one(SELECT + "AND username = ?", PublicProfileDirectory::profile, username.toLowerCase(Locale.ROOT));
    }

    @Override
    public Optional<Profile> byId(String principalId) {
        if (principalId == null || principalId.isEmpty()) {
            return Optional.empty();
        }
        return sql.one(SELECT + "AND id = ?", PublicProfileDirectory::profile, principalId);
    }

    @Override
    public List<Profile> search(String query, int limit, int offset) {
        String like = like(query);
        return like == null
                ? sql.list(
                        SELECT + "ORDER BY username LIMIT ? OFFSET ?", PublicProfileDirectory::profile, limit, offset)
                : sql.list(
                        SELECT + "AND (username ILIKE ? OR name ILIKE ?) ORDER BY username LIMIT ? OFFSET ?",
                        PublicProfileDirectory::profile,
                        like,
                        like,
                        limit,
                        offset);
    }

    @Override
    public long count(String query) {
        String like = like(query);
        String count = "SELECT count(*) FROM principals WHERE status = 'active' AND username IS NOT NULL ";
        return like == null
                ? sql.count(count)
                : sql.count(count + "AND (username ILIKE ? OR name ILIKE ?)", like, like);
    }

    @Override
    public List<SpaceRef> workspaces(String principalId) {
        return sql.list(WORKSPACES, WorkspaceRecord::of, principalId).stream()
                .map(w -> w.ref(null))
                .toList();
    }

    /** {@code %query%} with LIKE's wildcards taken literally; null for no query. */
    private static String like(String query) {
        if (query == null || query.isBlank()) {
            return null;
        }
        String escaped = query.trim().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
        return "%" + escaped + "%";
    }

    private static Profile profile(ResultSet rs) throws SQLException {
        return new Profile(
                rs.getString("id"),
                rs.getString("username"),
                rs.getString("name"),
                rs.getString("picture"),
                Sql.instant(rs, "created_at"),
                rs.getBoolean("private_account"),
                rs.getString("activity_visibility"));
    }
}
