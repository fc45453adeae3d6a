package dev.atrium.search.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/** The JSON the search routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class SearchJson {

    private SearchJson() {}

    /** A search: the text (1 to 1,000 characters) and how many results (1 to 50, default 10). */
    record Query(String query, Integer limit) {}

    /**
     * A result: {@code kind} ({@code memory}, {@code message}, {@code thread}, {@code file}, …) and {@code id} name the
     * item; {@code parent_id} what it belongs to ({@code thread:<id>} for a message); {@code keyword_rank} and
     * {@code similarity} say which list found it (null: not that one).
     */
    record ResultView(
            String kind,
            String id,
            @JsonProperty("parent_id") String parentId,
            String title,
            String snippet,
            double score,
            @JsonProperty("keyword_rank") Integer keywordRank,
            Double similarity) {}

    /**
     * A search's answer: {@code mode} {@code hybrid} (keyword and vector lists fused) or {@code keyword}, with
     * {@code vector_skipped} saying why the vector part was left out; {@code cached} when it was kept from an equal
     * search with the index unchanged since.
     */
    record Answer(
            String query,
            String mode,
            @JsonProperty("vector_skipped") String vectorSkipped,
            List<ResultView> results,
            boolean cached) {}

    /** A file found by its path: {@code match} {@code prefix} or {@code fuzzy}. */
    record PathView(String id, String path, String match, double score) {}

    record QuickAnswer(String query, List<PathView> files) {}

    record SourceView(String kind, long items, long embedded) {}

    /**
     * The index of a workspace: items per kind, how many have their embedding, the Lucene documents and segments (one
     * once merged; each segment costs a graph walk per query).
     */
    record Status(
            @JsonProperty("space_id") String spaceId,
            @JsonProperty("vectors_configured") boolean vectorsConfigured,
            String model,
            long items,
            long embedded,
            long pending,
            @JsonProperty("index_documents") long indexDocuments,
            @JsonProperty("index_segments") long indexSegments,
            List<SourceView> sources,
            @JsonProperty("last_error") String lastError) {}

    /** What an index/vectorize or index/rebuild did. */
    record Upkeep(
            @JsonProperty("space_id") String spaceId,
            long embedded,
            @JsonProperty("index_documents") long indexDocuments) {}

    /** index/file: the path of a file of the workspace's storage. */
    record FileInput(String path) {}

    record FileIndexed(String id, String path, boolean indexed, boolean embedded) {}

    /** A neighbour: the item, the kind of edge, and for {@code similar} edges the similarity. */
    record Neighbor(String kind, String id, String title, String edge, Double score) {}

    record Neighbors(Map<String, String> item, List<Neighbor> neighbors) {}

    /** A repository's semantic index: {@code status} {@code indexed}, or {@code indexing} while it goes on. */
    record RepositoryIndexState(
            @JsonProperty("repo_id") String repoId,
            String status,
            String branch,
            String commit,
            int files,
            int chunks,
            @JsonProperty("indexed_at") String indexedAt,
            String error) {}

    /** A piece of a file found by meaning: its path and 1-based line range, the declaration it starts with. */
    record RepositoryHit(
            String path,
            @JsonProperty("start_line") int startLine,
            @JsonProperty("end_line") int endLine,
            String symbol,
            double similarity,
            String snippet) {}

    record RepositoryAnswer(
            @JsonProperty("repo_id") String repoId, String commit, String query, List<RepositoryHit> results) {}
}
