package dev.atrium.repos.internal;

import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.internal.ExploreIndexSnapshot.Document;
import dev.atrium.repos.internal.ExploreIndexSnapshot.Hit;
import dev.atrium.repos.internal.ExploreIndexSnapshot.Query;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The public repositories as explore ranks them, in memory: PostgreSQL stays the truth and does the text analysis
 * (the stored {@code tsvector}, {@code plainto_tsquery}); this index only ranks, so a search costs a short statement
 * for the query's lexemes (none for a query seen lately) and one for the rows of its page by id, whatever number of
 * repositories match. Ranking thousands of matches in PostgreSQL (each row read from the heap, {@code ts_rank} and
 * {@code similarity} computed for each) was 6-26 ms of its CPU per search (docs/decisions/explore.md).
 *
 * <p>It is built from PostgreSQL in the background (nothing waits for it: until it is, explore ranks in SQL as
 * before). Changes reach it through {@code repository_search_changes}, which a trigger fills in the transaction that
 * changes a repository: every request reads the log's newest number (a search with its page's rows, a suggestion
 * first) and what the index has not seen is applied, so a change on any instance counts from the next request. What
 * changed since the last build lies over it as an overlay, and a rebuild folds the overlay in. Rows written with
 * triggers off (a restore) are seen by PostgreSQL's table statistics and cause a rebuild within seconds. A search's
 * rows are always read from {@code repositories} with the public filter; a suggestion is served from the index, which
 * is then current to the newest change (a change of visibility is always logged).
 */
@Component(service = ExploreIndex.class)
public class ExploreIndex {

    private static final Logger LOG = LoggerFactory.getLogger(ExploreIndex.class);

    /**
     * Changes read at once beyond which the index is built again rather than overlaid (SQL answers meanwhile): a bulk
     * change.
     */
    static final int OVERLAY_REBUILD = 1_000;

    /**
     * Repositories laid over the snapshot from which a rebuild is asked for at once: every search ranks the overlay
     * one by one, which costs about as much as the snapshot's work at a few hundred.
     */
    static final int OVERLAY_FOLD = 200;

    /** How often the background looks for changes, unlogged rows and time to fold the overlay in. */
    static final Duration TICK = Duration.ofSeconds(5);

    /**
     * A smaller overlay is folded in when the snapshot is this old: a rebuild reads every public repository and leaves
     * the old snapshot to the collector, so it is not done every minute for a star or two.
     */
    static final long FOLD_AFTER_NANOS = TimeUnit.MINUTES.toNanos(10);

    /** Rows that came with triggers off (table statistics moved more than the change log) are read in this soon. */
    static final long UNLOGGED_REBUILD_NANOS = TimeUnit.SECONDS.toNanos(20);

    /** A gap in the change log's numbers (a transaction not yet committed) is waited for this long, then forgotten. */
    static final long GAP_KEPT_NANOS = TimeUnit.SECONDS.toNanos(30);

    private static final String DOCUMENT_COLUMNS =
            "id, space_id, lower(name) AS name, search::text AS search, lower(language) AS language, in_catalog,"
                    + " star_count, name AS display_name, description";

    /**
     * One moment of the index: the snapshot, what changed since (an id to its new document, or to {@link #GONE}), the
     * newest change applied, the change numbers not seen yet below it, and what the next rebuild is judged by.
     */
    private record State(
            ExploreIndexSnapshot snapshot,
            Map<String, Document> overlay,
            long high,
            Map<Long, Long> gaps,
            long statsAtBuild,
            long loggedSinceBuild,
            long builtAt) {}

    /** What the overlay maps a repository to when it is no longer public (or no longer there): the one without an id. */
    private static final Document GONE = new Document("", "", "", null, false, 0, Map.of(), new long[0], "", "");

    private final Sql sql;
    private final ScheduledExecutorService worker = NamedThreads.scheduler("atrium-explore-index");
    private final Object applying = new Object();
    private volatile State state;
    /** More changes came than an overlay should hold: SQL answers until the rebuild that was asked for is done. */
    private volatile boolean behind;

    private final AtomicBoolean rebuildAsked = new AtomicBoolean();

    private volatile long lastGapCheck;
    /** When the change log was last pruned (the background's own). */
    private long lastPrune = System.nanoTime();

