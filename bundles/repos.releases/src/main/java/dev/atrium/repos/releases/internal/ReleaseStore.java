package dev.atrium.repos.releases.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The release and asset tables, which this bundle owns. */
@Component(service = ReleaseStore.class)
public class ReleaseStore {

    static final String NOT_FOUND = "release not found";
    static final String ASSET_NOT_FOUND = "asset not found";

    private static final String RELEASE =
            "id, repo_id, tag, name, body, draft, prerelease, target, commit_id, author_id,"
                    + " created_at, updated_at, published_at";
    private static final String ASSET =
            "id, release_id, repo_id, name, content_type, size, sha256, blob_key, uploader_id, download_count, created_at";

    private final Sql sql;

    @Activate
    public ReleaseStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    Sql sql() {
        return sql;
    }

    record Release(
            String id,
            String repoId,
            String tag,
            String name,
            String body,
            boolean draft,
            boolean prerelease,
            String target,
            String commitId,
            String authorId,
            Instant createdAt,
            Instant updatedAt,
            Instant publishedAt) {

        static Release of(ResultSet rs) throws SQLException {
            return new Release(
                    rs.getString("id"),
                    rs.getString("repo_id"),
                    rs.getString("tag"),
                    rs.getString("name"),
                    rs.getString("body"),
                    rs.getBoolean("draft"),
                    rs.getBoolean("prerelease"),
                    rs.getString("target"),
                    rs.getString("commit_id"),
                    rs.getString("author_id"),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "updated_at"),
                    rs.getTimestamp("published_at") == null ? null : Sql.instant(rs, "published_at"));
        }

