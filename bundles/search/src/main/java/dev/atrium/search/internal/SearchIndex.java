package dev.atrium.search.internal;

import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import dev.atrium.kernel.api.WorkspaceImportListener;
import dev.atrium.search.api.IndexSource;
import dev.atrium.search.api.IndexSource.Item;
import java.io.IOException;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The index: every {@link IndexSource}'s items followed from a cursor kept in PostgreSQL, stored with their text, a
 * hash and their embedding in {@code search_items}, and each workspace's embedded items in its Lucene index.
 * <p>
 * One thread reads the sources. Each pass starts {@link #LAG} before the stored cursor: a transaction that wrote an
 * item earlier but committed after a later one is read on the next pass, and an item seen again with the same text
 * costs a hash comparison, not an embedding. A page of items is stored together with the cursor in one transaction,
 * then written to Lucene: a crash between the two leaves Lucene short of PostgreSQL, which {@link #reconcile} notices
 * (another document count) and mends by rebuilding the workspace's index from PostgreSQL. Items stored without an
 * embedding (no embeddings API, or it failed) are embedded by later passes.
 */
@Component(service = {SearchIndex.class, WorkspaceImportListener.class})
public class SearchIndex implements WorkspaceImportListener {

    static final Duration LAG = Duration.ofSeconds(5);
    private static final int PAGE = 200;
    private static final Logger LOG = LoggerFactory.getLogger(SearchIndex.class);

    private final Sql sql;
    private final SearchSettings settings;
    private final Embeddings embeddings;
    private final SpaceIndexes lucene;
    private final List<IndexSource> sources = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService worker;
    private final ScheduledFuture<?> passes;
    /** Bumped on every change of a workspace's index: a cached answer of an older version is not used. */
    private final Map<String, AtomicLong> versions = new ConcurrentHashMap<>();
    /** Workspaces whose Lucene index was compared with PostgreSQL since the start. */
    private final Set<String> reconciled = ConcurrentHashMap.newKeySet();

    private final AtomicLong embeddedTexts = new AtomicLong();
    private volatile String lastError = "";

    @Activate
    public SearchIndex(
            @Reference DataSource dataSource,
            @Reference SchemaMigrations migrations,
            @Reference SearchSettings settings,
            BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
        this.settings = settings;
        this.embeddings = settings.embeddingsBase() == null
                ? null
                : new Embeddings(settings.embeddingsBase(), settings.embeddingsApiKey(), settings.embeddingsModel());
        this.lucene = new SpaceIndexes(settings.indexes());
        this.worker = Executors.newSingleThreadScheduledExecutor(NamedThreads.factory("search-indexer"));
        long every = settings.poll().toMillis();
        passes = worker.scheduleWithFixedDelay(this::pass, every, every, TimeUnit.MILLISECONDS);
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addSource(IndexSource source) {
        sources.add(source);
    }

    void removeSource(IndexSource source) {
        sources.remove(source);
    }

    @Deactivate
    void stop() throws InterruptedException {
        passes.cancel(true);
        worker.shutdownNow();
        worker.awaitTermination(30, TimeUnit.SECONDS);
        lucene.close();
    }

    boolean vectorsConfigured() {
        return embeddings != null;
    }

    String model() {
        return embeddings == null ? null : embeddings.model();
    }

    long version(String spaceId) {
        return versions.computeIfAbsent(spaceId, s -> new AtomicLong()).get();
    }

    private void changed(String spaceId) {
        versions.computeIfAbsent(spaceId, s -> new AtomicLong()).incrementAndGet();
    }

    Optional<IndexSource> source(String kind) {
        return sources.stream().filter(s -> s.kind().equals(kind)).findFirst();
    }

    List<IndexSource> sources() {
        return List.copyOf(sources);
    }

    /** Texts sent to the embeddings API since the start. */
    long embeddedTexts() {
        return embeddedTexts.get();
    }

    String lastError() {
        return lastError;
    }

    /** One pass of the indexer, also run at once by {@code index/file}. */
    synchronized void pass() {
        try {
            for (IndexSource source : List.copyOf(sources)) {
                follow(source);
            }
            embedPending(null, 512);
            lastError = "";
        } catch (RuntimeException | IOException e) {
            lastError = e.getMessage() == null ? e.toString() : e.getMessage();
            LOG.warn("search: an index pass failed; the next one goes on from the stored cursor: {}", lastError);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * An imported workspace's content keeps its archived times, which sort before the cursors: it is read by
     * workspace instead, on the indexer's thread.
     */
    @Override
    public void imported(SpaceRef space) {
        worker.execute(() -> indexSpace(space.id()));
    }

    /** Stores every item of one workspace (leaving the cursors where they are), then embeds what it can. */
    synchronized void indexSpace(String spaceId) {
        try {
            for (IndexSource source : List.copyOf(sources)) {
                String afterId = "";
                while (!Thread.currentThread().isInterrupted()) {
                    List<Item> page = source.inSpace(spaceId, afterId, PAGE);
                    if (page.isEmpty()) {
                        break;
                    }
                    store(source.kind(), page, null);
                    afterId = page.get(page.size() - 1).id();
                    if (page.size() < PAGE) {
                        break;
                    }
                }
            }
            embedPending(null, 512);
        } catch (RuntimeException | IOException e) {
            lastError = e.getMessage() == null ? e.toString() : e.getMessage();
            LOG.warn("search: indexing the imported workspace {} failed: {}", spaceId, lastError);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private record Cursor(Instant since, String afterId) {}

    private void follow(IndexSource source) throws IOException, InterruptedException {
        String kind = source.kind();
        Cursor stored = sql.one(
                        "SELECT since, after_id FROM search_cursors WHERE kind = ?",
                        rs -> new Cursor(Sql.instant(rs, "since"), rs.getString("after_id")),
                        kind)
                .orElse(new Cursor(Instant.EPOCH, ""));
        Cursor from = new Cursor(stored.since().minus(LAG), "");
        while (!Thread.currentThread().isInterrupted()) {
            List<Item> page = source.changes(from.since(), from.afterId(), PAGE);
            if (page.isEmpty()) {
                return;
            }
            Item last = page.get(page.size() - 1);
            Cursor next = new Cursor(last.changedAt(), last.id());
            store(kind, page, later(stored, next));
            if (page.size() < PAGE) {
                return;
            }
            from = next;
        }
    }

    private static Cursor later(Cursor a, Cursor b) {
        int c = a.since().compareTo(b.since());
        return c > 0 || (c == 0 && a.afterId().compareTo(b.afterId()) >= 0) ? a : b;
    }

    /**
     * Stores the items whose text changed (embedding them first when it can) with the cursor (none: the cursor stays),
     * then Lucene.
     */
    private void store(String kind, List<Item> page, Cursor cursor) throws IOException, InterruptedException {
        Map<String, String> hashes = new HashMap<>();
        List<String> ids = page.stream().map(Item::id).toList();
        sql.list(
                        "SELECT item_id, hash FROM search_items WHERE kind = ? AND item_id = ANY (?)",
                        rs -> Map.entry(rs.getString(1), rs.getString(2)),
                        kind,
                        ids.toArray(String[]::new))
                .forEach(e -> hashes.put(e.getKey(), e.getValue()));
        List<Item> changed = new ArrayList<>();
        for (Item item : page) {
            if (!hash(item).equals(hashes.get(item.id()))) {
                changed.add(item);
            }
        }
        List<float[]> vectors =
                embedOrNull(changed.stream().map(SearchIndex::embeddedText).toList());
        sql.tx(c -> {
            try (PreparedStatement up = c.prepareStatement(
                    "INSERT INTO search_items (kind, item_id, space_id, parent_id, title, body, hash, embedding,"
                            + " changed_at, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, now())"
                            + " ON CONFLICT (kind, item_id) DO UPDATE SET space_id = excluded.space_id,"
                            + " parent_id = excluded.parent_id, title = excluded.title, body = excluded.body,"
                            + " hash = excluded.hash, embedding = excluded.embedding,"
                            + " changed_at = excluded.changed_at, indexed_at = now()")) {
                for (int i = 0; i < changed.size(); i++) {
                    Item item = changed.get(i);
                    up.setString(1, kind);
                    up.setString(2, item.id());
                    up.setString(3, item.spaceId());
                    up.setString(4, item.parentId());
                    up.setString(5, clean(item.title()));
                    up.setString(6, clean(item.text()));
                    up.setString(7, hash(item));
                    up.setBytes(8, vectors == null ? null : SpaceIndexes.encode(vectors.get(i)));
                    up.setTimestamp(9, Timestamp.from(item.changedAt()));
                    up.addBatch();
                }
                up.executeBatch();
            }
            if (cursor != null) {
                Sql.update(
                        c,
                        "INSERT INTO search_cursors (kind, since, after_id) VALUES (?, ?, ?) ON CONFLICT (kind)"
                                + " DO UPDATE SET since = excluded.since, after_id = excluded.after_id",
                        kind,
                        Timestamp.from(cursor.since()),
                        cursor.afterId());
            }
            return null;
        });
        Map<String, List<SpaceIndexes.Doc>> docs = new LinkedHashMap<>();
        Map<String, List<String>> removed = new LinkedHashMap<>();
        for (int i = 0; i < changed.size(); i++) {
            Item item = changed.get(i);
            String key = kind + ":" + item.id();
            if (vectors != null) {
                docs.computeIfAbsent(item.spaceId(), s -> new ArrayList<>())
                        .add(new SpaceIndexes.Doc(key, kind, vectors.get(i)));
            } else {
                removed.computeIfAbsent(item.spaceId(), s -> new ArrayList<>()).add(key); // its old vector is stale
            }
            changed(item.spaceId());
        }
        if (embeddings == null) {
            return; // no vectors anywhere: no Lucene index to keep
        }
        for (String space : union(docs.keySet(), removed.keySet())) {
            writeLucene(space, docs.getOrDefault(space, List.of()), removed.getOrDefault(space, List.of()));
        }
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new java.util.LinkedHashSet<>(a);
        all.addAll(b);
        return all;
    }

    private void writeLucene(String spaceId, List<SpaceIndexes.Doc> docs, List<String> deleted) throws IOException {
        if (!reconciled.contains(spaceId)) {
            reconcile(spaceId); // rebuilds from PostgreSQL, which holds these writes already
            return;
        }
        lucene.write(spaceId, docs, deleted);
    }

    /** Embeds up to {@code max} stored items without an embedding (of one workspace, or of all). */
    int embedPending(String spaceId, int max) throws IOException, InterruptedException {
        if (embeddings == null) {
            return 0;
        }
        int done = 0;
        while (done < max) {
            record Pending(String kind, String id, String spaceId, String text) {}
            List<Pending> pending = sql.list(
                    "SELECT kind, item_id, space_id, coalesce(title, '') || E'\\n' || body AS text FROM search_items"
                            + " WHERE embedding IS NULL AND (?::text IS NULL OR space_id = ?) LIMIT ?",
                    rs -> new Pending(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)),
                    spaceId,
                    spaceId,
                    Math.min(settings.embeddingsBatch(), max - done));
            if (pending.isEmpty()) {
                break;
            }
            List<float[]> vectors = embed(pending.stream().map(Pending::text).toList());
            Map<String, List<SpaceIndexes.Doc>> docs = new LinkedHashMap<>();
            sql.tx(c -> {
                for (int i = 0; i < pending.size(); i++) {
                    Pending p = pending.get(i);
                    Sql.update(
                            c,
                            "UPDATE search_items SET embedding = ? WHERE kind = ? AND item_id = ?",
                            SpaceIndexes.encode(vectors.get(i)),
                            p.kind(),
                            p.id());
                }
                return null;
            });
            for (int i = 0; i < pending.size(); i++) {
                Pending p = pending.get(i);
                docs.computeIfAbsent(p.spaceId(), s -> new ArrayList<>())
                        .add(new SpaceIndexes.Doc(p.kind() + ":" + p.id(), p.kind(), vectors.get(i)));
                changed(p.spaceId());
            }
            for (var e : docs.entrySet()) {
                writeLucene(e.getKey(), e.getValue(), List.of());
            }
            done += pending.size();
        }
        return done;
    }

    private List<float[]> embedOrNull(List<String> texts) throws InterruptedException {
        if (embeddings == null || texts.isEmpty()) {
            return null;
        }
        try {
            return embed(texts);
        } catch (IOException e) {
            lastError = "embeddings: " + e.getMessage();
            LOG.warn("search: {}; the items are kept for keyword search and embedded later", lastError);
            return null;
        }
    }

    List<float[]> embed(List<String> texts) throws IOException, InterruptedException {
        if (embeddings == null) {
            throw new IOException("no embeddings API is configured (ATRIUM_EMBEDDINGS_BASE_URL)");
        }
        List<float[]> out = new ArrayList<>(texts.size());
        int batch = settings.embeddingsBatch();
        for (int i = 0; i < texts.size(); i += batch) {
            List<String> part = texts.subList(i, Math.min(texts.size(), i + batch));
            out.addAll(embeddings.embed(part));
            embeddedTexts.addAndGet(part.size());
        }
        return out;
    }

    /**
     * Makes the workspace's Lucene index hold exactly PostgreSQL's embedded items: kept when the counts agree,
     * else built again from PostgreSQL.
     */
    void reconcile(String spaceId) throws IOException {
        long stored =
                sql.count("SELECT count(*) FROM search_items WHERE space_id = ? AND embedding IS NOT NULL", spaceId);
        if (stored == 0 && !lucene.exists(spaceId)) {
            reconciled.add(spaceId); // nothing embedded yet: no index to make
            return;
        }
        if (lucene.exists(spaceId) && lucene.count(spaceId) == stored) {
            reconciled.add(spaceId);
            return;
        }
        rebuild(spaceId);
    }

    /** Drops the workspace's Lucene index and writes it again from PostgreSQL's embeddings. */
    synchronized int rebuild(String spaceId) throws IOException {
        lucene.drop(spaceId);
        int[] n = {0};
        String[] after = {""};
        while (true) {
            List<SpaceIndexes.Doc> docs = sql.list(
                    "SELECT kind, item_id, embedding FROM search_items WHERE space_id = ? AND embedding IS NOT NULL"
                            + " AND kind || ':' || item_id > ? ORDER BY kind || ':' || item_id LIMIT 1000",
                    rs -> new SpaceIndexes.Doc(
                            rs.getString(1) + ":" + rs.getString(2),
                            rs.getString(1),
                            SpaceIndexes.decode(rs.getBytes(3))),
                    spaceId,
                    after[0]);
            if (docs.isEmpty()) {
                break;
            }
            lucene.write(spaceId, docs, List.of());
            n[0] += docs.size();
            after[0] = docs.get(docs.size() - 1).key();
        }
        reconciled.add(spaceId);
        changed(spaceId);
        return n[0];
    }

    /** The workspace's Lucene index, compared with PostgreSQL once per start before it answers. */
    SpaceIndexes lucene(String spaceId) throws IOException {
        if (!reconciled.contains(spaceId)) {
            synchronized (this) {
                if (!reconciled.contains(spaceId)) {
                    reconcile(spaceId);
                }
            }
        }
        return lucene;
    }

    /** Removes items their source no longer has (found when an answer asked for them). */
    void forget(String spaceId, String kind, Collection<String> ids) {
        if (ids.isEmpty()) {
            return;
        }
        sql.update(
                "DELETE FROM search_items WHERE space_id = ? AND kind = ? AND item_id = ANY (?)",
                spaceId,
                kind,
                ids.toArray(String[]::new));
        try {
            if (reconciled.contains(spaceId)) {
                lucene.write(
                        spaceId,
                        List.of(),
                        ids.stream().map(id -> kind + ":" + id).toList());
            }
        } catch (IOException e) {
            reconciled.remove(spaceId); // compared again (and rebuilt) before its next answer
        }
        changed(spaceId);
    }

    Sql sql() {
        return sql;
    }

    static String embeddedText(Item item) {
        String title = item.title() == null ? "" : item.title();
        return (title.isEmpty() ? "" : title + "\n") + clean(item.text());
    }

    static String hash(Item item) {
        return Digests.sha256Hex((item.title() == null ? "" : item.title()) + "\u0000" + clean(item.text()) + "\u0000"
                + (item.parentId() == null ? "" : item.parentId()));
    }

    /** PostgreSQL text takes no NUL. */
    static String clean(String text) {
        return text == null ? null : text.replace('\u0000', ' ');
    }
}
