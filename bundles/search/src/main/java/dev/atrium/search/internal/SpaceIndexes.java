package dev.atrium.search.internal;

import dev.atrium.vector.FlatScanRule;
import dev.atrium.vector.ScanOrWalkKnnQuery;
import dev.atrium.vector.VectorSearch;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.lucene.codecs.Codec;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.FloatVectorValues;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.Weight;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.Bits;

/**
 * One Lucene index per workspace under {@code <data>/search/lucene/<spaceId>} (and one per indexed repository under
 * {@code <data>/search/repos/<repoId>}, whose documents' kind is the file's path): a document per embedded item (its
 * key {@code kind:id}, its kind, its vector), searched through the vector library's int8 HNSW graph (or flat scan) and
 * re-scored on floats. The index is derived: PostgreSQL keeps every embedding, and {@link SearchIndex} rebuilds a
 * workspace's index from there when it is missing or holds another number of documents.
 */
final class SpaceIndexes implements AutoCloseable {

    static final String KEY = "key";
    static final String KIND = "kind";
    static final String VECTOR = "v";
    private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    /**
     * Indexes of at most this many documents are searched exactly (every float vector scored, a few ms): an HNSW graph
     * over many equal vectors (generated files, repeated notes) can keep a walk among them, away from the answer.
     */
    static final int EXACT_UP_TO = 10_000;
    /** Quiet time after a write before an index is merged into one segment. */
    static final long MERGE_DELAY_MILLIS = 2_000;
    /** Candidates per result an int8 walk keeps before the float re-scoring (at least 100). */
    private static final int EF_PER_RESULT = 5;

    private final Path root;
    private final int exactUpTo;
    private Codec codec; // made with the first index opened: Lucene's classes load only when vectors are used
    private final Map<String, Index> open = new ConcurrentHashMap<>();
    /** One thread merges indexes into one segment once their writes pause: each segment's graph costs a walk. */
    private final ScheduledThreadPoolExecutor merges;

    private final long mergeDelayMillis;
    private final FlatScanRule.SearchPaths paths = new FlatScanRule.SearchPaths();
    private volatile boolean closed;

    SpaceIndexes(Path root) {
        this(root, EXACT_UP_TO, MERGE_DELAY_MILLIS);
    }

