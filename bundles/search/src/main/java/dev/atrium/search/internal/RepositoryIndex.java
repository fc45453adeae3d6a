package dev.atrium.search.internal;

import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.Sql;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryEvents;
import dev.atrium.repos.api.RepositoryRegistry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectLoader;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.eclipse.jgit.treewalk.TreeWalk;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventConstants;
import org.osgi.service.event.EventHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Semantic search over a repository's default branch. {@code POST semantic-index} makes a repository indexed; from
 * then on every push (heard on EventAdmin, and at start for pushes made while search was stopped) indexes it again:
 * files whose blob id is unchanged keep their pieces and embeddings, so a push that changes 3 files of 2,000 embeds
 * the pieces of those 3. Pieces ({@link SourceChunks}) are kept in PostgreSQL with their embeddings; the vectors are
 * also in a Lucene index per repository, rebuilt from PostgreSQL when it is lost or short. One thread indexes.
 */
@Component(
        service = {RepositoryIndex.class, EventHandler.class},
        property = {
            EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.PUSHED,
            EventConstants.EVENT_TOPIC + "=" + RepositoryEvents.DELETED
        })
public class RepositoryIndex implements EventHandler {

    static final long MAX_FILE_BYTES = 256 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(RepositoryIndex.class);

    private final Sql sql;
    private final SearchIndex index;
    private final RepositoryRegistry repositories;
    private final SpaceIndexes lucene;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(NamedThreads.factory("search-repos"));
    private final Map<String, CompletableFuture<State>> queued = new ConcurrentHashMap<>();
    private final Set<String> reconciled = ConcurrentHashMap.newKeySet();

    @Activate
    public RepositoryIndex(
            @Reference SearchIndex index,
            @Reference RepositoryRegistry repositories,
            @Reference SearchSettings settings) {
        this.index = index;
        this.sql = index.sql();
        this.repositories = repositories;
        this.lucene = new SpaceIndexes(settings.indexes().resolveSibling("repos"));
        // pushes made while search was not running
        for (String repoId : sql.list("SELECT repo_id FROM search_repo_state", rs -> rs.getString(1))) {
            var unused = enqueue(repoId); // its failure is logged and kept in the state's error
        }
    }

    @Deactivate
    void stop() throws InterruptedException {
        worker.shutdownNow();
        worker.awaitTermination(30, TimeUnit.SECONDS);
        lucene.close();
    }

    /** What a repository's index holds. */
    record State(String repoId, String branch, String commit, int files, int chunks, Instant indexedAt, String error) {}

    Optional<State> state(String repoId) {
        return sql.one(
                "SELECT repo_id, branch, commit, files, chunks, indexed_at, error FROM search_repo_state"
                        + " WHERE repo_id = ?",
                rs -> new State(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getString(3),
                        rs.getInt(4),
                        rs.getInt(5),
                        Sql.instant(rs, "indexed_at"),
                        rs.getString(7)),
                repoId);
    }

    @Override
    public void handleEvent(Event event) {
        String repoId = String.valueOf(event.getProperty(RepositoryEvents.REPO_ID));
        if (RepositoryEvents.DELETED.equals(event.getTopic())) {
            worker.execute(() -> forget(repoId));
        } else if (state(repoId).isPresent()) {
            var unused = enqueue(repoId); // its failure is logged and kept in the state's error
        }
    }

    /** Marks the repository indexed (from now on, and on every push) and indexes it on the worker. */
    CompletableFuture<State> request(Repository repo) {
        sql.update(
                "INSERT INTO search_repo_state (repo_id, space_id, branch) VALUES (?, ?, ?) ON CONFLICT (repo_id)"
                        + " DO NOTHING",
                repo.id(),
                repo.spaceId(),
                repo.defaultBranch());
        return enqueue(repo.id());
    }

