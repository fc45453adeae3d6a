package dev.atrium.repos.releases.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.api.RepositoryRegistry.PublicRepository;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Packages: public repositories with published (not draft) releases whose tags name semantic versions. Versions come
 * from this bundle's releases table; whether a repository is public, and its owner's name, from the repositories
 * bundle ({@link RepositoryRegistry#publicRepository}), so a private repository is never a package.
 */
@Component(service = Packages.class)
public class Packages {

    static final String NOT_FOUND = "package not found";
    private static final String SEMVER_TAG = "'^v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)'";

    /** A published release that names a version. */
    record Version(SemVer version, String tag, String releaseId, String name, boolean prerelease, Instant publishedAt) {
        /** Prerelease by its version ({@code -rc.1}) or by the release's own flag. */
        boolean anyPrerelease() {
            return prerelease || version.isPrerelease();
        }

        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("version", version.text());
            m.put("tag", tag);
            m.put("release_id", releaseId);
            m.put("name", name);
            m.put("prerelease", anyPrerelease());
            m.put("published_at", publishedAt == null ? null : publishedAt.toString());
            return m;
        }
    }

    record Rating(int count, double average) {}

    record Review(String id, String principalId, int rating, String body, Instant createdAt, Instant updatedAt) {}

    private final Sql sql;
    private final RepositoryRegistry repositories;
    private final PrincipalDirectory principals;

    @Activate
    public Packages(
            @Reference ReleaseStore store,
            @Reference RepositoryRegistry repositories,
            @Reference PrincipalDirectory principals) {
        this.sql = store.sql();
        this.repositories = repositories;
        this.principals = principals;
    }

    /** The public repository {@code repoId} when it is a package; 404 otherwise. */
    PublicRepository packageById(String repoId) {
        PublicRepository r = repositories.publicRepository(repoId).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        if (versions(r.repository().id()).isEmpty()) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return r;
    }

    PublicRepository packageByName(String owner, String name) {
        PublicRepository r =
                repositories.publicRepository(owner, name).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        if (versions(r.repository().id()).isEmpty()) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return r;
    }

    /** The versions of a repository, highest first (a prerelease below its release). */
    List<Version> versions(String repoId) {
        List<Version> out = new ArrayList<>();
        for (ReleaseRow row : sql.list(
                "SELECT id, tag, name, prerelease, published_at FROM releases WHERE repo_id = ? AND NOT draft AND tag ~ "
                        + SEMVER_TAG,
                rs -> new ReleaseRow(
                        rs.getString("id"),
                        rs.getString("tag"),
                        rs.getString("name"),
                        rs.getBoolean("prerelease"),
                        rs.getTimestamp("published_at") == null
                                ? null
                                : rs.getTimestamp("published_at").toInstant()),
                repoId)) {
            SemVer.parse(row.tag())
                    .ifPresent(
                            v -> out.add(new Version(v, row.tag(), row.id(), row.name(), row.prerelease(), row.at())));
        }
        out.sort(Comparator.comparing(Version::version).reversed().thenComparing(Version::tag));
        return out;
    }

    private record ReleaseRow(String id, String tag, String name, boolean prerelease, Instant at) {}

    /** The highest version that is not a prerelease. */
    Optional<Version> latest(String repoId) {
        return versions(repoId).stream().filter(v -> !v.anyPrerelease()).findFirst();
    }

    /**
     * Packages whose name, owner or description holds {@code query} (every package when null), most recently released
     * first. The candidates are the repositories with versioned releases (an index of this bundle's table); each is
     * then checked to be public.
     */
    List<PublicRepository> search(String query, int limit, int offset, boolean prefixOnly) {
        String q = query == null ? null : query.toLowerCase(Locale.ROOT);
        List<PublicRepository> out = new ArrayList<>();
        int skipped = 0;
        int batch = 200;
        for (int from = 0; out.size() < limit; from += batch) {
            List<String> ids = sql.list(
                    "SELECT repo_id FROM releases WHERE NOT draft AND tag ~ " + SEMVER_TAG
                            + " GROUP BY repo_id ORDER BY max(published_at) DESC NULLS LAST, repo_id LIMIT ? OFFSET ?",
                    rs -> rs.getString(1),
                    batch,
                    from);
            for (String id : ids) {
                Optional<PublicRepository> r = repositories.publicRepository(id);
                if (r.isEmpty() || !matches(r.get(), q, prefixOnly)) {
                    continue;
                }
                if (skipped < offset) {
                    skipped++;
                } else if (out.size() < limit) {
                    out.add(r.get());
                }
            }
            if (ids.size() < batch) {
                break;
            }
        }
        return out;
    }

    private static boolean matches(PublicRepository r, String q, boolean prefixOnly) {
        if (q == null) {
            return true;
        }
        String name = r.repository().name().toLowerCase(Locale.ROOT);
        if (prefixOnly) {
            return name.startsWith(q) || r.fullName().toLowerCase(Locale.ROOT).startsWith(q);
        }
        return name.contains(q)
                || r.fullName().toLowerCase(Locale.ROOT).contains(q)
                || r.repository().description().toLowerCase(Locale.ROOT).contains(q);
    }

    Rating rating(String repoId) {
        return sql.one(
                        "SELECT review_count, rating_sum FROM package_ratings WHERE repo_id = ?",
                        rs -> new Rating(
                                rs.getInt(1),
                                rs.getInt(1) == 0 ? 0.0 : Math.round(rs.getInt(2) * 100.0 / rs.getInt(1)) / 100.0),
                        repoId)
                .orElse(new Rating(0, 0.0));
    }

    List<Review> reviews(String repoId, int limit, int offset) {
        return sql.list(
                "SELECT id, principal_id, rating, body, created_at, updated_at FROM package_reviews WHERE repo_id = ?"
                        + " ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
                rs -> new Review(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getInt(3),
                        rs.getString(4),
                        rs.getTimestamp(5).toInstant(),
                        rs.getTimestamp(6).toInstant()),
                repoId,
                limit,
                offset);
    }

    /** Writes the caller's review of a package: a new one, or their earlier one changed. Returns it and whether it is new. */
    Map.Entry<Review, Boolean> review(String repoId, String principalId, int rating, String body) {
        return sql.one(
                        "INSERT INTO package_reviews (id, repo_id, principal_id, rating, body) VALUES (?, ?, ?, ?, ?)"
                                + " ON CONFLICT (repo_id, principal_id) DO UPDATE SET rating = excluded.rating,"
                                + " body = excluded.body, updated_at = now()"
                                + " RETURNING id, principal_id, rating, body, created_at, updated_at, (xmax = 0) AS created",
                        rs -> Map.entry(
                                new Review(
                                        rs.getString(1),
                                        rs.getString(2),
                                        rs.getInt(3),
                                        rs.getString(4),
                                        rs.getTimestamp(5).toInstant(),
                                        rs.getTimestamp(6).toInstant()),
                                rs.getBoolean(7)),
                        Ids.id("rev"),
                        repoId,
                        principalId,
                        rating,
                        body)
                .orElseThrow();
    }

    /** Removes every review of a repository that is gone (the releases bundle tidies up after deletions). */
    void forget(String repoId) {
        sql.update("DELETE FROM package_reviews WHERE repo_id = ?", repoId);
        sql.update("DELETE FROM package_ratings WHERE repo_id = ?", repoId);
    }

    Map<String, Object> reviewJson(Review r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", r.id());
        m.put("rating", r.rating());
        m.put("body", r.body());
        Map<String, Object> author = new LinkedHashMap<>();
        author.put(
                "username",
                principals
                        .get(r.principalId())
                        .map(PrincipalDirectory.Entry::username)
                        .orElse(null));
        m.put("author", author);
        m.put("created_at", r.createdAt().toString());
        m.put("updated_at", r.updatedAt().toString());
        return m;
    }

    /** A package as the lists show it. */
    Map<String, Object> json(PublicRepository r) {
        String id = r.repository().id();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("repo_id", id);
        m.put("name", r.repository().name());
        m.put("full_name", r.fullName());
        Map<String, Object> owner = new LinkedHashMap<>();
        owner.put("username", r.ownerUsername());
        owner.put("path", r.ownerPath());
        m.put("owner", owner);
        m.put("description", r.repository().description());
        m.put("latest_version", latest(id).map(v -> v.version().text()).orElse(null));
        m.put("stars", r.stars());
        Rating rating = rating(id);
        m.put("rating_average", rating.average());
        m.put("rating_count", rating.count());
        return m;
    }
}
