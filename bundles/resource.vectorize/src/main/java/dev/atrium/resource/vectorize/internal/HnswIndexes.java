package dev.atrium.resource.vectorize.internal;

import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.VectorFacet.Match;
import dev.atrium.resource.api.VectorFacet.Vector;
import dev.atrium.resource.vectorize.internal.Vectors.Metric;
import dev.atrium.vector.FlatScanRule;
import dev.atrium.vector.ScanOrWalkKnnQuery;
import dev.atrium.vector.VectorSearch;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.codecs.Codec;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.FilterMergePolicy;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.MergePolicy;
import org.apache.lucene.index.SegmentCommitInfo;
import org.apache.lucene.index.SegmentInfos;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.TermInSetQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;
import org.slf4j.LoggerFactory;

/**
 * index {@code hnsw}: one Lucene index per resource in {@code <resource data directory>/lucene}, a
 * {@link KnnFloatVectorField} searched through Lucene's HNSW graph, the id and metadata as stored fields and every
 * scalar top-level metadata field as an exact-match term ({@code m.<key>}) the filter turns into a pre-filter of the
 * graph search. Every write call commits (durable when it returns) and refreshes the searcher. Open indexes are kept
 * until {@link #close()} (the bundle stops) or the resource is deprovisioned.
 * <p>
 * Each commit adds a segment, and a query searches every segment's graph with the full ef: ten graphs of 10,000 cost
 * several times one graph of 100,000 at the same recall. So once an index has had no write for
 * {@link Tuning#mergeDelayMillis()}, one background thread merges it into one segment (Lucene reuses the largest
 * segment's graph when it has no deletions, inserting only the other segments' vectors; otherwise the graph is built
 * again). Queries keep using the old segments until the merge is committed.
 * <p>
 * With {@link Tuning#quantized()} (the default) new segments are written by {@link dev.atrium.vector.AtriumHnswQuantizedVectorsFormat}:
 * the graph is walked on int8 vectors, and a query's candidates (its ef of them) are scored again exactly on the float
 * vectors the segment keeps, so the ids and scores returned are the float search's. An index whose segments are in the
 * other format (written before, or with the setting changed) is rewritten by the same background merge — from its own
 * float vectors, reusing its graph — and answers meanwhile from the segments it has.
 * <p>
 * A query searches each int8 segment by walking its graph or, where {@link FlatScanRule} finds it cheaper (a walk
 * that would visit a large share of the segment: large ef on data the graph prunes little), by scoring every accepted
 * int8 vector in file order ({@link ScanOrWalkKnnQuery}); the candidates are re-scored on floats the same way.
 *
 * <p>Why one class of about 660 lines: the open indexes, their writers, searchers and background merges share one
 * lifecycle per resource; the formats, the scan rule and the query are classes of their own.
 */
final class HnswIndexes implements AutoCloseable {

    static final String VECTOR = "v";
    static final String ID = "id";
    static final String META = "meta";
    static final String FIELD_PREFIX = "m.";
    /** How many candidates per result an int8 walk's are scored again on floats (at least 100). */
    static final int RESCORED = 10;

    /**
     * Graph and search parameters; {@code flatScan}: an int8 segment is scanned in file order instead of walked when
     * {@link FlatScanRule} finds the scan cheaper.
     */
    record Tuning(
            int maxConn, int beamWidth, int oversample, long mergeDelayMillis, boolean quantized, boolean flatScan) {
        Tuning(int maxConn, int beamWidth, int oversample, long mergeDelayMillis) {
            this(maxConn, beamWidth, oversample, mergeDelayMillis, true);
        }

        Tuning(int maxConn, int beamWidth, int oversample, long mergeDelayMillis, boolean quantized) {
            this(maxConn, beamWidth, oversample, mergeDelayMillis, quantized, true);
        }

        /** The name of the vector format new segments are written in (and old ones rewritten into). */
        String format() {
            return VectorSearch.formatName(quantized);
        }
    }

    /**
     * Lucene's merge policy, but while {@link #rewrite} is set, a forced merge takes every segment it was asked to,
     * one of them alone too (Lucene leaves a single segment as it is): its vectors are then written again in the
     * codec's current format. The merged segment is not taken again (IndexWriter marks it as not asked).
     */
    private static final class RewritingMergePolicy extends FilterMergePolicy {
        volatile boolean rewrite;

        RewritingMergePolicy() {
            super(new TieredMergePolicy());
        }