        Map<String, Object> toJson(List<Asset> assets, String downloadBase) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("repo_id", repoId);
            m.put("tag_name", tag);
            m.put("target_commitish", target);
            m.put("commit_id", commitId);
            m.put("name", name);
            m.put("body", body);
            m.put("draft", draft);
            m.put("prerelease", prerelease);
            m.put("author_id", authorId);
            m.put("created_at", createdAt.toString());
            m.put("updated_at", updatedAt.toString());
            m.put("published_at", publishedAt == null ? null : publishedAt.toString());
            m.put("assets", assets.stream().map(a -> a.toJson(downloadBase)).toList());
            return m;
        }
    }

    record Asset(
            String id,
            String releaseId,
            String repoId,
            String name,
            String contentType,
            long size,
            String sha256,
            String blobKey,
            String uploaderId,
            long downloadCount,
            Instant createdAt) {

        static Asset of(ResultSet rs) throws SQLException {
            return new Asset(
                    rs.getString("id"),
                    rs.getString("release_id"),
                    rs.getString("repo_id"),
                    rs.getString("name"),
                    rs.getString("content_type"),
                    rs.getLong("size"),
                    rs.getString("sha256"),
                    rs.getString("blob_key"),
                    rs.getString("uploader_id"),
                    rs.getLong("download_count"),
                    Sql.instant(rs, "created_at"));
        }

        String etag() {
            return "\"" + sha256 + "\"";
        }

        /** @param downloadBase the release's URL ({@code …/api/repos/:id/releases/:tag}) the download URL extends */
        Map<String, Object> toJson(String downloadBase) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("release_id", releaseId);
            m.put("name", name);
            m.put("content_type", contentType);
            m.put("size", size);
            m.put("sha256", sha256);
            m.put("download_count", downloadCount);
            m.put("uploader_id", uploaderId);
            m.put("created_at", createdAt.toString());
            m.put("download_url", downloadBase + "/assets/" + id + "/download");
            return m;
        }
    }

    /** A new release's fields, checked. */
    record Draft(
            String tag, String name, String body, boolean draft, boolean prerelease, String target, String commitId) {}

    Release create(String repoId, String authorId, Draft d) {
        Instant published = d.draft() ? null : Instant.now();
        return sql.one(
                        "INSERT INTO releases (id, repo_id, tag, name, body, draft, prerelease, target, commit_id,"
                                + " author_id, published_at) VALUES (?,?,?,?,?,?,?,?,?,?,?) RETURNING " + RELEASE,
                        Release::of,
                        Ids.id("rel"),
                        repoId,
                        d.tag(),
                        d.name(),
                        d.body(),
                        d.draft(),
                        d.prerelease(),
                        d.target(),
                        d.commitId(),
                        authorId,
                        published == null ? null : java.sql.Timestamp.from(published))
                .orElseThrow();
    }

    /** The release of {@code tag}; drafts only when {@code withDrafts} (a reader who does not own the repository never sees one). */
    Release byTag(String repoId, String tag, boolean withDrafts) {
        return sql.one("SELECT " + RELEASE + " FROM releases WHERE repo_id = ? AND tag = ?", Release::of, repoId, tag)
                .filter(r -> withDrafts || !r.draft())
                .orElseThrow(() -> ApiException.notFound(NOT_FOUND));
    }

    Optional<Release> latest(String repoId) {
        return sql.one(
                "SELECT " + RELEASE + " FROM releases WHERE repo_id = ? AND NOT draft AND NOT prerelease"
                        + " ORDER BY published_at DESC, id DESC LIMIT 1",
                Release::of,
                repoId);
    }

    List<Release> list(String repoId, boolean withDrafts, int limit, int offset) {
        return sql.list(
                "SELECT " + RELEASE + " FROM releases WHERE repo_id = ?" + (withDrafts ? "" : " AND NOT draft")
                        + " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                Release::of,
                repoId,
                limit,
                offset);
    }

    long count(String repoId, boolean withDrafts) {
        return sql.count(
                "SELECT count(*) FROM releases WHERE repo_id = ?" + (withDrafts ? "" : " AND NOT draft"), repoId);
    }

    /**
     * Changes the fields given (null: unchanged). Publishing a draft sets {@code published_at} and the commit its tag
     * was made at.
     */
    Release update(
            Release r, String name, String body, Boolean draft, Boolean prerelease, String target, String commitId) {
        boolean publishing = Boolean.FALSE.equals(draft) && r.draft();
        return sql.one(
                        "UPDATE releases SET name = coalesce(?, name), body = coalesce(?, body),"
                                + " draft = coalesce(?, draft), prerelease = coalesce(?, prerelease),"
                                + " target = coalesce(?, target), commit_id = coalesce(?, commit_id),"
                                + " published_at = CASE WHEN ? THEN now() ELSE published_at END, updated_at = now()"
                                + " WHERE id = ? RETURNING " + RELEASE,
                        Release::of,
                        name,
                        body,
                        draft,
                        prerelease,
                        target,
                        commitId,
                        publishing,
                        r.id())
                .orElseThrow(() -> ApiException.notFound(NOT_FOUND));
    }

    /** The assets of {@code releaseIds}, oldest first, by release. */
    Map<String, List<Asset>> assets(List<String> releaseIds) {
        Map<String, List<Asset>> out = new LinkedHashMap<>();
        releaseIds.forEach(id -> out.put(id, new java.util.ArrayList<>()));
        if (releaseIds.isEmpty()) {
            return out;
        }
        sql.run(c -> {
            try (var st = c.prepareStatement(
                    "SELECT " + ASSET + " FROM release_assets WHERE release_id = ANY (?) ORDER BY created_at, id")) {
                st.setArray(1, c.createArrayOf("text", releaseIds.toArray()));
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        Asset a = Asset.of(rs);
                        out.get(a.releaseId()).add(a);
                    }
                }
            }
            return null;
        });
        return out;
    }

    List<Asset> assets(String releaseId) {
        return assets(List.of(releaseId)).get(releaseId);
    }

    Asset asset(String releaseId, String assetId) {
        return sql.one(
                        "SELECT " + ASSET + " FROM release_assets WHERE id = ? AND release_id = ?",
                        Asset::of,
                        assetId,
                        releaseId)
                .orElseThrow(() -> ApiException.notFound(ASSET_NOT_FOUND));
    }

    boolean assetNamed(String releaseId, String name) {
        return sql.count("SELECT count(*) FROM release_assets WHERE release_id = ? AND name = ?", releaseId, name) > 0;
    }

    static Asset insertAsset(Connection c, Asset a) throws SQLException {
        return Sql.one(
                        c,
                        "INSERT INTO release_assets (id, release_id, repo_id, name, content_type, size, sha256, blob_key,"
                                + " uploader_id) VALUES (?,?,?,?,?,?,?,?,?) RETURNING " + ASSET,
                        Asset::of,
                        a.id(),
                        a.releaseId(),
                        a.repoId(),
                        a.name(),
                        a.contentType(),
                        a.size(),
                        a.sha256(),
                        a.blobKey(),
                        a.uploaderId())
                .orElseThrow();
    }

    void downloaded(String assetId) {
        sql.update("UPDATE release_assets SET download_count = download_count + 1 WHERE id = ?", assetId);
    }

    /** The repositories that have releases (for the sweep that forgets the ones deleted while this bundle was away). */
    List<String> repositories() {
        return sql.list("SELECT DISTINCT repo_id FROM releases", rs -> rs.getString(1));
    }
}
