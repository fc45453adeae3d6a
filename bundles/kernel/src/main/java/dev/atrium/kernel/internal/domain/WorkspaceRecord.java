package dev.atrium.kernel.internal.domain;

import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import dev.atrium.kernel.internal.auth.Mint;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** A workspace row; {@link #toJson()} is the spec's workspace body and nothing more. */
public record WorkspaceRecord(
        String id,
        String ownerPrincipalId,
        String name,
        String slug,
        String description,
        boolean isDefault,
        String securityPosture,
        String aiModel,
        String aiProvider,
        Instant createdAt,
        Instant updatedAt) {

    public static final String COLUMNS = "w.id, w.owner_principal_id, w.name, w.slug, w.description, w.is_default, "
            + "w.security_posture, w.ai_model, w.ai_provider, w.created_at, w.updated_at";

    public static WorkspaceRecord of(ResultSet rs) throws SQLException {
        return new WorkspaceRecord(
                rs.getString("id"),
                rs.getString("owner_principal_id"),
                rs.getString("name"),
                rs.getString("slug"),
                rs.getString("description"),
                rs.getBoolean("is_default"),
                rs.getString("security_posture"),
                rs.getString("ai_model"),
                rs.getString("ai_provider"),
                Sql.instant(rs, "created_at"),
                Sql.instant(rs, "updated_at"));
    }

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("name", name);
        m.put("slug", slug);
        m.put("description", description);
        m.put("is_default", isDefault);
        m.put("security_posture", securityPosture);
        m.put("created_at", createdAt.toString());
        m.put("updated_at", updatedAt.toString());
        return m;
    }

    public Map<String, Object> modelJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model", aiModel);
        m.put("provider", aiProvider);
        return m;
    }

    /** The reference the owner scope hands out, proven for {@code provenFor} (null: named, proven for nobody). */
    public SpaceRef ref(String provenFor) {
        return Mint.KERNEL.workspace(id, slug, ownerPrincipalId, securityPosture, isDefault, provenFor);
    }
}
