package dev.atrium.resource.vectorize.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.resource.api.VectorFacet.Match;
import dev.atrium.resource.api.VectorFacet.Vector;
import dev.atrium.resource.vectorize.internal.Vectors.Metric;
import dev.atrium.vector.FlatScanRule;
import dev.atrium.vector.ScanOrWalkKnnQuery;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The flat int8 scan of a segment ({@link ScanOrWalkKnnQuery}, {@link FlatScanRule}): chosen where the walk would
 * cost more, with the same answers as the walk where both are exact, and deleted vectors and filters respected.
 */
class FlatScanTest {

    static final int K = 10;

    @TempDir
    Path dir;

    @Test
    void aWalkMayVisitASixthOfTheAcceptedVectorsBeforeTheScanIsCheaper() {
        assertEquals(16_666, FlatScanRule.visitLimit(100_000, true));
        assertEquals(166, FlatScanRule.visitLimit(1_000, true), "a filter accepting 1,000 vectors");
        assertEquals(1, FlatScanRule.visitLimit(3, true));
        assertEquals(
                Integer.MAX_VALUE, FlatScanRule.visitLimit(100_000, false), "Lucene's scalar scorer: always the graph");
    }

    @Test
    void aSegmentIsScannedAtOnceAtTheEfWhoseWalkReachedTheLimitAndAboveButWalkedBelow() {
        FlatScanRule.SegmentHistory history = new FlatScanRule.SegmentHistory();
        assertFalse(history.scanWithoutWalking(1500, 16_666), "nothing known: walk with the limit");
        history.walkReachedLimit(500, 16_666);
        assertTrue(history.scanWithoutWalking(500, 16_666));
        assertTrue(history.scanWithoutWalking(1500, 16_666), "a larger ef visits more");
        assertTrue(history.scanWithoutWalking(500, 10_000), "a smaller limit (deletions, a filter) is reached sooner");
        assertFalse(history.scanWithoutWalking(100, 16_666), "a smaller ef may stay under the limit");
        assertFalse(history.scanWithoutWalking(1500, 20_000), "a larger limit may not be reached");
        history.walkReachedLimit(1000, 5_000); // a filtered query's: does not replace the unfiltered evidence
        assertTrue(history.scanWithoutWalking(500, 16_666));
        history.walkReachedLimit(300, 16_666);
        assertTrue(history.scanWithoutWalking(300, 16_666));
    }

    @Test
    void largeEfScansTheSegmentAndSmallEfWalksItsGraph() throws Exception {
        Random r = new Random(11);
        List<Vector> vectors = SimdHnswIndexTest.vectors(r, 10_000, 16);
        HnswIndexes indexes = new HnswIndexes(new HnswIndexes.Tuning(16, 100, 10, 0, true, true));
        try {
            indexes.upsert("r", dir, Metric.COSINE, vectors); // one segment: a sixth of it is a limit of 1,666 visits
            assertEquals(1, indexes.segments("r", dir));
            FlatScanRule.Counts start = indexes.searchPaths();
            indexes.query("r", dir, Metric.COSINE, VectorizeProviderTest.random(r, 16), 1, Map.of()); // ef 10
            assertEquals(new FlatScanRule.Counts(1, 0, 0), indexes.searchPaths().minus(start), "ef 10 walks the graph");
            float[] q = VectorizeProviderTest.random(r, 16);
            QuantizedHnswIndexTest.assertExactWithScores(
                    Metric.COSINE, vectors, q, indexes.query("r", dir, Metric.COSINE, q, K, Map.of())); // ef 100
            indexes.query("r", dir, Metric.COSINE, VectorizeProviderTest.random(r, 16), 100, Map.of()); // ef 1,000
            assertEquals(
                    new FlatScanRule.Counts(2, 0, 1),
                    indexes.searchPaths().minus(start),
                    "ef 1,000 reaches the visit limit (at least 1,000 visits of up to 32 neighbours each) and scans");
            indexes.query("r", dir, Metric.COSINE, VectorizeProviderTest.random(r, 16), 100, Map.of());
            assertEquals(
                    new FlatScanRule.Counts(2, 1, 1),
                    indexes.searchPaths().minus(start),
                    "the next one at ef 1,000 scans without walking");
            indexes.query("r", dir, Metric.COSINE, VectorizeProviderTest.random(r, 16), 1, Map.of());
            assertEquals(new FlatScanRule.Counts(3, 1, 1), indexes.searchPaths().minus(start), "ef 10 still walks");
        } finally {
            indexes.close();
        }
    }

