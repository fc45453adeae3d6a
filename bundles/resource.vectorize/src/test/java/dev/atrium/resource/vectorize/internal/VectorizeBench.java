package dev.atrium.resource.vectorize.internal;

import dev.atrium.resource.api.TestResourceContext;
import dev.atrium.resource.api.VectorFacet.Match;
import dev.atrium.resource.api.VectorFacet.Vector;
import dev.atrium.vector.FlatScanRule;
import dev.atrium.vector.VectorScorers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Not a test (surefire's name patterns skip it): bench/resources-vectorize.sh runs it with -Dtest=VectorizeBench.
 * Loads N random (Gaussian) vectors through the provider into an hnsw index (Lucene) and into an exact one
 * (PostgreSQL), computes the true top-10 of Q random queries by brute force, then prints recall@10 and p50/p99
 * query latency of HNSW at several query-time oversampling factors, and of the exact index.
 * Settings: -Dbench.n (100000) -Dbench.dims (384) -Dbench.queries (200) -Dbench.maxConn -Dbench.beamWidth
 * -Dbench.oversample (a comma list, default 1,2,5,10,20) -Dbench.exactQueries (20; 0 skips the PostgreSQL index)
 * -Dbench.mergeWaitSeconds (3600: how long to wait for the background merge into one segment; 0 measures the segments
 * the upserts left, as before) -Dbench.indexDir (empty: a temporary index, deleted at the end; a directory: the hnsw index
 * is kept there, and reused without loading when it is already there — to query one index from JVMs with and without
 * the Vector API) -Dbench.distances (1,000,000: random-order distance computations timed through the index's own
 * scorer, on its memory-mapped vectors; 0 skips) -Dbench.flatScan (true: the provider's hnswFlatScan, an int8 segment
 * scanned in file order where the walk would cost more; false: always the graph walk). Each hnsw line says how its
 * timed queries searched the segments: walked, or scanned (and how many of those scans followed a walk that reached
 * its visit limit). -Dbench.clusters (0: every vector Gaussian; C: a Gaussian mixture, each vector and query one of C
 * Gaussian centres plus Gaussian noise of -Dbench.clusterSpread (0.5) times the centres' scale — closer to embeddings,
 * whose neighbours share a topic, than uniform noise; its kept index must be another directory).
 */
class VectorizeBench {

    static final int K = 10;

    @Test
    void bench() throws Exception {
        int n = Integer.getInteger("bench.n", 100_000);
        int dims = Integer.getInteger("bench.dims", 384);
        int queries = Integer.getInteger("bench.queries", 200);
        int maxConn = Integer.getInteger("bench.maxConn", 32);
        int beamWidth = Integer.getInteger("bench.beamWidth", 200);
        int exactQueries = Integer.getInteger("bench.exactQueries", 20);
        int batch = Integer.getInteger("bench.batch", 10_000);
        long mergeWait = Long.getLong("bench.mergeWaitSeconds", 3600);
        int[] oversample = Arrays.stream(
                        System.getProperty("bench.oversample", "1,2,5,10,20").split(","))
                .mapToInt(Integer::parseInt)
                .toArray();
        String keep = System.getProperty("bench.indexDir", "");
        int distances = Integer.getInteger("bench.distances", 1_000_000);
        boolean flatScan = Boolean.parseBoolean(System.getProperty("bench.flatScan", "true"));
        System.out.printf(
                "vectorize bench: %d random %d-dimension vectors (cosine), %d queries, top-%d; HNSW maxConn=%d beamWidth=%d flatScan=%s; distances: %s%n",
                n,
                dims,
                queries,
                K,
                maxConn,
                beamWidth,
                flatScan,
                VectorScorers.choice().description());

        int clusters = Integer.getInteger("bench.clusters", 0);
        double spread = Double.parseDouble(System.getProperty("bench.clusterSpread", "0.5"));
        if (clusters > 0) {
            System.out.printf(
                    "vectorize bench: clustered data, %d Gaussian centres, noise %.2f of their scale%n",
                    clusters, spread);
        }
        Random r = new Random(42);
        List<float[]> centres = new ArrayList<>();
        for (int c = 0; c < clusters; c++) {
            centres.add(VectorizeProviderTest.random(r, dims));
        }
        java.util.function.Supplier<float[]> next = () -> {
            float[] v = VectorizeProviderTest.random(r, dims);
            if (clusters > 0) {
                float[] centre = centres.get(r.nextInt(clusters));
                for (int d = 0; d < dims; d++) {
                    v[d] = centre[d] + (float) spread * v[d];
                }
            }
            return v;
        };
        List<Vector> all = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            all.add(new Vector("v" + i, next.get(), Map.of("i", i)));
        }
        List<float[]> qs = new ArrayList<>();
        for (int i = 0; i < queries; i++) {
            qs.add(next.get());
        }
        // ground truth by brute force in memory
        List<Set<String>> truth = new ArrayList<>();
        for (float[] q : qs) {
            double qn = Vectors.norm(q);
            java.util.PriorityQueue<double[]> best =
                    new java.util.PriorityQueue<>((a, b) -> Double.compare(a[0], b[0]));
            for (int i = 0; i < n; i++) {
                double sc = Vectors.Metric.COSINE.score(q, qn, all.get(i).values());
                if (best.size() < K) {
                    best.add(new double[] {sc, i});
                } else if (sc > best.peek()[0]) {
                    best.poll();
                    best.add(new double[] {sc, i});
                }
            }
            Set<String> top = new HashSet<>();
            for (double[] b : best) {
                top.add("v" + (int) b[1]);
            }
            truth.add(top);
        }

        String host = System.getenv().getOrDefault("ATRIUM_TEST_PG", "127.0.0.1:5432");
        String db =
                "atrium_vbench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + host + "/postgres?user=postgres");
                Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + db);
        }
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl("jdbc:postgresql://" + host + "/" + db + "?user=postgres");
        Path dir = Files.createTempDirectory("vectorize-bench");
        Path hnswDir = keep.isEmpty() ? dir.resolve("hnsw") : Path.of(keep);
        try {
            Map<String, Object> tuning = Map.of(
                    "hnswMaxConn",
                    maxConn,
                    "hnswBeamWidth",
                    beamWidth,
                    "maxExactVectors",
                    (long) n,
                    "maxBatch",
                    batch,
                    "hnswFlatScan",
                    flatScan);
            VectorizeProvider p = VectorizeProviderTest.provider(ds, tuning);
            Map<String, Object> hnswConfig =
                    p.configSchema().validate(Map.of("index", "hnsw", "metric", "cosine", "dimensions", dims));
            TestResourceContext hnsw = new TestResourceContext(ds, hnswDir, hnswConfig);
            boolean reuse = Files.isDirectory(hnswDir.resolve("lucene"));
            p.provision(hnsw);
            long t0 = System.nanoTime();
            if (reuse) {
                System.out.printf(
                        "hnsw: reusing the index in %s (%s vectors, %d segments)%n",
                        hnswDir, p.connectionInfo(hnsw).get("vectors"), p.hnswSegments(hnsw));
            } else {
                for (int i = 0; i < n; i += batch) {
                    p.upsert(hnsw, all.subList(i, Math.min(n, i + batch)));
                }
                System.out.printf(
                        "hnsw: loaded %d vectors in upserts of %d (each committed) in %.1f s, %d segments%n",
                        n, batch, (System.nanoTime() - t0) / 1e9, p.hnswSegments(hnsw));
            }
            if (mergeWait > 0 && !reuse) {
                // the provider merges the segments into one graph once writes pause (hnswMergeDelayMillis)
                t0 = System.nanoTime();
                while (p.hnswSegments(hnsw) > 1 && System.nanoTime() - t0 < mergeWait * 1_000_000_000L) {
                    Thread.sleep(1000);
                }
                System.out.printf(
                        "hnsw: background merge to %d segment(s) took %.1f s after the last upsert%n",
                        p.hnswSegments(hnsw), (System.nanoTime() - t0) / 1e9);
            }
            p.stop();
            try (var files = Files.list(hnswDir.resolve("lucene"))) {
                System.out.printf(
                        "hnsw: %d segments (merges still running when the provider stopped are aborted)%n",
                        files.filter(f -> f.toString().endsWith(".si")).count());
            }
            if (distances > 0) {
                distanceCost(hnswDir.resolve("lucene"), qs.get(0), distances);
            }

            for (int o : oversample) {
                Map<String, Object> t = new java.util.HashMap<>(tuning);
                t.put("hnswOversample", o);
                VectorizeProvider q = VectorizeProviderTest.provider(ds, t);
                measure(
                        "hnsw oversample=" + o + " (ef=" + K * o + ")",
                        q,
                        hnsw,
                        qs,
                        truth,
                        Math.min(50, queries),
                        q::hnswSearchPaths);
                q.stop();
            }

            if (exactQueries > 0) {
                Map<String, Object> exactConfig =
                        p.configSchema().validate(Map.of("index", "exact", "metric", "cosine", "dimensions", dims));
                VectorizeProvider e = VectorizeProviderTest.provider(ds, tuning);
                TestResourceContext exact = new TestResourceContext(ds, dir.resolve("exact"), exactConfig);
                t0 = System.nanoTime();
                for (int i = 0; i < n; i += 1000) {
                    e.upsert(
                            exact,
                            all.subList(
                                    i,
                                    Math.min(n, i + 1000))); // 1000 a transaction: PostgreSQL's batch size is not the
                    // question here
                }
                System.out.printf(
                        "exact (PostgreSQL): loaded %d vectors in %.1f s%n", n, (System.nanoTime() - t0) / 1e9);
                measure(
                        "exact (PostgreSQL scan, Java scoring)",
                        e,
                        exact,
                        qs.subList(0, exactQueries),
                        truth.subList(0, exactQueries),
                        2,
                        null);
                e.stop();
            }
        } finally {
            try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + host + "/postgres?user=postgres");
                    Statement s = c.createStatement()) {
                s.execute("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
            }
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder())
                        .forEach(f -> f.toFile().delete()); // a kept index is elsewhere
            }
        }
    }

    /**
     * What one distance costs as a graph search pays it: the scorer of the index's own reader (the format found by
     * name, as a query finds it), on its memory-mapped vectors, in random order (a graph search's order, to the
     * memory), one segment at a time.
     */
    private static void distanceCost(Path lucene, float[] query, int count) throws Exception {
        try (org.apache.lucene.store.Directory d = org.apache.lucene.store.FSDirectory.open(lucene);
                org.apache.lucene.index.DirectoryReader reader = org.apache.lucene.index.DirectoryReader.open(d)) {
            for (org.apache.lucene.index.LeafReaderContext leaf : reader.leaves()) {
                org.apache.lucene.codecs.KnnVectorsReader perField =
                        ((org.apache.lucene.index.SegmentReader) leaf.reader()).getVectorReader();
                Object hnsw = ((org.apache.lucene.codecs.perfield.PerFieldKnnVectorsFormat.FieldsReader) perField)
                        .getFieldReader(HnswIndexes.VECTOR);
                java.lang.reflect.Field f =
                        hnsw.getClass().getDeclaredField("flatVectorsReader"); // Lucene keeps it private
                f.setAccessible(true);
                org.apache.lucene.codecs.hnsw.FlatVectorsReader flat =
                        (org.apache.lucene.codecs.hnsw.FlatVectorsReader) f.get(hnsw);
                org.apache.lucene.util.hnsw.RandomVectorScorer scorer =
                        flat.getRandomVectorScorer(HnswIndexes.VECTOR, query);
                int size = scorer.maxOrd();
                Random r = new Random(1);
                int[] ords = new int[count];
                for (int i = 0; i < count; i++) {
                    ords[i] = r.nextInt(size);
                }
                double sink = 0;
                long best = Long.MAX_VALUE;
                for (int rep = 0; rep < 5; rep++) {
                    long t = System.nanoTime();
                    for (int ord : ords) {
                        sink += scorer.score(ord);
                    }
                    best = Math.min(best, System.nanoTime() - t);
                }
                System.out.printf(
                        "distance: %.0f ns per %d-d vector (%s, %d vectors, best of 5 x %d random reads; %.1f)%n",
                        best / (double) count,
                        query.length,
                        flat.getFlatVectorScorer().getClass().getSimpleName(),
                        size,
                        count,
                        sink);
            }
        }
    }

    /** {@code paths}: how the hnsw provider's queries searched the segments so far (null for the exact index). */
    private static void measure(
            String what,
            VectorizeProvider p,
            TestResourceContext ctx,
            List<float[]> qs,
            List<Set<String>> truth,
            int warmup,
            java.util.function.Supplier<FlatScanRule.Counts> paths)
            throws Exception {
        for (int i = 0; i < warmup; i++) {
            p.query(ctx, qs.get(i % qs.size()), K, Map.of());
        }
        FlatScanRule.Counts before = paths == null ? null : paths.get();
        long[] nanos = new long[qs.size()];
        double recall = 0;
        for (int i = 0; i < qs.size(); i++) {
            long t = System.nanoTime();
            List<Match> got = p.query(ctx, qs.get(i), K, Map.of());
            nanos[i] = System.nanoTime() - t;
            int hit = 0;
            for (Match m : got) {
                if (truth.get(i).contains(m.id())) {
                    hit++;
                }
            }
            recall += hit / (double) K;
        }
        Arrays.sort(nanos);
        System.out.printf(
                "%-42s recall@10=%.3f  p50=%.2f ms  p99=%.2f ms  (%d queries%s)%n",
                what,
                recall / qs.size(),
                nanos[nanos.length / 2] / 1e6,
                nanos[Math.min(nanos.length - 1, (int) Math.ceil(nanos.length * 0.99) - 1)] / 1e6,
                qs.size(),
                paths == null ? "" : "; " + paths.get().minus(before));
    }
}
