package dev.atrium.kernel.internal.domain;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The kernel's {@link SpaceDirectory}: the same three-way proof as the owner scope, keyed by a public name. */
@Component(service = SpaceDirectory.class)
public class OwnerNames implements SpaceDirectory {

    private static final String PROVEN = "SELECT " + WorkspaceRecord.COLUMNS + " FROM workspaces w "
            + "JOIN principals p ON p.id = w.owner_principal_id "
            + "JOIN owner_witnesses o ON o.workspace_id = w.id AND o.principal_id = w.owner_principal_id "
            + "WHERE p.status = 'active' AND w.status = 'active' AND o.status = 'active' ";

    private final Sql sql;

    @Activate
    public OwnerNames(@Reference DataSource dataSource, @Reference SchemaMigrations migrated) {
        this.sql = new Sql(dataSource);
    }

    @Override
    public Optional<SpaceRef> byOwnerName(String usernameOrSlug) {
        if (usernameOrSlug == null || usernameOrSlug.isEmpty() || usernameOrSlug.length() > 100) {
            return Optional.empty();
        }
        // slugs and usernames share one namespace, so at most one of the two branches matches
        return sql.one(
                        PROVEN + "AND (w.slug = ? OR (w.is_default AND p.username = ?)) LIMIT 1",
                        WorkspaceRecord::of,
                        usernameOrSlug,
                        usernameOrSlug)
                .map(w -> w.ref(null));
    }

    @Override
    public Optional<SpaceRef> byId(String spaceId) {
        if (spaceId == null || spaceId.isEmpty()) {
            return Optional.empty();
        }
        return sql.one(PROVEN + "AND w.id = ?", WorkspaceRecord::of, spaceId).map(w -> w.ref(null));
    }
}