        @Override
        public MergeSpecification findForcedMerges(
                SegmentInfos infos,
                int maxSegmentCount,
                Map<SegmentCommitInfo, Boolean> segmentsToMerge,
                MergeContext context)
                throws IOException {
            if (!rewrite) {
                return super.findForcedMerges(infos, maxSegmentCount, segmentsToMerge, context);
            }
            List<SegmentCommitInfo> asked = new ArrayList<>();
            for (SegmentCommitInfo info : infos) {
                if (Boolean.TRUE.equals(segmentsToMerge.get(info))
                        && !context.getMergingSegments().contains(info)) {
                    asked.add(info);
                }
            }
            if (asked.isEmpty()) {
                return null;
            }
            MergeSpecification spec = new MergeSpecification();
            spec.add(new MergePolicy.OneMerge(asked));
            return spec;
        }
    }

    private final class Index {
        final Directory directory;
        final IndexWriter writer;
        final SearcherManager searchers;
        final RewritingMergePolicy policy = new RewritingMergePolicy();
        /** What walks showed of each segment (by its core): where a scan is cheaper. */
        final Map<Object, FlatScanRule.SegmentHistory> histories = new ConcurrentHashMap<>();

        private ScheduledFuture<?> merge; // the pending background merge, replaced by every write
        private long lastMergeEnd; // System.nanoTime() when the last background merge ended, and how long it took
        private long lastMergeNanos;

        Index(Path dir) throws IOException {
            directory = FSDirectory.open(dir);
            IndexWriterConfig iwc = new IndexWriterConfig()
                    .setCodec(codec())
                    .setRAMBufferSizeMB(64)
                    .setCommitOnClose(false)
                    .setMergePolicy(policy);
            IndexWriter w = new IndexWriter(directory, iwc);
            try {
                searchers = new SearcherManager(w, null);
            } catch (IOException | RuntimeException e) {
                w.close();
                directory.close();
                throw e;
            }
            writer = w;
        }

        void close() throws IOException {
            try {
                searchers.close();
                // every write call committed already: rollback closes at once, aborting a running merge (HNSW graph
                // merges of a large index take minutes) instead of waiting for it as close() would; nothing is lost
                writer.rollback();
            } finally {
                directory.close();
            }
        }
    }

    private final Tuning tuning;
    private Codec codec; // made on the first index opened: Lucene's classes load only when an hnsw index is used
    private String scorer; // with it
    private final Map<String, Index> open = new ConcurrentHashMap<>();
    private final FlatScanRule.SearchPaths paths = new FlatScanRule.SearchPaths();
    private final ScheduledThreadPoolExecutor merges;
    private volatile boolean closed;

