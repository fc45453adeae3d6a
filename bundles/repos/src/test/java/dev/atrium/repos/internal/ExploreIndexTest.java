package dev.atrium.repos.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.Sql;
import dev.atrium.kernel.api.TestPostgres;
import dev.atrium.repos.internal.ExploreIndexSnapshot.Hit;
import dev.atrium.repos.internal.ExploreIndexSnapshot.Query;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Explore's in-memory index against PostgreSQL itself: the repositories' own migrations, rows in {@code
 * repositories}, and for each query the order and the rank that {@code ts_rank} plus {@code pg_trgm}'s {@code
 * similarity} give in SQL (what explore ranked by before the index, and still does until it is built).
 */
class ExploreIndexTest {

    private static TestPostgres database;
    private static Sql sql;

    private static final String[] WORDS = {
        "parser", "lexer", "graph", "vector", "json", "yaml", "server", "client", "the", "and", "written", "cache"
    };
    private static final String[] ADJECTIVES = {"fast", "tiny", "lazy", "safe", "super", "parsers"};

    @BeforeAll
    static void database() throws Exception {
        database = TestPostgres.create("atrium_explore");
        database.migrations(
                        ExploreIndexTest.class,
                        "/db/migration/V1__repositories.sql",
                        "/db/migration/V2__repository_maintenance.sql",
                        "/db/migration/V3__repository_upstreams.sql",
                        "/db/migration/V4__repository_merges_only.sql",
                        "/db/migration/V5__repository_explore.sql",
                        "/db/migration/V6__repository_explore_trigram_index.sql",
                        "/db/migration/V7__repository_search_changes.sql")
                .apply(null);
        sql = new Sql(database.dataSource());
        Random r = new Random(7);
        for (int i = 1; i <= 400; i++) {
            String name = pick(r, ADJECTIVES) + (i % 3 == 0 ? "_" : "-") + pick(r, WORDS) + "-" + i
                    + (i % 5 == 0 ? ".js" : "");
            String description = "A " + pick(r, WORDS) + " " + pick(r, WORDS) + " for " + pick(r, WORDS) + " and "
                    + pick(r, WORDS) + (i % 7 == 0 ? " parser parser parsers" : "");
            String[] topics = i % 4 == 0 ? new String[] {pick(r, WORDS), "topic-" + (i % 9)} : new String[0];
            insert("r" + i, "s" + (i % 17), name, description, i % 6 == 0 ? "private" : "public", topics, i % 11);
        }
    }

    @AfterAll
    static void drop() throws Exception {
        database.close();
    }

    private static String pick(Random r, String[] from) {
        return from[r.nextInt(from.length)];
    }

    private static void insert(
            String id, String space, String name, String description, String visibility, String[] topics, int stars) {
        sql.update(
                "INSERT INTO repositories (id, space_id, name, description, visibility, topics, star_count, language)"
                        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                id,
                space,
                name,
                description,
                visibility,
                topics,
                stars,
                stars % 2 == 0 ? "Java" : "Go");
    }

    private static ExploreIndex built() {
        ExploreIndex index = new ExploreIndex(database.dataSource(), null);
        index.rebuild();
        return index;
    }

    /** The page of {@code q} as SQL ranks it: ts_rank, plus the name's likeness for one word; ties by id. */
    private static List<String> sqlRanking(String q, int limit) {
        boolean oneWord = q.chars().noneMatch(Character::isWhitespace);
        String where = oneWord ? "(r.search @@ p.q OR lower(r.name) % p.n)" : "r.search @@ p.q";
        String rank = oneWord
                ? "(ts_rank(r.search, p.q) + similarity(lower(r.name), p.n))::real"
                : "ts_rank(r.search, p.q)::real";
        return sql.list(
                "SELECT r.id, " + rank + " AS rank FROM (SELECT " + ExploreStore.NAME_WORDS_QUERY
                        + " || plainto_tsquery('english', ?) AS q, lower(?) AS n OFFSET 0) p, repositories r"
                        + " WHERE r.visibility = 'public' AND " + where
                        + " ORDER BY rank DESC, r.id COLLATE \"C\" DESC LIMIT ?",
                rs -> rs.getString(1) + "@" + rs.getFloat(2),
                q,
                q,
                q,
                limit);
    }

    private static List<String> indexRanking(ExploreIndex index, String q, int limit) {
        return hits(index, q, limit, null).stream()
                .map(h -> h.id() + "@" + h.rank())
                .toList();
    }

    private static List<Hit> hits(ExploreIndex index, String q, int limit, Hit after) {
        Object[] parsed = sql.one(
                        "SELECT " + ExploreStore.NAME_WORDS_QUERY + "::text, plainto_tsquery('english', ?)::text",
                        rs -> new Object[] {rs.getString(1), rs.getString(2)},
                        q,
                        q)
                .orElseThrow();
        boolean oneWord = q.chars().noneMatch(Character::isWhitespace);
        Query query = ExploreIndex.query(
                (String) parsed[0], (String) parsed[1], oneWord ? q.toLowerCase() : null, null, null, false);
        return query == null ? null : index.search(query, after, limit, index.newestChange());
    }

