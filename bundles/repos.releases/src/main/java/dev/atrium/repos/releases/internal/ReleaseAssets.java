package dev.atrium.repos.releases.internal;

import dev.atrium.blob.api.Blob;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.blob.api.BlobTooLargeException;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.releases.internal.ReleaseStore.Asset;
import dev.atrium.repos.releases.internal.ReleaseStore.Release;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.stream.Stream;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asset bytes in the BlobStore, one namespace per repository ({@code release.<repo id>}), so that the same bytes
 * uploaded twice to a repository are kept once and deleting the repository deletes its namespace. A blob goes when
 * the last asset row naming it goes; the row's insert and delete hold a transaction lock on the blob's key, so a
 * delete never removes bytes an upload of the same content is about to name.
 */
@Component(service = ReleaseAssets.class, configurationPid = "dev.atrium.repos.releases")
@Designate(ocd = ReleaseAssets.Config.class)
public class ReleaseAssets {

    @ObjectClassDefinition(name = "Atrium releases")
    public @interface Config {
        @AttributeDefinition(
                description = "Largest release asset in bytes (ATRIUM_RELEASE_ASSET_MAX_BYTES); the spec's 100 MB")
        long maxAssetBytes() default 100L * 1000 * 1000;
    }

    private static final Logger LOG = LoggerFactory.getLogger(ReleaseAssets.class);
    static final int MAX_NAME = 255;

    private final BlobStore blobs;
    private final ReleaseStore store;
    private final Sql sql;
    private final long maxBytes;

    @Activate
    public ReleaseAssets(@Reference BlobStore blobs, @Reference ReleaseStore store, Config config) {
        this.blobs = blobs;
        this.store = store;
        this.sql = store.sql();
        this.maxBytes = config.maxAssetBytes();
    }

    BlobStore blobs() {
        return blobs;
    }

    static String namespace(String repoId) {
        return "release." + repoId;
    }

    /** 400 unless {@code name} can be a downloaded file's name. */
    static String checkName(String name) {
        if (name == null
                || name.isBlank()
                || name.length() > MAX_NAME
                || name.equals(".")
                || name.equals("..")
                || name.chars().anyMatch(c -> c < 0x20 || c == 0x7f || c == '/' || c == '\\')
                || name.codePoints().anyMatch(c -> c >= 0xD800 && c <= 0xDFFF)) {
            throw ApiException.badRequest("an asset name is 1 to " + MAX_NAME
                    + " characters, with no slash, backslash or control character, and not . or ..");
        }
        return name;
    }

    /**
     * Keeps {@code content} as an asset of {@code release}.
     *
     * @throws ApiException 413 when it exceeds the limit, 409 when the release has an asset of that name
     */
    Asset upload(Release release, String uploaderId, String name, String contentType, InputStream content)
            throws IOException {
        if (store.assetNamed(release.id(), name)) {
            throw duplicate(name);
        }
        Blob blob;
        try {
            blob = blobs.put(namespace(release.repoId()), content, maxBytes);
        } catch (BlobTooLargeException e) {
            throw new ApiException(413, "PAYLOAD_TOO_LARGE", "a release asset is at most " + maxBytes + " bytes");
        }
        Asset wanted = new Asset(
                Ids.id("asset"),
                release.id(),
                release.repoId(),
                name,
                contentType,
                blob.size(),
                blob.sha256(),
                blob.key(),
                uploaderId,
                0,
                null);
        try {
            return sql.tx(c -> {
                lock(c, blob.key());
                // a delete of the last asset with these bytes may have removed them after the put
                if (!exists(blob.key())) {
                    throw ApiException.conflict("the asset's bytes were removed while it uploaded: upload it again");
                }
                return ReleaseStore.insertAsset(c, wanted);
            });
        } catch (Sql.Conflict e) {
            release(blob.key());
            throw duplicate(name);
        } catch (RuntimeException e) {
            release(blob.key());
            throw e;
        }
    }

    private boolean exists(String key) {
        try {
            return blobs.exists(key);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ApiException duplicate(String name) {
        return ApiException.conflict("the release already has an asset named " + name);
    }

    /** Deletes the asset; its bytes go when no other asset names them. */
    void delete(Asset a) {
        List<String> unused = sql.tx(c -> {
            lock(c, a.blobKey());
            Sql.update(c, "DELETE FROM release_assets WHERE id = ?", a.id());
            return unused(c, List.of(a.blobKey()));
        });
        drop(unused);
    }

    /** Deletes the release and its assets (the tag is the caller's business). */
    void delete(Release r) {
        List<String> unused = sql.tx(c -> {
            // an upload to this release waits here (its insert takes a key share of the row), so none is missed below
            Sql.one(c, "SELECT id FROM releases WHERE id = ? FOR UPDATE", rs -> rs.getString(1), r.id());
            List<String> keys = Sql.list(
                    c,
                    "SELECT DISTINCT blob_key FROM release_assets WHERE release_id = ? ORDER BY blob_key",
                    rs -> rs.getString(1),
                    r.id());
            for (String key : keys) {
                lock(c, key);
            }
            Sql.update(c, "DELETE FROM releases WHERE id = ?", r.id());
            return unused(c, keys);
        });
        drop(unused);
    }

    /**
     * Forgets every release of a deleted repository, and its namespace's blobs: the bytes first, so that a failure
     * leaves rows the next sweep finds again.
     *
     * @return how many releases and blobs went
     */
    int forgetRepository(String repoId) {
        List<String> keys;
        try (Stream<Blob> kept = blobs.list(namespace(repoId) + "/")) {
            keys = kept.map(Blob::key).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int gone = 0;
        for (String key : keys) {
            try {
                if (blobs.delete(key)) {
                    gone++;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return gone + sql.update("DELETE FROM releases WHERE repo_id = ?", repoId);
    }

    /** Of {@code keys}, the ones no asset names any more (the caller holds their locks). */
    private static List<String> unused(Connection c, List<String> keys) throws SQLException {
        List<String> out = new java.util.ArrayList<>();
        for (String key : keys) {
            if (Sql.count(c, "SELECT count(*) FROM release_assets WHERE blob_key = ?", key) == 0) {
                out.add(key);
            }
        }
        return out;
    }

    /**
     * Deletes the bytes of {@code keys} after the rows that named them are gone for good (committed): each under a
     * session lock on its key, which an upload's transaction lock waits for, and only when still no asset names it
     * (an upload of the same bytes may have come in between). A failure here leaves bytes, never rows without bytes.
     */
    private void drop(List<String> keys) {
        for (String key : keys) {
            try {
                sql.run(c -> {
                    Sql.exec(c, "SELECT pg_advisory_lock(hashtext('release-blob'), hashtext(?))", key);
                    try {
                        if (Sql.count(c, "SELECT count(*) FROM release_assets WHERE blob_key = ?", key) == 0) {
                            blobs.delete(key);
                        }
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    } finally {
                        Sql.exec(c, "SELECT pg_advisory_unlock(hashtext('release-blob'), hashtext(?))", key);
                    }
                    return null;
                });
            } catch (RuntimeException e) {
                LOG.warn("could not delete the unused bytes {}; they stay until the repository goes", key, e);
            }
        }
    }

    /** After a failed insert: the bytes go unless an asset names them. */
    private void release(String key) {
        drop(List.of(key));
    }

    private static void lock(Connection c, String key) throws SQLException {
        Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtext('release-blob'), hashtext(?))", key);
    }
}