    HnswIndexes(Tuning tuning) {
        this.tuning = tuning;
        // one thread: merges are CPU-heavy (a graph insertion per vector), so at most one runs at a time
        this.merges = new ScheduledThreadPoolExecutor(1, NamedThreads.factory("vectorize-hnsw-merge"));
        merges.setRemoveOnCancelPolicy(true);
        merges.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    private synchronized Codec codec() {
        if (codec == null) {
            codec = VectorSearch.codec(tuning.maxConn(), tuning.beamWidth(), tuning.quantized());
            scorer = VectorSearch.scorerDescription();
            if (scorer.contains("; but ")) {
                LoggerFactory.getLogger(HnswIndexes.class).warn("vectorize: {}", scorer);
            }
        }
        return codec;
    }

    /**
     * How this bundle's HNSW indexes compute distances, for a person to read ({@code connectionInfo}'s
     * {@code scorer}): {@code simd (...)} with the Vector API, {@code scalar (...)} with the reason otherwise.
     */
    synchronized String scorer() {
        codec();
        return scorer;
    }

    static VectorSimilarityFunction similarity(Metric metric) {
        return switch (metric) {
            case COSINE -> VectorSimilarityFunction.COSINE;
            case DOT -> VectorSimilarityFunction.MAXIMUM_INNER_PRODUCT; // DOT_PRODUCT needs unit vectors
            case EUCLIDEAN -> VectorSimilarityFunction.EUCLIDEAN;
        };
    }

    /** Lucene's score back to the metric's score (see {@link Vectors}). */
    static double score(Metric metric, float lucene) {
        return switch (metric) {
            case COSINE -> 2.0 * lucene - 1.0;
            case DOT -> lucene >= 1 ? lucene - 1.0 : 1.0 - 1.0 / lucene;
            case EUCLIDEAN -> lucene;
        };
    }

    private Index index(String resourceId, Path dir) throws ResourceException {
        if (closed) {
            throw ResourceException.unavailable("the vectorize provider is stopping", null);
        }
        try {
            boolean[] opened = {false};
            Index index = open.computeIfAbsent(resourceId, id -> {
                try {
                    Path lucene = Files.createDirectories(dir.resolve("lucene"));
                    opened[0] = true;
                    return VectorSearch.withBundleLoader(() -> new Index(lucene));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            if (opened[0] && stale(index)) {
                scheduleMerge(index); // segments in the other vector format: rewritten by the background merge
            }
            return index;
        } catch (IOException | java.io.UncheckedIOException e) {
            throw ResourceException.unavailable("the vector index cannot be opened", e);
        }
    }

    void upsert(String resourceId, Path dir, Metric metric, List<Vector> vectors) throws ResourceException {
        Index index = index(resourceId, dir);
        VectorSimilarityFunction sim = similarity(metric);
        try {
            for (Vector v : vectors) {
                Document doc = new Document();
                doc.add(new StringField(ID, v.id(), Field.Store.YES));
                doc.add(new KnnFloatVectorField(VECTOR, v.values(), sim));
                Map<String, Object> metadata = v.metadata() == null ? Map.of() : v.metadata();
                doc.add(new StoredField(META, Vectors.metadataJson(metadata)));
                for (Map.Entry<String, Object> e : metadata.entrySet()) {
                    String value = Vectors.canonical(e.getValue());
                    if (value != null) {
                        doc.add(new StringField(FIELD_PREFIX + e.getKey(), value, Field.Store.NO));
                    }
                }
                index.writer.updateDocument(new Term(ID, v.id()), doc);
            }
            index.writer.commit();
            index.searchers.maybeRefreshBlocking();
        } catch (IOException | IllegalArgumentException e) {
            throw failed(e);
        }
        scheduleMerge(index);
    }

    int delete(String resourceId, Path dir, List<String> ids) throws ResourceException {
        Index index = index(resourceId, dir);
        List<BytesRef> terms = ids.stream().map(BytesRef::new).toList();
        try {
            IndexSearcher s = index.searchers.acquire();
            int existed;
            try {
                existed = s.count(new TermInSetQuery(ID, terms));
            } finally {
                index.searchers.release(s);
            }
            index.writer.deleteDocuments(
                    ids.stream().map(id -> new Term(ID, id)).toArray(Term[]::new));
            index.writer.commit();
            index.searchers.maybeRefreshBlocking();
            scheduleMerge(index);
            return existed;
        } catch (IOException e) {
            throw failed(e);
        }
    }

    /** (Re)starts the quiet period after which the index is merged into one segment. */
    private void scheduleMerge(Index index) {
        if (tuning.mergeDelayMillis() <= 0 || closed) {
            return;
        }
        synchronized (index) {
            if (index.merge != null) {
                index.merge.cancel(false); // a merge already running finishes; the next one follows it
            }
            // a merge that rebuilds the graph (the largest segment had deletions) takes minutes at 100,000 vectors;
            // under a steady stream of updates, waiting four times its length after it keeps merging to a fifth of
            // one core
            long delay = TimeUnit.MILLISECONDS.toNanos(tuning.mergeDelayMillis());
            if (index.lastMergeNanos > 0) {
                delay = Math.max(delay, index.lastMergeEnd + 4 * index.lastMergeNanos - System.nanoTime());
            }
            try {
                index.merge = merges.schedule(() -> merge(index), delay, TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // stopping: the index stays as it is, searchable, and is merged after a later write
            }
        }
    }

    private void merge(Index index) {
        try {
            boolean rewrite = !closed && stale(index);
            if (closed || (!rewrite && segments(index) <= 1)) {
                return;
            }
            // waits for the merge, which runs on the writer's merge thread; new writes meanwhile add segments
            // the next scheduled merge takes in
            long start = System.nanoTime();
            index.policy.rewrite = rewrite;
            try {
                index.writer.forceMerge(1);
            } finally {
                index.policy.rewrite = false;
            }
            index.writer.commit();
            index.searchers.maybeRefreshBlocking();
            synchronized (index) {
                index.lastMergeEnd = System.nanoTime();
                index.lastMergeNanos = index.lastMergeEnd - start;
            }
        } catch (IOException | RuntimeException e) {
            // stopped or deprovisioned meanwhile (the writer rolled back, aborting the merge), or the disk failed:
            // the committed segments stay searchable as they were, and the next write schedules another merge
        }
    }

    /** Whether a segment of the index has its vectors in the other format than the one new segments get. */
    private boolean stale(Index index) throws IOException {
        IndexSearcher s = index.searchers.acquire();
        try {
            for (LeafReaderContext leaf : s.getIndexReader().leaves()) {
                String format = VectorSearch.format(leaf, VECTOR);
                if (format != null && !format.equals(tuning.format())) {
                    return true;
                }
            }
            return false;
        } finally {
            index.searchers.release(s);
        }
    }

    /** The name of the vector format a segment's vectors are in, or null if it has none. */
    private static int segments(Index index) throws IOException {
        IndexSearcher s = index.searchers.acquire();
        try {
            return s.getIndexReader().leaves().size();
        } finally {
            index.searchers.release(s);
        }
    }

    /** How many segments (graphs) a query of the resource's index searches; for tests and the bench. */
    int segments(String resourceId, Path dir) throws ResourceException {
        try {
            return segments(index(resourceId, dir));
        } catch (IOException e) {
            throw failed(e);
        }
    }

    /** The vector format of each segment of the resource's index, by name; for tests. */
    List<String> formats(String resourceId, Path dir) throws ResourceException {
        Index index = index(resourceId, dir);
        try {
            IndexSearcher s = index.searchers.acquire();
            try {
                return s.getIndexReader().leaves().stream()
                        .map(leaf -> VectorSearch.format(leaf, VECTOR))
                        .toList();
            } finally {
                index.searchers.release(s);
            }
        } catch (IOException e) {
            throw failed(e);
        }
    }

    /** How the queries of every index searched their segments so far: walked or scanned; for tests and the bench. */
    FlatScanRule.Counts searchPaths() {
        return paths.counts();
    }

    long count(String resourceId, Path dir) throws ResourceException {
        Index index = index(resourceId, dir);
        try {
            IndexSearcher s = index.searchers.acquire();
            try {
                return s.getIndexReader().numDocs();
            } finally {
                index.searchers.release(s);
            }
        } catch (IOException e) {
            throw failed(e);
        }
    }

    List<Match> query(String resourceId, Path dir, Metric metric, float[] query, int topK, Map<String, Object> filter)
            throws ResourceException {
        Index index = index(resourceId, dir);
        Query pre = null;
        if (!filter.isEmpty()) {
            BooleanQuery.Builder b = new BooleanQuery.Builder();
            for (Map.Entry<String, Object> e : filter.entrySet()) {
                b.add(
                        new TermQuery(new Term(FIELD_PREFIX + e.getKey(), Vectors.canonical(e.getValue()))),
                        BooleanClause.Occur.FILTER);
            }
            pre = b.build();
        }
        int k = Math.max(topK, topK * tuning.oversample());
        try {
            IndexSearcher s = index.searchers.acquire();
            try {
                // each int8 segment walked, or scanned in file order where that is cheaper (FlatScanRule): its best k
                // by int8 score either way
                TopDocs top = s.search(
                        new ScanOrWalkKnnQuery(VECTOR, query, k, pre, tuning.flatScan(), index.histories, paths), k);
                StoredFields stored = s.storedFields();
                // the ef candidates come best first by the walk's (int8) scores; only the best RESCORED x topK of them
                // are scored again: the int8 score is off by well under the gap between the 10th and the 100th
                ScoreDoc[] hits = VectorSearch.exact(
                        s,
                        VECTOR,
                        similarity(metric),
                        query,
                        Arrays.copyOf(top.scoreDocs, Math.min(top.scoreDocs.length, Math.max(topK * RESCORED, 100))));
                List<Match> out = new ArrayList<>(Math.min(topK, hits.length));
                for (ScoreDoc d : hits) {
                    if (out.size() == topK) {
                        break;
                    }
                    Document doc = stored.document(d.doc);
                    out.add(new Match(doc.get(ID), score(metric, d.score), Vectors.parseMetadata(doc.get(META))));
                }
                return out;
            } finally {
                index.searchers.release(s);
            }
        } catch (IOException | IllegalArgumentException e) {
            throw failed(e);
        }
    }

    /** Closes the resource's index (if open) and deletes its files. */
    void drop(String resourceId, Path dir) throws ResourceException {
        Index index = open.remove(resourceId);
        try {
            if (index != null) {
                synchronized (index) {
                    if (index.merge != null) {
                        index.merge.cancel(false);
                    }
                }
                index.close();
            }
            Path lucene = dir.resolve("lucene");
            if (Files.exists(lucene)) {
                try (var files = Files.walk(lucene)) {
                    for (Path p :
                            files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(p);
                    }
                }
            }
        } catch (IOException e) {
            throw failed(e);
        }
    }

    /** Closes every open index (their writes are committed already). */
    @Override
    public void close() {
        closed = true;
        merges.shutdown(); // pending merges are dropped; a running one is aborted by the rollback below
        for (String id : List.copyOf(open.keySet())) {
            Index index = open.remove(id);
            if (index != null) {
                try {
                    index.close();
                } catch (IOException e) {
                    // closing the rest matters more; the files stay consistent at their last commit
                }
            }
        }
        try {
            merges.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static ResourceException failed(Exception e) {
        if (e instanceof IllegalArgumentException) {
            return ResourceException.badInput("the vector index refused this: " + e.getMessage());
        }
        return ResourceException.unavailable("the vector index failed; try again", e);
    }
}
