package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.api.Repository;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The queries explore answers from: public repositories only, always ({@code visibility = 'public'} is in every
 * statement, and every index they use is partial on it), so no private repository, name or count can come out.
 * Search is PostgreSQL full text over name, topics and description, plus {@code pg_trgm} similarity on names when
 * the server has the extension (a name prefix otherwise).
 */
@Component(service = ExploreStore.class)
public class ExploreStore {

    static final String COLUMNS = "r.id, r.space_id, r.name, r.description, r.visibility, r.default_branch,"
            + " r.is_default, r.forked_from, r.allow_force_push, r.created_at, r.updated_at, r.topics, r.language,"
            + " r.star_count, r.fork_count, r.pushed_at, r.in_catalog";

    /** Trending: stars and forks of the last {@value #TRENDING_WINDOW_DAYS} days, each worth exp(-age/7 days). */
    static final int TRENDING_WINDOW_DAYS = 30;

    static final double TRENDING_DECAY_DAYS = 7.0;

    /** A public repository with what explore shows of it; {@code rank} is the search's relevance (0 without one). */
    record Listed(
            Repository repo,
            List<String> topics,
            String language,
            int stars,
            int forks,
            Instant pushedAt,
            boolean inCatalog,
            double rank) {}

    /** The orders a list can take; {@code best} is relevance when there is a query, stars otherwise. */
    enum Sort {
        BEST,
        STARS,
        UPDATED,
        CREATED,
        NAME,
        PUSHED;

        static Sort parse(String value, boolean hasQuery) {
            if (value == null || value.isBlank()) {
                return hasQuery ? BEST : STARS;
            }
            try {
                Sort s = valueOf(value.trim().toUpperCase(Locale.ROOT));
                return s == BEST && !hasQuery ? STARS : s;
            } catch (IllegalArgumentException e) {
                throw ApiException.badRequest("sort must be one of best, stars, updated, created, name");
            }
        }
    }

    /**
     * What a list asks for.
     *
     * @param query    words to search for, or null
     * @param language a language to keep, or null
     * @param spaceIds the workspaces to keep (an owner filter), or null for all
     * @param catalog  whether only repositories marked for the catalog are kept
     */
    record Filter(String query, String language, List<String> spaceIds, boolean catalog) {}

    /** A page and the cursor of the next one (null on the last page). */
    record Page(List<Listed> items, String nextCursor) {}

    private final Sql sql;
    private final boolean trigrams;
    private final ExploreIndex index;
    private final BestMatchPages bestMatch;

    @Activate
    public ExploreStore(
            @Reference DataSource dataSource, @Reference RepositoryStore migrated, @Reference ExploreIndex index) {
        this.sql = new Sql(dataSource);
        this.index = index;
        this.bestMatch = new BestMatchPages(sql, index);
        this.trigrams = sql.count("SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'") > 0;
    }

    /** Whether names are searched with trigrams ({@code pg_trgm} is installed) rather than by prefix. */
    boolean trigrams() {
        return trigrams;
    }

