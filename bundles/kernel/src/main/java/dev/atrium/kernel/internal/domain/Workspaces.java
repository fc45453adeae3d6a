package dev.atrium.kernel.internal.domain;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Callers;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import dev.atrium.kernel.api.WorkspaceModels;
import dev.atrium.kernel.internal.auth.AccessCache;
import dev.atrium.kernel.internal.auth.Mint;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Workspaces and the owner-scope proof. Every read of a workspace, by the kernel itself or by a
 * capability, goes through {@link #find}: one query that checks Principal, workspace and witness together.
 */
@Component(service = {OwnerScope.class, WorkspaceModels.class, Workspaces.class})
public class Workspaces implements OwnerScope, WorkspaceModels {

    public static final String NOT_FOUND = "workspace not found";

    private static final String OWNED = "SELECT " + WorkspaceRecord.COLUMNS + " FROM workspaces w "
            + "JOIN principals p ON p.id = w.owner_principal_id "
            + "JOIN owner_witnesses o ON o.workspace_id = w.id AND o.principal_id = w.owner_principal_id "
            + "WHERE w.owner_principal_id = ? AND p.status = 'active' AND w.status = 'active' AND o.status = 'active'";

    private final Sql sql;
    private final AccessCache access;

    @Activate
    public Workspaces(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrated, @Reference AccessCache access) {
        this.sql = new Sql(dataSource);
        this.access = access;
    }

    @Override
    public SpaceRef require(Caller caller, String spaceIdOrSlug) {
        return get(caller, spaceIdOrSlug).ref(caller.principalId());
    }

    @Override
    public Choice model(Caller caller, String spaceIdOrSlug) {
        WorkspaceRecord w = get(caller, spaceIdOrSlug);
        return new Choice(w.aiModel(), w.aiProvider());
    }

    /**
     * The caller's workspace by id or slug, or 404 exactly as for one that does not exist. A caller the kernel did not
     * make (a capability's forgery) is answered the same 404: a 401 would tell it which workspaces exist.
     */
    public WorkspaceRecord get(Caller caller, String spaceIdOrSlug) {
        if (!Mint.KERNEL.genuine(caller)) {
            throw ApiException.notFound(NOT_FOUND);
        }
        String principalId = caller.principalId();
        // a run proves its requester's authority again before each step: from the database, never from what was kept
        WorkspaceRecord w = spaceIdOrSlug == null
                ? null
                : Callers.ACTING_FOR.equals(caller.authMethod())
                        ? find(principalId, spaceIdOrSlug).orElse(null)
                        : access.get(
                                "w:" + principalId + "\n" + spaceIdOrSlug,
                                () -> find(principalId, spaceIdOrSlug).orElse(null),
                                r -> null);
        if (w == null) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return w;
    }

    public Optional<WorkspaceRecord> find(String principalId, String spaceIdOrSlug) {
        if (principalId == null || spaceIdOrSlug == null || spaceIdOrSlug.isEmpty()) {
            return Optional.empty();
        }
        return sql.one(
                OWNED + " AND (w.id = ? OR w.slug = ?)",
                WorkspaceRecord::of,
                principalId,
                spaceIdOrSlug,
                spaceIdOrSlug);
    }

    public Optional<WorkspaceRecord> findDefault(String principalId) {
        return sql.one(OWNED + " AND w.is_default", WorkspaceRecord::of, principalId);
    }

    public List<WorkspaceRecord> list(String principalId, int limit, int offset) {
        return sql.list(
                OWNED + " ORDER BY w.is_default DESC, w.created_at, w.id LIMIT ? OFFSET ?",
                WorkspaceRecord::of,
                principalId,
                limit,
                offset);
    }

    public int count(String principalId) {
        return sql.one("SELECT count(*) FROM (" + OWNED + ") owned", rs -> rs.getInt(1), principalId)
                .orElse(0);
    }

    /**
     * Creates a workspace and its owner witness in the caller's transaction. A requested slug must be free
     * (409 otherwise); without one, a free slug is made from the name.
     */
    public static WorkspaceRecord create(
            Connection c,
            String ownerId,
            String name,
            String slug,
            String description,
            String securityPosture,
            boolean isDefault)
            throws SQLException {
        Names.lock(c);
        if (slug == null) {
            slug = Names.freeSlug(c, name, ownerId);
        } else if (Names.slugTaken(c, slug, ownerId, null)) {
            throw ApiException.conflict("slug '" + slug + "' is already taken");
        }
        String id = Ids.id("sp");
        Sql.update(
                c,
                "INSERT INTO workspaces (id, owner_principal_id, name, slug, description, is_default, security_posture) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?)",
                id,
                ownerId,
                name,
                slug,
                description,
                isDefault,
                securityPosture);
        Sql.update(c, "INSERT INTO owner_witnesses (workspace_id, principal_id) VALUES (?, ?)", id, ownerId);
        return Sql.one(
                        c,
                        "SELECT " + WorkspaceRecord.COLUMNS + " FROM workspaces w WHERE w.id = ?",
                        WorkspaceRecord::of,
                        id)
                .orElseThrow();
    }

    public WorkspaceRecord create(
            String ownerId, String name, String slug, String description, String securityPosture) {
        return sql.tx(c -> create(c, ownerId, name, slug, description, securityPosture, false));
    }

    /** The parts of a workspace to change; null parts stay as they are. */
    public record Change(
            String name, String slug, String description, String securityPosture, String aiModel, String aiProvider) {}

    /** Applies the non-null parts of {@code change} to a workspace the caller owns. */
    public WorkspaceRecord update(Caller caller, String spaceIdOrSlug, Change change) {
        WorkspaceRecord updated = sql.tx(c -> {
            WorkspaceRecord w = Sql.one(
                            c,
                            OWNED + " AND (w.id = ? OR w.slug = ?) FOR UPDATE OF w",
                            WorkspaceRecord::of,
                            caller.principalId(),
                            spaceIdOrSlug,
                            spaceIdOrSlug)
                    .orElseThrow(() -> ApiException.notFound(NOT_FOUND));
            if (change.slug() != null && !change.slug().equals(w.slug())) {
                Names.lock(c);
                if (Names.slugTaken(c, change.slug(), w.ownerPrincipalId(), w.id())) {
                    throw ApiException.conflict("slug '" + change.slug() + "' is already taken");
                }
            }
            Sql.update(
                    c,
                    "UPDATE workspaces SET name = coalesce(?, name), slug = coalesce(?, slug), "
                            + "description = coalesce(?, description), security_posture = coalesce(?, security_posture), "
                            + "ai_model = coalesce(?, ai_model), ai_provider = coalesce(?, ai_provider), updated_at = now() WHERE id = ?",
                    change.name(),
                    change.slug(),
                    change.description(),
                    change.securityPosture(),
                    change.aiModel(),
                    change.aiProvider(),
                    w.id());
            return Sql.one(
                            c,
                            "SELECT " + WorkspaceRecord.COLUMNS + " FROM workspaces w WHERE w.id = ?",
                            WorkspaceRecord::of,
                            w.id())
                    .orElseThrow();
        });
        // this instance answers from the new state at once; the others when the trigger's notification arrives
        access.forgetAll();
        return updated;
    }

    /** Deletes a workspace the caller owns; its default workspace cannot be deleted (409). */
    public void delete(Caller caller, String spaceIdOrSlug) {
        sql.tx(c -> {
            WorkspaceRecord w = Sql.one(
                            c,
                            OWNED + " AND (w.id = ? OR w.slug = ?) FOR UPDATE OF w",
                            WorkspaceRecord::of,
                            caller.principalId(),
                            spaceIdOrSlug,
                            spaceIdOrSlug)
                    .orElseThrow(() -> ApiException.notFound(NOT_FOUND));
            if (w.isDefault()) {
                throw ApiException.conflict("the default workspace cannot be deleted");
            }
            return Sql.update(c, "DELETE FROM workspaces WHERE id = ?", w.id());
        });
        access.forgetAll();
    }
}
