package dev.atrium.vector;

import java.util.concurrent.atomic.AtomicLong;

/**
 * When a query scores every int8 vector of a segment in file order (a flat scan) instead of walking its HNSW graph —
 * the rule {@link ScanOrWalkKnnQuery} applies per segment. It is Lucene's own fallback from the graph to an exact
 * search (a walk given a visit limit; past it, the segment is searched exhaustively), with the limit set where the
 * scan becomes the cheaper of the two, plus a memory of where walks reached it:
 * <ul>
 * <li><b>Costs.</b> A walk's cost is its visits: each is a random read of an int8 vector and its score, plus the
 * graph's neighbour list and candidate heaps — 266 ns a visit on the 100,000 × 384-d bench index (15.4 ms for the
 * 57,900 visits of ef 1,500). Scoring the segment's vectors in file order costs 41 ns a vector there (the reads are
 * sequential: prefetched, no graph). One visit therefore costs as much as {@link #VISIT_COST_IN_SCANNED_VECTORS}
 * scanned vectors, and a walk that visits more than {@code accepted / 6} nodes costs more than scanning the
 * {@code accepted} vectors the query may return (the segment's live ones, or those the filter accepts).</li>
 * <li><b>Walk with that limit</b> ({@link #visitLimit}); a walk that reaches it stops, and the segment is scanned.
 * Worst case: the limit's worth of visits wasted, i.e. the query costs twice the scan.</li>
 * <li><b>Memory</b> ({@link SegmentHistory}): a walk's visits grow with ef, so once a walk at ef {@code e} reached the
 * limit on a segment, queries at ef ≥ {@code e} (with a limit no larger) scan it without walking first. Segments do
 * not change (deletions only hide vectors), so what one walk showed holds for the segment's life.</li>
 * </ul>
 * Small ef on a large segment (a walk visiting a few thousand of 100,000 nodes), and real embeddings, which are
 * clustered and reach a high recall at small ef, keep the graph. A small segment is scanned once a walk would visit
 * more than a sixth of it, which costs microseconds either way. Only with the SIMD scorer: Lucene's scalar int8
 * distance is compute-bound (~480 ns a vector, random order, against ~260 ns SIMD), so reading in order saves a
 * small share of it and the break-even lies near the whole segment; without the Vector API the graph is always
 * walked.
 */
public final class FlatScanRule {

    /** One graph visit costs as much as scoring this many int8 vectors in file order (266 ns against 41 ns, 384-d). */
    public static final int VISIT_COST_IN_SCANNED_VECTORS = 6;

    private FlatScanRule() {}

    /**
     * How many nodes a walk may visit before scanning the segment's {@code accepted} vectors is cheaper; the walk is
     * given this as its visit limit. {@link Integer#MAX_VALUE} (never scan) without the SIMD scorer.
     */
    public static int visitLimit(int accepted, boolean simd) {
        if (!simd) {
            return Integer.MAX_VALUE;
        }
        return Math.max(1, accepted / VISIT_COST_IN_SCANNED_VECTORS);
    }

    /**
     * What the walks on one segment have shown: the smallest ef whose walk reached its visit limit, and that limit.
     * A query at that ef or more, with a limit no larger (fewer accepted vectors: deletions, a filter), would reach it
     * too, so it scans at once. A filtered query's smaller limit does not replace an unfiltered one's at a larger ef:
     * unfiltered queries are the common case, and a filtered one then at most walks to its (small) limit first.
     */
    public static final class SegmentHistory {
        private int ef = Integer.MAX_VALUE;
        private int limit;

        public synchronized boolean scanWithoutWalking(int ef, int limit) {
            return ef >= this.ef && limit <= this.limit;
        }

        public synchronized void walkReachedLimit(int ef, int limit) {
            if (limit > this.limit || (limit == this.limit && ef < this.ef)) {
                this.ef = ef;
                this.limit = limit;
            }
        }
    }

    /** How queries searched the int8 segments, counted per segment searched; for the bench and tests. */
    public static final class SearchPaths {
        private final AtomicLong walked = new AtomicLong();
        private final AtomicLong scanned = new AtomicLong();
        private final AtomicLong walkedThenScanned = new AtomicLong();

        void walked() {
            walked.incrementAndGet();
        }

        void scanned() {
            scanned.incrementAndGet();
        }

        void walkedThenScanned() {
            walkedThenScanned.incrementAndGet();
        }

        public Counts counts() {
            return new Counts(walked.get(), scanned.get(), walkedThenScanned.get());
        }
    }

    /**
     * Segments searched by walking the graph only; by scanning without a walk (the history said so); by a walk that
     * reached its limit and then a scan.
     */
    public record Counts(long walked, long scanned, long walkedThenScanned) {
        public Counts minus(Counts before) {
            return new Counts(
                    walked - before.walked, scanned - before.scanned, walkedThenScanned - before.walkedThenScanned);
        }

        @Override
        public String toString() {
            return "segments walked " + walked + ", scanned " + (scanned + walkedThenScanned) + " (" + walkedThenScanned
                    + " after a walk reached its limit)";
        }
    }
}