    @Activate
    public ExploreIndex(@Reference DataSource dataSource, @Reference RepositoryStore migrated) {
        this.sql = new Sql(dataSource);
        NamedThreads.repeat(worker, this::tick, Duration.ZERO, TICK);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        worker.shutdownNow();
        worker.awaitTermination(10, TimeUnit.SECONDS);
    }

    /** Whether the index is built (until it is, explore ranks in SQL). */
    boolean ready() {
        return state != null;
    }

    /**
     * The best {@code max} public repositories for a search after {@code after}, or null when the index is not built.
     * {@code newestChange} is the change log's newest number as the caller read it, or -1 to rank with what the index
     * holds (a caller that reads the number with its rows after, and asks again when it is newer than {@link #seen}).
     */
    List<Hit> search(Query q, Hit after, int max, long newestChange) {
        State s = newestChange < 0 ? (behind ? null : state) : current(newestChange);
        if (s == null) {
            return null;
        }
        PriorityQueue<Hit> best = new PriorityQueue<>(Hit.BEST.reversed());
        for (Hit h : s.snapshot().search(q, after, max, s.overlay())) {
            ExploreIndexSnapshot.offer(best, h, after, max);
        }
        for (Document d : s.overlay().values()) {
            if (d.id().isEmpty() || !q.keeps(d)) {
                continue;
            }
            float rank = q.rank(d);
            if (!Float.isNaN(rank)) {
                ExploreIndexSnapshot.offer(best, hit(d, rank), after, max);
            }
        }
        return ExploreIndexSnapshot.drain(best);
    }

    /**
     * Suggestions for {@code prefix} (lower case): the first names that start with it (most stars first), then names
     * like it by trigrams when there are fewer than {@code limit}; null when the index is not built.
     */
    List<Hit> suggest(String prefix, boolean catalogOnly, int limit, boolean likeness) {
        State s = current(newestChange());
        if (s == null) {
            return null;
        }
        List<Hit> prefixed = new ArrayList<>(s.snapshot().prefixed(prefix, catalogOnly, s.overlay()));
        for (Document d : s.overlay().values()) {
            if (!d.id().isEmpty() && d.name().startsWith(prefix) && (!catalogOnly || d.catalog())) {
                prefixed.add(hit(d, 1f));
            }
        }
        prefixed.sort((a, b) ->
                a.name().equals(b.name()) ? a.id().compareTo(b.id()) : a.name().compareTo(b.name()));
        List<Hit> out =
                new ArrayList<>(prefixed.subList(0, Math.min(prefixed.size(), ExploreIndexSnapshot.PREFIX_CANDIDATES)));
        out.sort((a, b) -> a.stars() != b.stars()
                ? Integer.compare(b.stars(), a.stars())
                : a.name().compareTo(b.name()));
        if (out.size() > limit) {
            out = new ArrayList<>(out.subList(0, limit));
        }
        if (out.size() < limit && likeness) {
            long[] grams = ExploreText.trigrams(prefix);
            List<Hit> alike = new ArrayList<>(s.snapshot().alike(grams, catalogOnly, limit * 2, s.overlay()));
            for (Document d : s.overlay().values()) {
                if (d.id().isEmpty() || (catalogOnly && !d.catalog())) {
                    continue;
                }
                float sim = ExploreText.similarity(grams, d.trigrams());
                if (sim >= ExploreText.LIKENESS) {
                    alike.add(hit(d, sim));
                }
            }
            alike.sort(ExploreIndexSnapshot.ALIKE);
            Set<String> seen = new java.util.HashSet<>();
            out.forEach(h -> seen.add(h.id()));
            for (Hit h : alike) {
                if (out.size() >= limit) {
                    break;
                }
                if (seen.add(h.id())) {
                    out.add(h);
                }
            }
        }
        return out;
    }

    private static Hit hit(Document d, float rank) {
        return new Hit(d.id(), rank, d.stars(), d.name(), d.spaceId(), d.displayName(), d.description());
    }

    /** The newest change the index holds (Long.MAX_VALUE before it is built: nothing to catch up with then). */
    long seen() {
        State s = state;
        return s == null ? Long.MAX_VALUE : s.high();
    }

    /** The change log's newest number (0 when empty). */
    long newestChange() {
        return sql.count("SELECT coalesce(max(seq), 0) FROM repository_search_changes");
    }

