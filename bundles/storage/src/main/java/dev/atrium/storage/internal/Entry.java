package dev.atrium.storage.internal;

import dev.atrium.kernel.api.Sql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** A row of {@code storage_files}: a file or a folder of a workspace. */
record Entry(
        String id,
        String spaceId,
        String parentId,
        String name,
        String path,
        String kind,
        String status,
        long size,
        String contentType,
        String sha256,
        String blobKey,
        String etag,
        Long declaredSize,
        Instant createdAt,
        Instant updatedAt) {

    static final String COLUMNS =
            "id, space_id, parent_id, name, path, kind, status, size, content_type, sha256, blob_key, etag, "
                    + "declared_size, created_at, updated_at";

    static Entry of(ResultSet rs) throws SQLException {
        return new Entry(
                rs.getString("id"),
                rs.getString("space_id"),
                rs.getString("parent_id"),
                rs.getString("name"),
                rs.getString("path"),
                rs.getString("kind"),
                rs.getString("status"),
                rs.getLong("size"),
                rs.getString("content_type"),
                rs.getString("sha256"),
                rs.getString("blob_key"),
                rs.getString("etag"),
                (Long) rs.getObject("declared_size"),
                Sql.instant(rs, "created_at"),
                Sql.instant(rs, "updated_at"));
    }

    boolean folder() {
        return "folder".equals(kind);
    }

    Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("space_id", spaceId);
        m.put("parent_id", parentId);
        m.put("name", name);
        m.put("path", path);
        m.put("kind", kind);
        m.put("size", size);
        m.put("content_type", contentType);
        m.put("sha256", sha256);
        m.put("etag", etag);
        m.put("created_at", createdAt.toString());
        m.put("updated_at", updatedAt.toString());
        return m;
    }

    /** The strong ETag of a content: its SHA-256, quoted. */
    static String etagOf(String sha256) {
        return "\"" + sha256 + "\"";
    }
}