    @Test
    void theIndexRanksEveryQueryAsPostgresqlDoesRankForRank() {
        ExploreIndex index = built();
        try {
            for (String q : List.of(
                    "parser",
                    "parsers",
                    "fast-parser",
                    "fsat-parser",
                    "graph parser",
                    "lazy_json",
                    "tiny.js",
                    "written",
                    "the",
                    "topic-3",
                    "parsr",
                    "zzzz",
                    "A fast graph for json")) {
                assertEquals(sqlRanking(q, 60), indexRanking(index, q, 60), q);
            }
            // only stop words, two or more: an AND for ts_rank, ranked by positions the index does not keep
            assertNull(hits(index, "the and", 10, null), "left to SQL");
        } finally {
            stop(index);
        }
    }

    @Test
    void pagesAfterACursorFollowOnWithoutARepeatOrAGap() {
        ExploreIndex index = built();
        try {
            List<String> whole =
                    hits(index, "parser", 40, null).stream().map(Hit::id).toList();
            List<String> paged = new ArrayList<>();
            Hit after = null;
            for (int page = 0; page < 8; page++) {
                List<Hit> hits = hits(index, "parser", 5, after);
                hits.forEach(h -> paged.add(h.id()));
                after = hits.get(hits.size() - 1);
            }
            assertEquals(whole, paged);
        } finally {
            stop(index);
        }
    }

    @Test
    void suggestionsAreTheSqlPrefixThenTheLikestNames() {
        ExploreIndex index = built();
        try {
            for (String p : List.of("fa", "fast-g", "lazy_", "tinny-json", "sfae-graph", "super-cache-1")) {
                List<String> prefixed = sql.list(
                        "SELECT id FROM (SELECT id, lower(name) AS n, star_count FROM repositories WHERE visibility ="
                                + " 'public' AND lower(name) LIKE ? ORDER BY lower(name) COLLATE \"C\", id COLLATE \"C\""
                                + " LIMIT 50) x ORDER BY star_count DESC, n COLLATE \"C\" LIMIT 10",
                        rs -> rs.getString(1),
                        p.replace("_", "\\_") + "%");
                List<String> expected = new ArrayList<>(prefixed);
                if (expected.size() < 10 && p.length() >= 3) {
                    for (String id : sql.list(
                            "SELECT id FROM repositories WHERE visibility = 'public' AND lower(name) % ?"
                                    + " ORDER BY similarity(lower(name), ?) DESC, lower(name) COLLATE \"C\","
                                    + " id COLLATE \"C\" LIMIT 20",
                            rs -> rs.getString(1), p, p)) {
                        if (expected.size() < 10 && !expected.contains(id)) {
                            expected.add(id);
                        }
                    }
                }
                List<String> got = index.suggest(p, false, 10, p.length() >= 3).stream()
                        .map(Hit::id)
                        .toList();
                assertEquals(expected, got, p);
            }
        } finally {
            stop(index);
        }
    }

    @Test
    void aChangeCountsFromTheNextQueryAndABulkOfThemRebuildsTheIndex() throws Exception {
        ExploreIndex index = built();
        try {
            insert("new1", "s1", "quokka-graph", "a marsupial", "public", new String[0], 0);
            assertEquals(List.of("new1"), ids(index, "quokka"));
            assertEquals("new1", index.suggest("quok", false, 10, true).get(0).id());
            sql.update("UPDATE repositories SET name = 'wombat-graph' WHERE id = 'new1'");
            assertEquals(List.of(), ids(index, "quokka"));
            assertEquals(List.of("new1"), ids(index, "wombat"));
            sql.update("UPDATE repositories SET visibility = 'private' WHERE id = 'new1'");
            assertEquals(List.of(), ids(index, "wombat"));
            assertTrue(index.suggest("wombat", false, 10, true).isEmpty(), "a private one is never suggested");
            sql.update("UPDATE repositories SET visibility = 'public', star_count = 42 WHERE id = 'new1'");
            assertEquals(42, index.suggest("wombat", false, 10, true).get(0).stars());
            sql.update("DELETE FROM repositories WHERE id = 'new1'");
            assertEquals(List.of(), ids(index, "wombat"));

            // more changes than an overlay holds: SQL answers (null here) until the rebuild, which then has them all
            for (int i = 0; i < ExploreIndex.OVERLAY_REBUILD + 5; i++) {
                insert("bulk" + i, "s2", "numbat-" + i, "", "public", new String[0], 0);
            }
            assertNull(hits(index, "numbat", 10, null), "behind: the caller ranks in SQL");
            long deadline = System.nanoTime() + 30_000_000_000L;
            List<Hit> caught = null;
            while (caught == null && System.nanoTime() < deadline) {
                Thread.sleep(100);
                caught = hits(index, "numbat", 2000, null);
            }
            assertNotNull(caught, "the rebuild caught up");
            assertEquals(ExploreIndex.OVERLAY_REBUILD + 5, caught.size());
            assertFalse(ids(index, "numbat").isEmpty());
        } finally {
            sql.update("DELETE FROM repositories WHERE id LIKE 'bulk%'");
            stop(index);
        }
    }

    private static List<String> ids(ExploreIndex index, String q) {
        return hits(index, q, 10, null).stream().map(Hit::id).toList();
    }

    private static void stop(ExploreIndex index) {
        try {
            index.deactivate();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