    /** The state with every logged change up to {@code newestChange} applied, or null before the first build. */
    private State current(long newestChange) {
        State s = state;
        if (s == null || behind) {
            return null;
        }
        boolean gapsDue = !s.gaps().isEmpty() && System.nanoTime() - lastGapCheck > TimeUnit.MILLISECONDS.toNanos(50);
        if (newestChange <= s.high() && !gapsDue) {
            return s;
        }
        synchronized (applying) {
            s = state;
            if (newestChange > s.high() || (!s.gaps().isEmpty() && gapsDue)) {
                s = apply(s);
                if (s == null) {
                    behind = true;
                    askRebuild();
                    return null;
                }
                state = s;
            }
            return s;
        }
    }

    /**
     * Reads the changes {@code s} has not seen and lays the repositories they name over its snapshot; null when there
     * are more than {@value #OVERLAY_REBUILD} (a bulk change: the index is built again instead).
     */
    private State apply(State s) {
        lastGapCheck = System.nanoTime();
        long from = s.gaps().isEmpty()
                ? s.high()
                : Math.min(s.high(), Collections.min(s.gaps().keySet()) - 1);
        return sql.run(c -> {
            List<long[]> seqs = new ArrayList<>();
            Set<String> ids = new LinkedHashSet<>();
            long logged = 0;
            Map<Long, Long> gaps = new TreeMap<>(s.gaps());
            List<Object[]> changes = Sql.list(
                    c,
                    "SELECT seq, repo_id, op FROM repository_search_changes WHERE seq > ? ORDER BY seq LIMIT ?",
                    rs -> new Object[] {rs.getLong(1), rs.getString(2), rs.getString(3)},
                    from,
                    OVERLAY_REBUILD + 1);
            if (changes.size() > OVERLAY_REBUILD) {
                return null;
            }
            for (Object[] row : changes) {
                long seq = (Long) row[0];
                if (seq <= s.high() && gaps.remove(seq) == null) {
                    continue;
                }
                seqs.add(new long[] {seq});
                ids.add((String) row[1]);
                if (!"U".equals(row[2])) {
                    logged++;
                }
            }
            long high = s.high();
            long now = System.nanoTime();
            for (long[] seq : seqs) {
                for (long missing = Math.max(high + 1, seq[0] - 1000); missing < seq[0]; missing++) {
                    gaps.put(missing, now);
                }
                high = Math.max(high, seq[0]);
            }
            gaps.values().removeIf(seen -> now - seen > GAP_KEPT_NANOS);
            Map<String, Document> overlay = new HashMap<>(s.overlay());
            if (!ids.isEmpty()) {
                Map<String, Document> read = new HashMap<>();
                for (Document d : Sql.list(
                        c,
                        "SELECT " + DOCUMENT_COLUMNS
                                + " FROM repositories WHERE id = ANY (?) AND visibility = 'public'",
                        ExploreIndex::document,
                        (Object) ids.toArray(String[]::new))) {
                    read.put(d.id(), d);
                }
                for (String id : ids) {
                    overlay.put(id, read.getOrDefault(id, GONE));
                }
            }
            State next = new State(
                    s.snapshot(), overlay, high, gaps, s.statsAtBuild(), s.loggedSinceBuild() + logged, s.builtAt());
            if (overlay.size() >= OVERLAY_FOLD) {
                askRebuild();
            }
            return next;
        });
    }

    /** The background's round: builds at first, then rebuilds when the overlay is old or rows came unlogged. */
    void tick() {
        State s = state;
        if (s == null || behind) {
            rebuild();
            return;
        }
        s = current(newestChange());
        if (s == null) {
            return;
        }
        long unlogged = tableWrites() - s.statsAtBuild() - s.loggedSinceBuild();
        long age = System.nanoTime() - s.builtAt();
        if ((!s.overlay().isEmpty() && age > FOLD_AFTER_NANOS) || (unlogged > 0 && age > UNLOGGED_REBUILD_NANOS)) {
            rebuild();
        }
        if (System.nanoTime() - lastPrune > TimeUnit.MINUTES.toNanos(1)) {
            lastPrune = System.nanoTime();
            sql.update("DELETE FROM repository_search_changes WHERE at < now() - interval '1 hour'");
        }
    }