    private synchronized CompletableFuture<State> enqueue(String id) {
        CompletableFuture<State> waiting = queued.get(id);
        if (waiting != null) {
            return waiting; // not started yet: it will see this push too
        }
        CompletableFuture<State> done = new CompletableFuture<>();
        queued.put(id, done);
        worker.execute(() -> {
            queued.remove(id, done);
            try {
                done.complete(indexNow(id));
            } catch (RuntimeException | IOException e) {
                String why = e.getMessage() == null ? e.toString() : e.getMessage();
                LOG.warn("search: indexing repository {} failed: {}", id, why);
                sql.update("UPDATE search_repo_state SET error = ? WHERE repo_id = ?", why, id);
                done.completeExceptionally(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                done.completeExceptionally(e);
            }
        });
        return done;
    }

    private void forget(String repoId) {
        sql.update("DELETE FROM search_repo_chunks WHERE repo_id = ?", repoId);
        sql.update("DELETE FROM search_repo_state WHERE repo_id = ?", repoId);
        try {
            lucene.drop(repoId);
        } catch (IOException e) {
            LOG.warn("search: the index of deleted repository {} stays on disk: {}", repoId, e.getMessage());
        }
        reconciled.remove(repoId);
    }

    private record Piece(String path, String blob, int chunk, SourceChunks.Chunk text) {}

    private State indexNow(String repoId) throws IOException, InterruptedException {
        Optional<Repository> found = repositories.byId(repoId);
        if (found.isEmpty()) {
            forget(repoId);
            return null;
        }
        Repository repo = found.get();
        String branch = repo.defaultBranch();
        Map<String, String> kept = new HashMap<>();
        for (var row : sql.list(
                "SELECT DISTINCT path, blob FROM search_repo_chunks WHERE repo_id = ?",
                rs -> Map.entry(rs.getString(1), rs.getString(2)),
                repoId)) {
            kept.put(row.getKey(), row.getValue());
        }
        String commit;
        reconcile(repoId);
        // a page of files at a time, stored with their embeddings and written to Lucene as the walk goes: a push of
        // many files (near-identical ones cost almost nothing in a pack) never has all its text in memory at once
        List<Piece> page = new ArrayList<>();
        String pagePath = null;
        int changedFiles = 0;
        long pieces = 0;
        Set<String> present = new HashSet<>();
        try (org.eclipse.jgit.lib.Repository git = new FileRepositoryBuilder()
                        .setGitDir(repositories.directory(repo).toFile())
                        .setMustExist(true)
                        .build();
                ObjectReader reader = git.newObjectReader();
                RevWalk walk = new RevWalk(reader)) {
            ObjectId head = git.resolve("refs/heads/" + branch);
            if (head == null) {
                commit = null; // an empty repository: nothing to index yet
            } else {
                commit = head.name();
                try (TreeWalk tree = new TreeWalk(reader)) {
                    tree.addTree(walk.parseCommit(head).getTree());
                    tree.setRecursive(true);
                    while (tree.next()) {
                        if ((tree.getRawMode(0) & 0170000) != 0100000) {
                            continue; // regular files only: no links, no submodules
                        }
                        String path = tree.getPathString();
                        String blob = tree.getObjectId(0).name();
                        present.add(path);
                        if (blob.equals(kept.get(path))) {
                            continue;
                        }
                        String text = text(reader, tree.getObjectId(0));
                        if (text == null) {
                            continue;
                        }
                        List<SourceChunks.Chunk> chunks = SourceChunks.of(path, text);
                        if (chunks.isEmpty()) {
                            present.remove(path);
                            continue;
                        }
                        if (page.size() >= 256 && !path.equals(pagePath)) {
                            store(repoId, page);
                            page.clear();
                        }
                        for (int i = 0; i < chunks.size(); i++) {
                            page.add(new Piece(path, blob, i, chunks.get(i)));
                        }
                        pagePath = path;
                        changedFiles++;
                        pieces += chunks.size();
                    }
                }
            }
        }
        store(repoId, page);
        List<String> gone =
                kept.keySet().stream().filter(p -> !present.contains(p)).toList();
        if (!gone.isEmpty()) {
            sql.update(
                    "DELETE FROM search_repo_chunks WHERE repo_id = ? AND path = ANY (?)",
                    repoId,
                    gone.toArray(String[]::new));
            lucene.deleteKinds(repoId, gone);
        }
        long files = sql.count("SELECT count(DISTINCT path) FROM search_repo_chunks WHERE repo_id = ?", repoId);
        long chunks = sql.count("SELECT count(*) FROM search_repo_chunks WHERE repo_id = ?", repoId);
        sql.update(
                "UPDATE search_repo_state SET branch = ?, commit = ?, files = ?, chunks = ?, indexed_at = now(),"
                        + " error = NULL WHERE repo_id = ?",
                branch,
                commit,
                (int) files,
                (int) chunks,
                repoId);
        LOG.info(
                "search: repository {} at {}: {} files changed ({} pieces embedded), {} gone",
                repoId,
                commit,
                changedFiles,
                pieces,
                gone.size());
        return state(repoId).orElseThrow();
    }

    private void store(String repoId, List<Piece> page) throws IOException, InterruptedException {
        if (page.isEmpty()) {
            return;
        }
        List<float[]> vectors =
                index.embed(page.stream().map(RepositoryIndex::embedded).toList());
        List<String> paths = page.stream().map(Piece::path).distinct().toList();
        sql.tx(c -> {
            Sql.update(
                    c,
                    "DELETE FROM search_repo_chunks WHERE repo_id = ? AND path = ANY (?)",
                    repoId,
                    paths.toArray(String[]::new));
            try (PreparedStatement in = c.prepareStatement(
                    "INSERT INTO search_repo_chunks (repo_id, path, blob, chunk, start_line, end_line, symbol, body,"
                            + " embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
                for (int i = 0; i < page.size(); i++) {
                    Piece p = page.get(i);
                    in.setString(1, repoId);
                    in.setString(2, p.path());
                    in.setString(3, p.blob());
                    in.setInt(4, p.chunk());
                    in.setInt(5, p.text().startLine());
                    in.setInt(6, p.text().endLine());
                    in.setString(7, p.text().symbol());
                    in.setString(8, SearchIndex.clean(p.text().text()));
                    in.setBytes(9, SpaceIndexes.encode(vectors.get(i)));
                    in.addBatch();
                }
                in.executeBatch();
            }
            return null;
        });
        lucene.deleteKinds(repoId, paths);
        List<SpaceIndexes.Doc> docs = new ArrayList<>();
        for (int i = 0; i < page.size(); i++) {
            Piece p = page.get(i);
            docs.add(new SpaceIndexes.Doc(p.path() + "#" + p.chunk(), p.path(), vectors.get(i)));
        }
        lucene.write(repoId, docs, List.of());
    }

    static String embedded(Piece p) {
        return p.path() + (p.text().symbol() == null ? "" : " " + p.text().symbol()) + "\n"
                + p.text().text();
    }

    /** The blob's text, or null when it is too large, binary or not UTF-8. */
    private static String text(ObjectReader reader, ObjectId blob) throws IOException {
        ObjectLoader loader = reader.open(blob);
        if (loader.getSize() > MAX_FILE_BYTES || loader.getSize() == 0) {
            return null;
        }
        byte[] bytes = loader.getBytes();
        for (int i = 0; i < Math.min(bytes.length, 8000); i++) {
            if (bytes[i] == 0) {
                return null;
            }
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** The Lucene index holds PostgreSQL's pieces: kept when the counts agree, else written again from there. */
    private synchronized void reconcile(String repoId) throws IOException {
        if (reconciled.contains(repoId)) {
            return;
        }
        long stored = sql.count("SELECT count(*) FROM search_repo_chunks WHERE repo_id = ?", repoId);
        if (!lucene.exists(repoId) || lucene.count(repoId) != stored) {
            lucene.drop(repoId);
            String[] after = {"", "-1"};
            while (true) {
                record Row(String path, int chunk, byte[] embedding) {}
                List<Row> rows = sql.list(
                        "SELECT path, chunk, embedding FROM search_repo_chunks WHERE repo_id = ?"
                                + " AND (path, chunk) > (?, ?) ORDER BY path, chunk LIMIT 1000",
                        rs -> new Row(rs.getString(1), rs.getInt(2), rs.getBytes(3)),
                        repoId,
                        after[0],
                        Integer.parseInt(after[1]));
                if (rows.isEmpty()) {
                    break;
                }
                lucene.write(
                        repoId,
                        rows.stream()
                                .map(r -> new SpaceIndexes.Doc(
                                        r.path() + "#" + r.chunk(), r.path(), SpaceIndexes.decode(r.embedding())))
                                .toList(),
                        List.of());
                Row last = rows.get(rows.size() - 1);
                after[0] = last.path();
                after[1] = Integer.toString(last.chunk());
            }
        }
        reconciled.add(repoId);
    }

    /** A piece found: its file, line range, the declaration it starts with, its text and similarity. */
    record Found(String path, int startLine, int endLine, String symbol, String text, double similarity) {}

    List<Found> search(String repoId, String query, int limit) throws IOException, InterruptedException {
        reconcile(repoId);
        float[] q = index.embed(List.of(query)).get(0);
        List<SpaceIndexes.Hit> hits = lucene.nearest(repoId, q, Set.of(), limit);
        Map<String, Double> byKey = new LinkedHashMap<>();
        hits.forEach(h -> byKey.put(h.key(), h.similarity()));
        List<Found> out = new ArrayList<>();
        Map<String, Found> rows = new HashMap<>();
        sql.list(
                "SELECT path, chunk, start_line, end_line, symbol, body FROM search_repo_chunks WHERE repo_id = ?"
                        + " AND path || '#' || chunk = ANY (?)",
                rs -> {
                    String key = rs.getString(1) + "#" + rs.getInt(2);
                    Found found = new Found(
                            rs.getString(1),
                            rs.getInt(3),
                            rs.getInt(4),
                            rs.getString(5),
                            rs.getString(6),
                            byKey.getOrDefault(key, 0.0));
                    rows.put(key, found);
                    return found;
                },
                repoId,
                byKey.keySet().toArray(String[]::new));
        for (String key : byKey.keySet()) {
            Found f = rows.get(key);
            if (f != null) {
                out.add(f);
            }
        }
        return out;
    }
}
