package dev.atrium.resource.vectorize.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.lucene.codecs.Codec;
import org.apache.lucene.codecs.FilterCodec;
import org.apache.lucene.codecs.KnnVectorsFormat;
import org.apache.lucene.codecs.perfield.PerFieldKnnVectorsFormat;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
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

import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.VectorFacet.Match;
import dev.atrium.resource.api.VectorFacet.Vector;
import dev.atrium.resource.vectorize.internal.Vectors.Metric;

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
 */
final class HnswIndexes implements AutoCloseable {

    static final String VECTOR = "v";
    static final String ID = "id";
    static final String META = "meta";
    static final String FIELD_PREFIX = "m.";

    /** Graph and search parameters. */
    record Tuning(int maxConn, int beamWidth, int oversample, long mergeDelayMillis) {
    }

    private final class Index {
        final Directory directory;
        final IndexWriter writer;
        final SearcherManager searchers;
        private ScheduledFuture<?> merge; // the pending background merge, replaced by every write
        private long lastMergeEnd; // System.nanoTime() when the last background merge ended, and how long it took
        private long lastMergeNanos;

        Index(Path dir) throws IOException {
            directory = FSDirectory.open(dir);
            IndexWriterConfig iwc = new IndexWriterConfig().setCodec(codec()).setRAMBufferSizeMB(64).setCommitOnClose(false);
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
    private final ScheduledThreadPoolExecutor merges;
    private volatile boolean closed;

    HnswIndexes(Tuning tuning) {
        this.tuning = tuning;
        // one thread: merges are CPU-heavy (a graph insertion per vector), so at most one runs at a time
        this.merges = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "vectorize-hnsw-merge");
            t.setDaemon(true);
            t.setPriority(Thread.MIN_PRIORITY);
            return t;
        });
        merges.setRemoveOnCancelPolicy(true);
        merges.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    private synchronized Codec codec() {
        if (codec == null) {
            // Lucene finds codecs and formats through ServiceLoader: with its classes and META-INF/services embedded
            // in this bundle, its own class loader sees them; the context loader is set too for lookups that consult it
            codec = withBundleLoader(() -> new TunedCodec(Codec.getDefault(), tuning.maxConn(), tuning.beamWidth()));
            scorer = withBundleLoader(HnswIndexes::describeScorer);
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

    private static String describeScorer() {
        String description = VectorScorers.choice().description();
        // segments read from disk find their format by name through Lucene's SPI, which must give this bundle's
        KnnVectorsFormat spi = KnnVectorsFormat.forName(AtriumHnswVectorsFormat.NAME);
        if (!(spi instanceof AtriumHnswVectorsFormat)) {
            description += "; but segments read from disk use " + spi.getClass().getName() + " (Lucene's SPI found it first)";
            LoggerFactory.getLogger(HnswIndexes.class).warn("vectorize: {}", description);
        }
        return description;
    }

    /**
     * The default codec with the HNSW parameters set for writing. It keeps the default codec's name and its vector
     * format keeps Lucene's name: the graph parameters are not needed to read a segment, so the stock codec found
     * through SPI reads what this one wrote — through {@link AtriumHnswVectorsFormat}, which this bundle's SPI list
     * gives for that name, and stock Lucene reads it as well.
     */
    private static final class TunedCodec extends FilterCodec {
        private final KnnVectorsFormat vectors;

        TunedCodec(Codec base, int maxConn, int beamWidth) {
            super(base.getName(), base);
            KnnVectorsFormat hnsw = new AtriumHnswVectorsFormat(maxConn, beamWidth);
            this.vectors = new PerFieldKnnVectorsFormat() {
                @Override
                public KnnVectorsFormat getKnnVectorsFormatForField(String field) {
                    return hnsw;
                }
            };
        }

        @Override
        public KnnVectorsFormat knnVectorsFormat() {
            return vectors;
        }
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
            return open.computeIfAbsent(resourceId, id -> {
                try {
                    Path lucene = Files.createDirectories(dir.resolve("lucene"));
                    return withBundleLoader(() -> new Index(lucene));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
        } catch (java.io.UncheckedIOException e) {
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
            index.writer.deleteDocuments(ids.stream().map(id -> new Term(ID, id)).toArray(Term[]::new));
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
            if (closed || segments(index) <= 1) {
                return;
            }
            // waits for the merge, which runs on the writer's merge thread; new writes meanwhile add segments
            // the next scheduled merge takes in
            long start = System.nanoTime();
            index.writer.forceMerge(1);
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

    List<Match> query(String resourceId, Path dir, Metric metric, float[] query, int topK, Map<String, Object> filter) throws ResourceException {
        Index index = index(resourceId, dir);
        Query pre = null;
        if (!filter.isEmpty()) {
            BooleanQuery.Builder b = new BooleanQuery.Builder();
            for (Map.Entry<String, Object> e : filter.entrySet()) {
                b.add(new TermQuery(new Term(FIELD_PREFIX + e.getKey(), Vectors.canonical(e.getValue()))), BooleanClause.Occur.FILTER);
            }
            pre = b.build();
        }
        int k = Math.max(topK, topK * tuning.oversample());
        try {
            IndexSearcher s = index.searchers.acquire();
            try {
                TopDocs top = s.search(new KnnFloatVectorQuery(VECTOR, query, k, pre), k);
                StoredFields stored = s.storedFields();
                List<Match> out = new ArrayList<>(Math.min(topK, top.scoreDocs.length));
                for (ScoreDoc d : top.scoreDocs) {
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
                    for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
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

    @FunctionalInterface
    private interface IoSupplier<T> {
        T get() throws IOException;
    }

    private static <T> T withBundleLoader(IoSupplier<T> work) {
        Thread t = Thread.currentThread();
        ClassLoader before = t.getContextClassLoader();
        t.setContextClassLoader(HnswIndexes.class.getClassLoader());
        try {
            return work.get();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } finally {
            t.setContextClassLoader(before);
        }
    }
}