    /** Has the background rebuild the index soon, once however often it is asked meanwhile. */
    private void askRebuild() {
        if (rebuildAsked.compareAndSet(false, true)) {
            try {
                worker.execute(() -> {
                    rebuildAsked.set(false);
                    rebuild();
                });
            } catch (RejectedExecutionException stopping) {
                rebuildAsked.set(false);
            }
        }
    }

    /** Reads every public repository again and replaces the snapshot (and the overlay it folds in). */
    void rebuild() {
        long started = System.nanoTime();
        State built = sql.snapshot(c -> {
            long stats = tableWrites(c);
            long high = Sql.count(c, "SELECT coalesce(max(seq), 0) FROM repository_search_changes");
            // numbers of the last half minute below the newest that this snapshot does not see are changes not yet
            // committed (or rolled back): gaps to look for again; older ones were pruned or are long gone
            long floor = Sql.count(
                    c,
                    "SELECT coalesce(max(seq), 0) FROM repository_search_changes WHERE at < now() - interval '30 seconds'");
            Set<Long> seen = new java.util.HashSet<>(Sql.list(
                    c,
                    "SELECT seq FROM repository_search_changes WHERE seq > ?",
                    rs -> rs.getLong(1),
                    Math.max(floor, high - 1000)));
            Map<Long, Long> gaps = new TreeMap<>();
            long now = System.nanoTime();
            for (long seq = Math.max(floor, high - 1000) + 1; seq <= high; seq++) {
                if (!seen.contains(seq)) {
                    gaps.put(seq, now);
                }
            }
            List<Document> docs = Sql.list(
                    c,
                    "SELECT " + DOCUMENT_COLUMNS + " FROM repositories WHERE visibility = 'public'",
                    ExploreIndex::document);
            return new State(new ExploreIndexSnapshot(docs), Map.of(), high, gaps, stats, 0, System.nanoTime());
        });
        synchronized (applying) {
            state = built;
            behind = false;
        }
        LOG.debug(
                "explore index built: {} public repositories in {} ms",
                built.snapshot().size(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    }

    private long tableWrites() {
        return sql.run(ExploreIndex::tableWrites);
    }

    /**
     * Rows inserted into and deleted from {@code repositories} by PostgreSQL's statistics: every insert and delete is
     * logged as a change too, so more of them than changes logged means rows that came with triggers off.
     */
    private static long tableWrites(Connection c) throws SQLException {
        return Sql.count(
                c,
                "SELECT coalesce((SELECT n_tup_ins + n_tup_del FROM pg_stat_user_tables"
                        + " WHERE relid = 'repositories'::regclass), 0)");
    }

    static Document document(ResultSet rs) throws SQLException {
        String name = rs.getString("name");
        return new Document(
                rs.getString("id"),
                rs.getString("space_id"),
                name,
                rs.getString("language"),
                rs.getBoolean("in_catalog"),
                rs.getInt("star_count"),
                ExploreText.lexemes(rs.getString("search")),
                ExploreText.trigrams(name),
                rs.getString("display_name"),
                rs.getString("description"));
    }

    /**
     * A query as the index reads it, from the two texts of {@code plainto_tsquery} and the filters; null for one the
     * index does not rank: words that are all English stop words, two or more (the query is then an AND, which
     * ts_rank ranks by the distances between positions, which the index does not keep), left to SQL.
     */
    static Query query(
            String simple, String english, String oneWord, String language, List<String> spaceIds, boolean catalog) {
        List<String> s = ExploreText.queryLexemes(simple);
        List<String> e = ExploreText.queryLexemes(english);
        if (e.isEmpty() && new LinkedHashSet<>(s).size() >= 2) {
            return null;
        }
        List<String> distinct = new ArrayList<>(new LinkedHashSet<>(s));
        e.stream().filter(l -> !distinct.contains(l)).forEach(distinct::add);
        // in PostgreSQL's order of a query's operands (their bytes), so ts_rank's float sum adds up in the same order
        distinct.sort((a, b) -> java.util.Arrays.compareUnsigned(
                a.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                b.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        return new Query(
                s,
                e,
                distinct,
                oneWord == null ? null : ExploreText.trigrams(oneWord),
                language == null ? null : language.toLowerCase(Locale.ROOT),
                spaceIds == null ? null : Set.copyOf(spaceIds),
                catalog);
    }
}
