package dev.atrium.store.ap.core.internal;

import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.Sql;
import dev.atrium.store.ap.api.LocalStores;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The stores workspaces publish ({@code ap_stores}) and their explicit inventories ({@code ap_store_inventory}). */
@Component(service = {LocalStores.class, StoreCatalog.class})
public class StoreCatalog implements LocalStores {

    private static final String COLUMNS = "id, space_id, slug, name, summary, icon_url, created_at, updated_at";

    /** An inventory entry: a canonical repository and what its actor said when it was added. */
    record Item(
            String repositoryUri, String cloneUri, String defaultBranchRef, String defaultBranchHash, Instant addedAt) {
        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("repository_uri", repositoryUri);
            m.put("clone_uri", cloneUri);
            m.put("default_branch_ref", defaultBranchRef);
            m.put("default_branch_hash", defaultBranchHash);
            m.put("added_at", addedAt.toString());
            return m;
        }
    }

    private final Sql sql;

    /** Takes the key store as the reference that has applied this bundle's migrations. */
    @Activate
    public StoreCatalog(@Reference DataSource dataSource, @Reference ActorKeyStore migrated) {
        this.sql = new Sql(dataSource);
    }

    StoreCatalog(DataSource dataSource) {
        this.sql = new Sql(dataSource);
    }

    @Override
    public Optional<LocalStore> bySlug(String slug) {
        return sql.one("SELECT " + COLUMNS + " FROM ap_stores WHERE slug = ?", StoreCatalog::row, slug);
    }

    @Override
    public List<String> inventory(String storeId) {
        return items(storeId).stream().map(Item::repositoryUri).toList();
    }

    @Override
    public List<LocalStore> ofSpace(String spaceId) {
        return sql.list(
                "SELECT " + COLUMNS + " FROM ap_stores WHERE space_id = ? ORDER BY created_at, id LIMIT 1000",
                StoreCatalog::row,
                spaceId);
    }

    @Override
    public List<LocalStore> listing(String repositoryUri) {
        return sql.list(
                "SELECT " + COLUMNS
                        + " FROM ap_stores s WHERE EXISTS (SELECT 1 FROM ap_store_inventory i WHERE i.store_id = s.id"
                        + " AND i.repository_uri = ?) ORDER BY created_at, id LIMIT 1000",
                StoreCatalog::row,
                repositoryUri);
    }

    List<LocalStore> ofSpace(String spaceId, int limit, int offset) {
        return sql.list(
                "SELECT " + COLUMNS + " FROM ap_stores WHERE space_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?",
                StoreCatalog::row,
                spaceId,
                limit,
                offset);
    }

    long countOfSpace(String spaceId) {
        return sql.count("SELECT count(*) FROM ap_stores WHERE space_id = ?", spaceId);
    }

    /** @throws dev.atrium.kernel.api.Sql.Conflict when the slug is taken on this instance */
    LocalStore create(String spaceId, String slug, String name, String summary, String iconUrl) {
        return sql.one(
                        "INSERT INTO ap_stores (id, space_id, slug, name, summary, icon_url) VALUES (?, ?, ?, ?, ?, ?) RETURNING "
                                + COLUMNS,
                        StoreCatalog::row,
                        Ids.id("st"),
                        spaceId,
                        slug,
                        name,
                        summary,
                        iconUrl)
                .orElseThrow();
    }

    Optional<LocalStore> update(String storeId, String name, String summary, String iconUrl, boolean clearIcon) {
        return sql.one(
                "UPDATE ap_stores SET name = COALESCE(?, name), summary = COALESCE(?, summary), icon_url = CASE WHEN ? THEN NULL"
                        + " ELSE COALESCE(?, icon_url) END, updated_at = now() WHERE id = ? RETURNING " + COLUMNS,
                StoreCatalog::row,
                name,
                summary,
                clearIcon,
                iconUrl,
                storeId);
    }

    boolean delete(String storeId) {
        return sql.update("DELETE FROM ap_stores WHERE id = ?", storeId) == 1;
    }

    List<Item> items(String storeId) {
        return sql.list(
                "SELECT repository_uri, clone_uri, default_branch_ref, default_branch_hash, added_at FROM ap_store_inventory"
                        + " WHERE store_id = ? ORDER BY added_at, repository_uri",
                rs -> new Item(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getString(3),
                        rs.getString(4),
                        Sql.instant(rs, "added_at")),
                storeId);
    }

    /** @throws dev.atrium.kernel.api.Sql.Conflict when the repository is in the inventory already */
    Item add(String storeId, String repositoryUri, String cloneUri, String defaultBranchRef, String defaultBranchHash) {
        return sql.one(
                        "INSERT INTO ap_store_inventory (store_id, repository_uri, clone_uri, default_branch_ref, default_branch_hash)"
                                + " VALUES (?, ?, ?, ?, ?) RETURNING repository_uri, clone_uri, default_branch_ref, default_branch_hash, added_at",
                        rs -> new Item(
                                rs.getString(1),
                                rs.getString(2),
                                rs.getString(3),
                                rs.getString(4),
                                Sql.instant(rs, "added_at")),
                        storeId,
                        repositoryUri,
                        cloneUri,
                        defaultBranchRef,
                        defaultBranchHash)
                .orElseThrow();
    }

    boolean remove(String storeId, String repositoryUri) {
        return sql.update(
                        "DELETE FROM ap_store_inventory WHERE store_id = ? AND repository_uri = ?",
                        storeId,
                        repositoryUri)
                == 1;
    }

    private static LocalStore row(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new LocalStore(
                rs.getString("id"),
                rs.getString("space_id"),
                rs.getString("slug"),
                rs.getString("name"),
                rs.getString("summary"),
                rs.getString("icon_url"),
                Sql.instant(rs, "created_at"),
                Sql.instant(rs, "updated_at"));
    }
}