    @Test
    void theScanAndTheWalkReturnTheSameTopKWithTheSameScoresWhereBothAreExact() throws Exception {
        Random r = new Random(12);
        int dims = 48;
        List<Vector> vectors = SimdHnswIndexTest.vectors(r, 1500, dims);
        for (Metric metric : Metric.values()) {
            // ef 1,000 over segments of 500 vectors: the walk visits all of them, so it finds the true top 10 too; the
            // scan is chosen all the same (a sixth of 500 is its visit limit)
            HnswIndexes scanning = new HnswIndexes(new HnswIndexes.Tuning(16, 100, 100, 0, true, true));
            HnswIndexes walking = new HnswIndexes(new HnswIndexes.Tuning(16, 100, 100, 0, true, false));
            try {
                for (int i = 0; i < vectors.size(); i += 500) { // three segments
                    scanning.upsert("r", dir.resolve(metric + "-scan"), metric, vectors.subList(i, i + 500));
                    walking.upsert("r", dir.resolve(metric + "-walk"), metric, vectors.subList(i, i + 500));
                }
                for (int t = 0; t < 10; t++) {
                    float[] q = VectorizeProviderTest.random(r, dims);
                    List<Match> scanned = scanning.query("r", dir.resolve(metric + "-scan"), metric, q, K, Map.of());
                    List<Match> walked = walking.query("r", dir.resolve(metric + "-walk"), metric, q, K, Map.of());
                    QuantizedHnswIndexTest.assertExactWithScores(metric, vectors, q, scanned);
                    assertEquals(walked, scanned, metric + ": ids, scores, metadata and order");
                }
                FlatScanRule.Counts scans = scanning.searchPaths();
                assertEquals(
                        30,
                        scans.scanned() + scans.walkedThenScanned(),
                        metric + ": every segment of every query scanned: " + scans);
                assertEquals(
                        3, scans.walkedThenScanned(), metric + ": each segment walked once, then remembered: " + scans);
                assertEquals(
                        new FlatScanRule.Counts(30, 0, 0), walking.searchPaths(), metric + ": hnswFlatScan off walks");
            } finally {
                scanning.close();
                walking.close();
            }
        }
    }

    @Test
    void theScanLeavesOutDeletedVectorsAndThoseTheFilterRejects() throws Exception {
        Random r = new Random(13);
        int dims = 64; // at 32, the int8 order can leave a true top-10 vector outside the 100 re-scored, walk or scan
        List<Vector> vectors = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
            vectors.add(new Vector("v" + i, VectorizeProviderTest.random(r, dims), Map.of("g", i % 2)));
        }
        float[] q = VectorizeProviderTest.random(r, dims);
        // deleted: the query's true top 50 and every 7th vector
        Set<String> deleted = new HashSet<>();
        double qn = Vectors.norm(q);
        vectors.stream()
                .sorted(java.util.Comparator.comparingDouble((Vector v) -> -Metric.COSINE.score(q, qn, v.values())))
                .limit(50)
                .forEach(v -> deleted.add(v.id()));
        for (int i = 0; i < vectors.size(); i += 7) {
            deleted.add("v" + i);
        }
        List<Vector> live =
                vectors.stream().filter(v -> !deleted.contains(v.id())).toList();
        HnswIndexes indexes = new HnswIndexes(new HnswIndexes.Tuning(16, 100, 100, 0, true, true)); // ef 1,000
        try {
            indexes.upsert("r", dir, Metric.COSINE, vectors);
            assertEquals(deleted.size(), indexes.delete("r", dir, List.copyOf(deleted)));
            assertEquals(1, indexes.segments("r", dir), "deletions hide vectors of the segment");
            for (int t = 0; t < 2; t++) {
                FlatScanRule.Counts before = indexes.searchPaths();

                QuantizedHnswIndexTest.assertExactWithScores(
                        Metric.COSINE, live, q, indexes.query("r", dir, Metric.COSINE, q, K, Map.of()));
                // the filter accepts ~1,700 live vectors, more than ef: Lucene hands the segment to the walk (or scan)
                List<Vector> group = live.stream()
                        .filter(v -> v.metadata().get("g").equals(1))
                        .toList();
                assertTrue(group.size() > 1000);
                QuantizedHnswIndexTest.assertExactWithScores(
                        Metric.COSINE, group, q, indexes.query("r", dir, Metric.COSINE, q, K, Map.of("g", 1)));
                FlatScanRule.Counts paths = indexes.searchPaths().minus(before);
                assertEquals(0, paths.walked(), "both queries scanned: " + paths);
                assertEquals(2, paths.scanned() + paths.walkedThenScanned(), "both queries scanned: " + paths);
            }
        } finally {
            indexes.close();
        }
    }
}
