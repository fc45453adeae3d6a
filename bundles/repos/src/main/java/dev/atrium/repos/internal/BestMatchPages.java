package dev.atrium.repos.internal;

import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.internal.ExploreStore.Filter;
import dev.atrium.repos.internal.ExploreStore.Listed;
import dev.atrium.repos.internal.ExploreStore.Page;
import dev.atrium.repos.internal.ExploreStore.Sort;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Pages of a search in best-match order from {@link ExploreIndex}: PostgreSQL turns the query into lexemes (once for a
 * query seen lately), the index ranks every match, and the page's rows are read by id with the filters again, in one
 * statement with the change log's newest entry, so a change the index has not seen yet is applied and the page ranked
 * again.
 */
final class BestMatchPages {

    private final Sql sql;
    private final ExploreIndex index;

    BestMatchPages(Sql sql, ExploreIndex index) {
        this.sql = sql;
        this.index = index;
    }

    /** Queries whose lexemes are kept, at most (the map is emptied when full). */
    private static final int PARSED_QUERIES_KEPT = 4096;

    private final ConcurrentHashMap<String, String[]> parsedQueries = new ConcurrentHashMap<>();

    /**
     * Rows read beyond a page's own from the index's ranking, for those turned private since the index saw them: none
     * (such a page reads on after its last hit; the rows' mapping is a fifth of a search's time in a profile).
     */
    private static final int SPARE_HITS = 0;

    /**
     * A page in best-match order from {@link ExploreIndex}: PostgreSQL turns the query into lexemes, the index ranks
     * every match, and the page's rows are read by id with the filters again. Null when the index is not built.
     */
    Page page(Filter f, String q, String cursor, int limit) {
        // the lexemes of a query are PostgreSQL's (plainto_tsquery); a query seen lately is not sent to it again
        String[] lexemes = parsedQueries.get(q);
        long newest = -1;
        if (lexemes == null) {
            Object[] parsed = sql.one(
                            "SELECT " + ExploreStore.NAME_WORDS_QUERY + "::text, plainto_tsquery('english', ?)::text,"
                                    + " (SELECT coalesce(max(seq), 0) FROM repository_search_changes)",
                            rs -> new Object[] {rs.getString(1), rs.getString(2), rs.getLong(3)},
                            q,
                            q)
                    .orElseThrow();
            lexemes = new String[] {(String) parsed[0], (String) parsed[1]};
            newest = (Long) parsed[2];
            if (parsedQueries.size() >= PARSED_QUERIES_KEPT) {
                parsedQueries.clear();
            }
            parsedQueries.put(q, lexemes);
        }
        boolean oneWord = q.chars().noneMatch(Character::isWhitespace);
        ExploreIndexSnapshot.Query query = ExploreIndex.query(
                lexemes[0],
                lexemes[1],
                oneWord ? q.toLowerCase(Locale.ROOT) : null,
                f.language(),
                f.spaceIds(),
                f.catalog());
        if (query == null) {
            return null;
        }
        ExploreIndexSnapshot.Hit first = null;
        if (cursor != null && !cursor.isEmpty()) {
            ExploreCursor c = ExploreCursor.parse(cursor, Sort.BEST);
            first = ExploreIndexSnapshot.Hit.after((Float) c.key(), c.id());
        }
        while (true) {
            List<Listed> out = new ArrayList<>();
            ExploreIndexSnapshot.Hit after = first;
            while (out.size() <= limit) {
                int wanted = limit + 1 - out.size() + SPARE_HITS;
                // read before the ranking: a change applied meanwhile by another request then ranks this page again
                long seen = index.seen();
                List<ExploreIndexSnapshot.Hit> hits = index.search(query, after, wanted, newest);
                if (hits == null) {
                    return null;
                }
                Rows rows = rowsById(hits, f);
                if (newest < 0 && rows.newestChange() > seen) {
                    // a change the index has not seen was logged: rank again with it applied
                    newest = rows.newestChange();
                    out = null;
                    break;
                }
                for (ExploreIndexSnapshot.Hit h : hits) {
                    Listed l = rows.byId().get(h.id());
                    if (l != null && out.size() <= limit) {
                        out.add(ExploreStore.ranked(l, h.rank()));
                    }
                }
                if (hits.size() < wanted) {
                    break;
                }
                after = hits.get(hits.size() - 1);
            }
            if (out == null) {
                continue;
            }
            String next = null;
            if (out.size() > limit) {
                out = new ArrayList<>(out.subList(0, limit));
                next = ExploreCursor.of(Sort.BEST, out.get(limit - 1)).encode();
            }
            return new Page(out, next);
        }
    }

    /** Rows read by id, and the change log's newest number read with them. */
    private record Rows(Map<String, Listed> byId, long newestChange) {}

    /**
     * The public rows of {@code hits} that {@code f}'s filters keep (no query), by id, with the change log's newest
     * number in the same statement (a row even when none is kept).
     */
    private Rows rowsById(List<ExploreIndexSnapshot.Hit> hits, Filter f) {
        List<Object> args = new ArrayList<>();
        args.add(hits.stream().map(ExploreIndexSnapshot.Hit::id).toArray(String[]::new));
        StringBuilder on = new StringBuilder(" ON r.id = ANY (?) AND r.visibility = 'public'");
        if (f.language() != null) {
            on.append(" AND lower(r.language) = lower(?)");
            args.add(f.language());
        }
        if (f.spaceIds() != null) {
            on.append(" AND r.space_id = ANY (?)");
            args.add(f.spaceIds().toArray(String[]::new));
        }
        if (f.catalog()) {
            on.append(" AND r.in_catalog");
        }
        Map<String, Listed> out = new HashMap<>();
        long[] newest = {0};
        sql.list(
                "SELECT " + ExploreStore.COLUMNS
                        + ", 0::real AS rank, n.newest FROM (SELECT coalesce(max(seq), 0) AS newest"
                        + " FROM repository_search_changes) n LEFT JOIN repositories r" + on,
                rs -> {
                    newest[0] = rs.getLong("newest");
                    if (rs.getString("id") != null) {
                        Listed l = ExploreStore.row(rs);
                        out.put(l.repo().id(), l);
                    }
                    return null;
                },
                args.toArray());
        return new Rows(out, newest[0]);
    }
}