    /** A page of public repositories in {@code sort} order, after {@code cursor} (an earlier page's next cursor). */
    Page list(Filter f, Sort sort, String cursor, int limit) {
        String query = f.query() == null ? "" : f.query().trim();
        if (sort == Sort.BEST && !query.isEmpty() && index.ready()) {
            Page ranked = bestMatch.page(f, query, cursor, limit);
            if (ranked != null) {
                return ranked;
            }
        }
        List<Object> args = new ArrayList<>();
        StringBuilder where = new StringBuilder(" WHERE r.visibility = 'public'");
        String rank = "0::real";
        // the query's terms are worked out once, in a row the repositories are joined with, not in every row's rank:
        // in the generic plan of a prepared statement they were computed again for each of thousands of matches
        // (OFFSET 0 keeps the planner from folding the row back into the expressions)
        String from = " FROM repositories r";
        List<Object> fromArgs = new ArrayList<>();
        String q = f.query() == null ? null : f.query().trim();
        if (q != null && !q.isEmpty()) {
            from = " FROM (SELECT " + NAME_WORDS_QUERY + " || plainto_tsquery('english', ?) AS q, lower(?) AS n"
                    + " OFFSET 0) p, repositories r";
            fromArgs.addAll(List.of(q, q, q));
            boolean oneWord = q.chars().noneMatch(Character::isWhitespace);
            if (!oneWord) {
                // a name is one word: a phrase is matched by its words, likeness of names is for one-word queries
                where.append(" AND r.search @@ p.q");
                rank = "ts_rank(r.search, p.q)::real";
            } else if (trigrams) {
                where.append(" AND (r.search @@ p.q OR lower(r.name) % p.n)");
                rank = "(ts_rank(r.search, p.q) + similarity(lower(r.name), p.n))::real";
            } else {
                where.append(" AND (r.search @@ p.q OR lower(r.name) LIKE lower(?) || '%' ESCAPE '\\')");
                args.add(likePrefix(q));
                rank = "(ts_rank(r.search, p.q) + CASE WHEN lower(r.name) = p.n THEN 1 ELSE 0 END)::real";
            }
        }
        if (f.language() != null) {
            where.append(" AND lower(r.language) = lower(?)");
            args.add(f.language());
        }
        if (f.spaceIds() != null) {
            where.append(" AND r.space_id = ANY (?)");
            args.add(f.spaceIds().toArray(String[]::new));
        }
        if (f.catalog()) {
            where.append(" AND r.in_catalog");
        }
        String key = switch (sort) {
            case BEST -> "rank";
            case STARS -> "r.star_count";
            case UPDATED -> "r.updated_at";
            case CREATED -> "r.created_at";
            case PUSHED -> "r.pushed_at";
            case NAME -> "lower(r.name)";
        };
        if (sort == Sort.PUSHED) {
            where.append(" AND r.pushed_at IS NOT NULL");
        }
        boolean ascending = sort == Sort.NAME;
        String select = "SELECT " + COLUMNS + ", " + rank + " AS rank" + from + where;
        List<Object> all = new ArrayList<>(fromArgs);
        all.addAll(args);
        StringBuilder statement = new StringBuilder();
        if (cursor != null && !cursor.isEmpty()) {
            ExploreCursor c = ExploreCursor.parse(cursor, sort);
            // the sort key of the best order is computed: it is compared in an outer query, as every other key is
            statement
                    .append("SELECT * FROM (")
                    .append(select)
                    .append(") r WHERE (")
                    .append(sort == Sort.BEST ? "rank" : key)
                    .append(", r.id) ")
                    .append(ascending ? ">" : "<")
                    .append(" (?, ?)");
            all.add(c.key());
            all.add(c.id());
            statement
                    .append(" ORDER BY ")
                    .append(sort == Sort.BEST ? "rank" : key)
                    .append(ascending ? "" : " DESC")
                    .append(", r.id")
                    .append(ascending ? "" : " DESC")
                    .append(" LIMIT ?");
        } else {
            statement
                    .append(select)
                    .append(" ORDER BY ")
                    .append(key)
                    .append(ascending ? "" : " DESC")
                    .append(", r.id")
                    .append(ascending ? "" : " DESC")
                    .append(" LIMIT ?");
        }
        all.add(limit + 1);
        List<Listed> rows = sql.list(statement.toString(), ExploreStore::row, all.toArray());
        String next = null;
        if (rows.size() > limit) {
            rows = new ArrayList<>(rows.subList(0, limit));
            next = ExploreCursor.of(sort, rows.get(rows.size() - 1)).encode();
        }
        return new Page(rows, next);
    }

    /**
     * A query's words as a name's are stored: split at {@code .}, {@code _} and {@code -} before the {@code simple}
     * configuration reads them, so {@code fast-parser} is {@code 'fast' & 'parser'}, as a name {@code fast-parser-1}
     * is stored (the parser would otherwise add the whole {@code 'fast-parser'}, which no name holds).
     */
    static final String NAME_WORDS_QUERY = "plainto_tsquery('simple', regexp_replace(?, '[._-]+', ' ', 'g'))";