    /**
     * @param exactUpTo        indexes of at most this many documents are searched exactly
     * @param mergeDelayMillis how long after its last write an index is merged into one segment (0: never)
     */
    SpaceIndexes(Path root, int exactUpTo, long mergeDelayMillis) {
        this.root = root;
        this.exactUpTo = exactUpTo;
        this.mergeDelayMillis = mergeDelayMillis;
        this.merges = new ScheduledThreadPoolExecutor(1, dev.atrium.kernel.api.NamedThreads.factory("search-merge"));
        merges.setRemoveOnCancelPolicy(true);
        merges.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** A hit: the item's key ({@code kind:id}) and its cosine similarity. */
    record Hit(String key, double similarity) {}

    /** A document to write: the item's key and kind and its vector. */
    record Doc(String key, String kind, float[] vector) {}

    private static final class Index {
        final FSDirectory directory;
        final IndexWriter writer;
        final SearcherManager searchers;
        final Map<Object, FlatScanRule.SegmentHistory> histories = new ConcurrentHashMap<>();
        ScheduledFuture<?> merge; // the pending merge, replaced by every write
        long lastMergeEnd; // System.nanoTime() when the last merge ended, and how long it took
        long lastMergeNanos;

        Index(Path dir, Codec codec) throws IOException {
            directory = FSDirectory.open(dir);
            IndexWriter w = null;
            try {
                w = new IndexWriter(
                        directory,
                        new IndexWriterConfig()
                                .setCodec(codec)
                                .setCommitOnClose(false)
                                .setRAMBufferSizeMB(32));
                searchers = new SearcherManager(w, null);
            } catch (IOException | RuntimeException e) {
                if (w != null) {
                    w.close();
                }
                directory.close();
                throw e;
            }
            writer = w;
        }

        void close() throws IOException {
            try {
                searchers.close();
                writer.rollback(); // every write committed already
            } finally {
                directory.close();
            }
        }
    }

    private synchronized Codec codec() {
        if (codec == null) {
            codec = VectorSearch.codec(16, 100, true);
        }
        return codec;
    }

    private Path dir(String spaceId) {
        if (!SAFE_NAME.matcher(spaceId).matches()) {
            throw new IllegalArgumentException("not a workspace id: " + spaceId);
        }
        return root.resolve(spaceId);
    }

    boolean exists(String spaceId) {
        return open.containsKey(spaceId) || Files.isDirectory(dir(spaceId));
    }

    private Index index(String spaceId) throws IOException {
        if (closed) {
            throw new IOException("search is stopping");
        }
        try {
            return open.computeIfAbsent(
                    spaceId,
                    id -> VectorSearch.withBundleLoader(() -> {
                        Path d = Files.createDirectories(dir(id));
                        return new Index(d, codec());
                    }));
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Writes (replacing by key) and deletes, then commits: durable when this returns. */
    void write(String spaceId, List<Doc> docs, List<String> deletedKeys) throws IOException {
        if (docs.isEmpty() && deletedKeys.isEmpty()) {
            return;
        }
        Index index = index(spaceId);
        synchronized (index) {
            for (String key : deletedKeys) {
                index.writer.deleteDocuments(new Term(KEY, key));
            }
            for (Doc d : docs) {
                Document doc = new Document();
                doc.add(new StringField(KEY, d.key(), Field.Store.YES));
                doc.add(new StringField(KIND, d.kind(), Field.Store.NO));
                doc.add(new KnnFloatVectorField(VECTOR, d.vector(), VectorSimilarityFunction.COSINE));
                index.writer.updateDocument(new Term(KEY, d.key()), doc);
            }
            index.writer.commit();
            index.searchers.maybeRefreshBlocking();
        }
        scheduleMerge(index);
    }

    /** Deletes every document whose kind (a repository index's: its path) is one of {@code kinds}, then commits. */
    void deleteKinds(String spaceId, List<String> kinds) throws IOException {
        if (kinds.isEmpty()) {
            return;
        }
        Index index = index(spaceId);
        synchronized (index) {
            for (String kind : kinds) {
                index.writer.deleteDocuments(new Term(KIND, kind));
            }
            index.writer.commit();
            index.searchers.maybeRefreshBlocking();
        }
        scheduleMerge(index);
    }

    private void scheduleMerge(Index index) {
        if (mergeDelayMillis <= 0 || closed) {
            return;
        }
        synchronized (index) {
            if (index.merge != null) {
                index.merge.cancel(false); // a merge already running finishes; the next one follows it
            }
            // under a steady stream of writes, waiting four times the last merge's length keeps merging to a fifth
            // of one core (as vectorize's indexes do)
            long delay = TimeUnit.MILLISECONDS.toNanos(mergeDelayMillis);
            if (index.lastMergeNanos > 0) {
                delay = Math.max(delay, index.lastMergeEnd + 4 * index.lastMergeNanos - System.nanoTime());
            }
            try {
                index.merge = merges.schedule(() -> merge(index), delay, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                // stopping: the index stays searchable as it is, and is merged after a later write
            }
        }
    }

    private void merge(Index index) {
        try {
            IndexSearcher s = index.searchers.acquire();
            int segments;
            try {
                segments = s.getIndexReader().leaves().size();
            } finally {
                index.searchers.release(s);
            }
            if (closed || segments <= 1) {
                return;
            }
            long start = System.nanoTime();
            // Lucene reuses the largest segment's graph when it has no deletions and inserts only the others' vectors
            index.writer.forceMerge(1);
            index.writer.commit();
            index.searchers.maybeRefreshBlocking();
            synchronized (index) {
                index.lastMergeEnd = System.nanoTime();
                index.lastMergeNanos = index.lastMergeEnd - start;
            }
        } catch (IOException | RuntimeException e) {
            // closed meanwhile (the rollback aborts the merge) or the disk failed: the committed segments stay
            // searchable, and the next write schedules another merge
        }
    }

    /** Segments of the workspace's index (one once merged), 0 when it has none. */
    int segments(String spaceId) throws IOException {
        if (!exists(spaceId)) {
            return 0;
        }
        Index index = index(spaceId);
        IndexSearcher s = index.searchers.acquire();
        try {
            return s.getIndexReader().leaves().size();
        } finally {
            index.searchers.release(s);
        }
    }

    /** Documents in the workspace's index. */
    int count(String spaceId) throws IOException {
        if (!exists(spaceId)) {
            return 0;
        }
        Index index = index(spaceId);
        IndexSearcher s = index.searchers.acquire();
        try {
            return s.getIndexReader().numDocs();
        } finally {
            index.searchers.release(s);
        }
    }

    /** The {@code k} nearest documents of {@code kinds} (all kinds when empty), best first. */
    List<Hit> nearest(String spaceId, float[] query, Set<String> kinds, int k) throws IOException {
        Index index = index(spaceId);
        Query filter = null;
        if (!kinds.isEmpty()) {
            BooleanQuery.Builder b = new BooleanQuery.Builder();
            for (String kind : kinds) {
                b.add(new TermQuery(new Term(KIND, kind)), BooleanClause.Occur.SHOULD);
            }
            filter = b.build();
        }
        int ef = Math.max(100, k * EF_PER_RESULT);
        IndexSearcher s = index.searchers.acquire();
        try {
            if (s.getIndexReader().numDocs() == 0) {
                return List.of();
            }
            if (s.getIndexReader().numDocs() <= exactUpTo) {
                return exact(s, query, filter, k);
            }
            TopDocs top = s.search(new ScanOrWalkKnnQuery(VECTOR, query, ef, filter, true, index.histories, paths), ef);
            ScoreDoc[] hits = VectorSearch.exact(s, VECTOR, VectorSimilarityFunction.COSINE, query, top.scoreDocs);
            StoredFields stored = s.storedFields();
            List<Hit> out = new ArrayList<>(Math.min(k, hits.length));
            for (ScoreDoc d : hits) {
                if (out.size() == k) {
                    break;
                }
                out.add(new Hit(stored.document(d.doc).get(KEY), 2.0 * d.score - 1.0));
            }
            return out;
        } finally {
            index.searchers.release(s);
        }
    }

    /** Every live document (of the filter) scored on its float vector: the true top {@code k}. */
    private static List<Hit> exact(IndexSearcher s, float[] query, Query filter, int k) throws IOException {
        record Scored(int doc, float score) {}
        PriorityQueue<Scored> best = new PriorityQueue<>(Comparator.comparingDouble(Scored::score));
        Weight accept = filter == null ? null : s.createWeight(s.rewrite(filter), ScoreMode.COMPLETE_NO_SCORES, 1f);
        for (LeafReaderContext leaf : s.getIndexReader().leaves()) {
            FloatVectorValues values = leaf.reader().getFloatVectorValues(VECTOR);
            if (values == null) {
                continue;
            }
            Bits live = leaf.reader().getLiveDocs();
            DocIdSetIterator accepted = null;
            if (accept != null) {
                Scorer scorer = accept.scorer(leaf);
                if (scorer == null) {
                    continue;
                }
                accepted = scorer.iterator();
            }
            for (int doc = values.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = values.nextDoc()) {
                if (live != null && !live.get(doc)) {
                    continue;
                }
                if (accepted != null && (accepted.docID() > doc || accepted.advance(doc) != doc)) {
                    continue;
                }
                float score = VectorSimilarityFunction.COSINE.compare(query, values.vectorValue());
                if (best.size() < k) {
                    best.add(new Scored(leaf.docBase + doc, score));
                } else if (score > best.peek().score()) {
                    best.poll();
                    best.add(new Scored(leaf.docBase + doc, score));
                }
            }
        }
        List<Scored> order = new ArrayList<>(best);
        order.sort(Comparator.comparingDouble(Scored::score).reversed().thenComparingInt(Scored::doc));
        StoredFields stored = s.storedFields();
        List<Hit> out = new ArrayList<>(order.size());
        for (Scored d : order) {
            out.add(new Hit(stored.document(d.doc()).get(KEY), 2.0 * d.score() - 1.0));
        }
        return out;
    }

    /** Closes the workspace's index and deletes its files (it is rebuilt from PostgreSQL). */
    void drop(String spaceId) throws IOException {
        Index index = open.remove(spaceId);
        if (index != null) {
            synchronized (index) {
                if (index.merge != null) {
                    index.merge.cancel(false);
                }
                index.close();
            }
        }
        Path d = dir(spaceId);
        if (Files.exists(d)) {
            try (var files = Files.walk(d)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

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
                    // the rest matter more; every write was committed
                }
            }
        }
        try {
            merges.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static float[] decode(byte[] bytes) {
        java.nio.FloatBuffer b = java.nio.ByteBuffer.wrap(bytes)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .asFloatBuffer();
        float[] v = new float[b.remaining()];
        b.get(v);
        return v;
    }

    static byte[] encode(float[] v) {
        java.nio.ByteBuffer b =
                java.nio.ByteBuffer.allocate(v.length * Float.BYTES).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(v);
        return b.array();
    }

    static boolean zero(float[] v) {
        return Arrays.equals(v, new float[v.length]);
    }
}