    static Listed ranked(Listed l, double rank) {
        return new Listed(l.repo(), l.topics(), l.language(), l.stars(), l.forks(), l.pushedAt(), l.inCatalog(), rank);
    }

    /** How long a computed trending ranking is reused, unless a star or fork on this instance changes it first. */
    static final long TRENDING_KEPT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(30);

    /** How many ranked repositories one computation keeps (pages past them are computed on request). */
    static final int TRENDING_KEPT = 500;

    private record Ranking(List<String> ids, List<Double> scores, long at) {}

    private volatile Ranking ranking;
    private final java.util.concurrent.atomic.AtomicBoolean reranking = new java.util.concurrent.atomic.AtomicBoolean();

    /** Forgets the kept trending ranking (a star, an unstar or a fork on this instance). */
    void starsChanged() {
        Ranking r = ranking;
        if (r != null) {
            // expired, not dropped: the next request ranks again while any others page through this one
            ranking = new Ranking(r.ids(), r.scores(), System.nanoTime() - TRENDING_KEPT_NANOS - 1);
        }
    }

    /**
     * Public repositories ranked by recent stars and forks: the sum, over each star and fork of the last
     * {@value #TRENDING_WINDOW_DAYS} days, of {@code exp(-age_in_days / 7)}; ties by star count, then id. The ranking
     * (ids and scores only) is kept a short while; the rows are read at every request, public ones only, so a
     * repository that went private or away leaves the list at once.
     */
    List<Listed> trending(int limit, int offset) {
        Ranking r = ranking;
        long now = System.nanoTime();
        // one request ranks again when the ranking is old; the others meanwhile page through the old one (sixteen at
        // once each running the 27 ms statement on two cores was trending's p99 of 150-290 ms)
        if ((r == null || now - r.at() > TRENDING_KEPT_NANOS) && (r == null || reranking.compareAndSet(false, true))) {
            try {
                r = rank(TRENDING_KEPT, 0, now);
                ranking = r;
            } finally {
                reranking.set(false);
            }
        }
        if (offset + limit > r.ids().size() && r.ids().size() == TRENDING_KEPT) {
            r = rank(limit, offset, now); // past the kept part: this page on its own
            offset = 0;
        }
        int from = Math.min(offset, r.ids().size());
        int to = Math.min(offset + limit, r.ids().size());
        List<String> ids = r.ids().subList(from, to);
        if (ids.isEmpty()) {
            return List.of();
        }
        java.util.Map<String, Listed> rows = new java.util.HashMap<>();
        for (Listed l : sql.list(
                "SELECT " + COLUMNS
                        + ", 0::real AS rank FROM repositories r WHERE r.id = ANY (?) AND r.visibility = 'public'",
                ExploreStore::row,
                (Object) ids.toArray(String[]::new))) {
            rows.put(l.repo().id(), l);
        }
        List<Listed> out = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            Listed l = rows.get(ids.get(i));
            if (l != null) {
                out.add(new Listed(
                        l.repo(),
                        l.topics(),
                        l.language(),
                        l.stars(),
                        l.forks(),
                        l.pushedAt(),
                        l.inCatalog(),
                        r.scores().get(from + i)));
            }
        }
        return out;
    }

    private Ranking rank(int limit, int offset, long now) {
        List<Object[]> rows = sql.list(
                "WITH recent AS ("
                        + " SELECT s.repo_id, exp(-extract(epoch FROM now() - s.created_at)::float8 / 86400 / ?) AS w"
                        + " FROM repository_stars s WHERE s.created_at > now() - make_interval(days => ?)"
                        + " UNION ALL"
                        + " SELECT f.forked_from, exp(-extract(epoch FROM now() - f.created_at)::float8 / 86400 / ?)"
                        + " FROM repositories f WHERE f.forked_from IS NOT NULL"
                        + " AND f.created_at > now() - make_interval(days => ?)),"
                        + " scored AS (SELECT repo_id, sum(w) AS score FROM recent GROUP BY repo_id)"
                        + " SELECT r.id, s.score FROM scored s JOIN repositories r ON r.id = s.repo_id"
                        + " WHERE r.visibility = 'public' ORDER BY s.score DESC, r.star_count DESC, r.id DESC"
                        + " LIMIT ? OFFSET ?",
                rs -> new Object[] {rs.getString(1), rs.getDouble(2)},
                TRENDING_DECAY_DAYS,
                TRENDING_WINDOW_DAYS,
                TRENDING_DECAY_DAYS,
                TRENDING_WINDOW_DAYS,
                limit,
                offset);
        return new Ranking(
                rows.stream().map(o -> (String) o[0]).toList(),
                rows.stream().map(o -> (Double) o[1]).toList(),
                now);
    }

    /** A public repository by id. */
    Optional<Listed> publicById(String id) {
        return sql.one(
                "SELECT " + COLUMNS
                        + ", 0::real AS rank FROM repositories r WHERE r.id = ? AND r.visibility = 'public'",
                ExploreStore::row,
                id);
    }

    /** A public repository by workspace and name. */
    Optional<Listed> publicByName(String spaceId, String name) {
        return sql.one(
                "SELECT " + COLUMNS + ", 0::real AS rank FROM repositories r"
                        + " WHERE r.space_id = ? AND r.name = ? AND r.visibility = 'public'",
                ExploreStore::row,
                spaceId,
                name);
    }

    /** How many names with a typed prefix are read (in name order) to pick the most starred from. */
    static final int PREFIX_CANDIDATES = 50;

    /**
     * Up to {@code limit} public repositories whose name starts with {@code prefix} (most stars first among the first
     * {@value #PREFIX_CANDIDATES} names with it), then ones
     * whose name is like it by trigrams; {@code catalog} keeps only those marked for the catalog.
     */
    List<Suggestion> suggest(String prefix, int limit, boolean catalog) {
        String p = prefix.trim().toLowerCase(Locale.ROOT);
        // from the index alone: it is current to the change log's newest entry, which it reads first, so a repository
        // that turned private is not among them
        List<ExploreIndexSnapshot.Hit> hits = index.suggest(p, catalog, limit, p.length() >= 3);
        if (hits != null) {
            return hits.stream()
                    .map(h -> new Suggestion(h.id(), h.spaceId(), h.displayName(), h.description(), h.stars()))
                    .toList();
        }
        return suggestInSql(p, limit, catalog).stream()
                .map(l -> new Suggestion(
                        l.repo().id(),
                        l.repo().spaceId(),
                        l.repo().name(),
                        l.repo().description(),
                        l.stars()))
                .toList();
    }

    /** A suggested repository: what a suggestion shows of it. */
    record Suggestion(String id, String spaceId, String name, String description, int stars) {}

    /** {@link #suggest} while the index is not built. */
    private List<Listed> suggestInSql(String p, int limit, boolean catalog) {
        String only = catalog ? " AND r.in_catalog" : "";
        // the first names with the prefix, in name order from the prefix index, then the most starred of them first
        List<Listed> out = new ArrayList<>(sql.list(
                "SELECT " + COLUMNS + ", 1::real AS rank FROM repositories r WHERE r.visibility = 'public'" + only
                        + " AND lower(r.name) LIKE ? ESCAPE '\\' ORDER BY lower(r.name) USING ~<~ LIMIT ?",
                ExploreStore::row,
                likePrefix(p) + "%",
                PREFIX_CANDIDATES));
        out.sort(java.util.Comparator.comparingInt(Listed::stars)
                .reversed()
                .thenComparing(l -> l.repo().name()));
        if (out.size() > limit) {
            out = new ArrayList<>(out.subList(0, limit));
        }
        if (out.size() < limit && trigrams && p.length() >= 3) {
            List<String> seen = out.stream().map(l -> l.repo().id()).toList();
            for (Listed l : sql.list(
                    "SELECT " + COLUMNS + ", similarity(lower(r.name), ?)::real AS rank FROM repositories r"
                            + " WHERE r.visibility = 'public'" + only + " AND lower(r.name) % ?"
                            + " ORDER BY lower(r.name) <-> ? LIMIT ?",
                    ExploreStore::row,
                    p,
                    p,
                    p,
                    limit)) {
                if (out.size() < limit && !seen.contains(l.repo().id())) {
                    out.add(l);
                }
            }
        }
        return out;
    }

    /** The public repositories a Principal starred, newest star first, with a keyset cursor on (star time, id). */
    Page starredBy(String principalId, String cursor, int limit) {
        List<Object> args = new ArrayList<>(List.of(principalId));
        String after = "";
        if (cursor != null && !cursor.isEmpty()) {
            ExploreCursor c = ExploreCursor.parse(cursor, Sort.CREATED);
            after = " AND (s.created_at, r.id) < (?, ?)";
            args.add(c.key());
            args.add(c.id());
        }
        args.add(limit + 1);
        List<Object[]> rows = sql.list(
                "SELECT " + COLUMNS + ", 0::real AS rank, s.created_at AS starred_at FROM repository_stars s"
                        + " JOIN repositories r ON r.id = s.repo_id WHERE s.principal_id = ? AND r.visibility = 'public'"
                        + after + " ORDER BY s.created_at DESC, r.id DESC LIMIT ?",
                rs -> new Object[] {row(rs), rs.getTimestamp("starred_at").toInstant()},
                args.toArray());
        List<Listed> items = new ArrayList<>();
        String next = null;
        for (int i = 0; i < Math.min(limit, rows.size()); i++) {
            items.add((Listed) rows.get(i)[0]);
        }
        if (rows.size() > limit) {
            Object[] last = rows.get(limit - 1);
            next = new ExploreCursor(
                            last[1].toString(), ((Listed) last[0]).repo().id(), null)
                    .encode();
        }
        return new Page(items, next);
    }

    /** Sets a repository's topics (lower case, unique, in the order given). */
    void setTopics(String repoId, List<String> topics) {
        sql.update(
                "UPDATE repositories SET topics = ?, updated_at = now() WHERE id = ?",
                topics.toArray(String[]::new),
                repoId);
    }

    void setInCatalog(String repoId, boolean inCatalog) {
        sql.update("UPDATE repositories SET in_catalog = ?, updated_at = now() WHERE id = ?", inCatalog, repoId);
    }

    /** The topics and language of any repository (for its owner's view). */
    Optional<Listed> anyById(String id) {
        return sql.one(
                "SELECT " + COLUMNS + ", 0::real AS rank FROM repositories r WHERE r.id = ?", ExploreStore::row, id);
    }

    private static String likePrefix(String q) {
        return q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
    }

    /**
     * A {@code timestamptz} column as an instant, read as an offset date-time: the driver's {@code getTimestamp} goes
     * through a calendar for each value, a tenth of a page's mapping in a profile of the search.
     */
    private static Instant instant(ResultSet rs, String column) throws SQLException {
        java.time.OffsetDateTime t = rs.getObject(column, java.time.OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    static Listed row(ResultSet rs) throws SQLException {
        Repository repo = new Repository(
                rs.getString("id"),
                rs.getString("space_id"),
                rs.getString("name"),
                rs.getString("description"),
                rs.getString("visibility"),
                rs.getString("default_branch"),
                rs.getBoolean("is_default"),
                rs.getString("forked_from"),
                rs.getBoolean("allow_force_push"),
                instant(rs, "created_at"),
                instant(rs, "updated_at"));
        Array topics = rs.getArray("topics");
        Instant pushed = instant(rs, "pushed_at");
        return new Listed(
                repo,
                topics == null ? List.of() : List.of((String[]) topics.getArray()),
                rs.getString("language"),
                rs.getInt("star_count"),
                rs.getInt("fork_count"),
                pushed,
                rs.getBoolean("in_catalog"),
                rs.getFloat("rank"));
    }
}
