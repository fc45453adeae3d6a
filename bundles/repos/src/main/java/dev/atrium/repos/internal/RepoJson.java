package dev.atrium.repos.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The JSON the repositories routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class RepoJson {

    private RepoJson() {}

    // ------------------------------------------------------------------------------------------- repositories

    /**
     * A repository ({@link RepoAccess#json}): {@code visibility} is {@code public} or {@code private};
     * {@code is_default} whether it is its workspace's default repository; {@code forked_from} the id of the one it was
     * forked from.
     */
    record View(
            String id,
            @JsonProperty("space_id") String spaceId,
            String name,
            String description,
            String visibility,
            @JsonProperty("default_branch") String defaultBranch,
            @JsonProperty("is_default") boolean isDefault,
            @JsonProperty("forked_from") String forkedFrom,
            @JsonProperty("allow_force_push") boolean allowForcePush,
            @JsonProperty("merges_only") boolean mergesOnly,
            @JsonProperty("clone_url") String cloneUrl,
            long stars,
            List<String> topics,
            String language,
            boolean catalog,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record One(View repository) {}

    // ------------------------------------------------------------------------------------------- explore

    /** Who owns a public repository: {@code path} is how Git and explore name it (the username, or a workspace slug). */
    record ExploreOwner(String username, String path) {}

    /**
     * A public repository as explore shows it (never its workspace id): {@code full_name} is {@code path/name};
     * {@code language} is the largest share of the default branch's files by extension, detected at push.
     */
    record ExploreItem(
            String id,
            String name,
            @JsonProperty("full_name") String fullName,
            ExploreOwner owner,
            String description,
            List<String> topics,
            String language,
            int stars,
            int forks,
            boolean fork,
            @JsonProperty("default_branch") String defaultBranch,
            @JsonProperty("clone_url") String cloneUrl,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt,
            @JsonProperty("pushed_at") Instant pushedAt) {}

    /** A page: {@code next_cursor} (opaque) gives the next one, null on the last. */
    record ExplorePage(
            List<ExploreItem> repositories,
            @JsonProperty("next_cursor") String nextCursor,
            int limit) {}

    record ExploreOne(ExploreItem repository) {}

    /** Trending: each item also has {@code trending_score} (docs/decisions/explore.md has the formula). */
    record TrendingPage(
            List<ExploreItem> repositories,
            @JsonProperty("window_days") int windowDays,
            int limit,
            int offset) {}

    /** A catalog entry: {@code type} {@code repository}, and the repository's fields. */
    record CatalogPage(
            List<ExploreItem> items,
            @JsonProperty("next_cursor") String nextCursor,
            int limit) {}

    record Suggestion(
            String type,
            String id,
            String name,
            @JsonProperty("full_name") String fullName,
            String description,
            int stars) {}

    /** At most ten. */
    record Suggestions(List<Suggestion> suggestions) {}

    /** An operator's seed repository: {@code checked} says whether it is preselected where a user picks seeds. */
    record Seed(String id, String url, String name, String description, String category, boolean checked) {}

    record Seeds(List<Seed> repositories) {}

    record OneSeed(Seed repository) {}

    /** A new seed (or a change of one: only the fields given change); {@code url} and {@code name} required on create. */
    record SeedInput(String url, String name, String description, String category, Boolean checked, Integer position) {}

    /** The caller's starred repositories they may still read; {@code total} counts every star of theirs. */
    record StarredPage(List<View> repositories, long total, int limit, int offset) {}

    record Summary(
            String id,
            String name,
            @JsonProperty("default_branch") String defaultBranch) {}

    record Summaries(List<Summary> repositories) {}

    /**
     * A new repository: {@code name} is required; {@code visibility} {@code public} or {@code private} (the default);
     * {@code default_branch} {@code main} unless given.
     */
    record Create(
            String name,
            String description,
            String visibility,
            @JsonProperty("default_branch") String defaultBranch) {}

    /** A change of a repository: only the fields given change. */
    record Update(
            String name,
            String description,
            String visibility,
            @JsonProperty("default_branch") String defaultBranch,
            @JsonProperty("allow_force_push") Boolean allowForcePush,
            @JsonProperty("merges_only") Boolean mergesOnly,
            List<String> topics,
            Boolean catalog) {}

    /**
     * The optional body of a fork: {@code space_id} (required to fork someone else's repository) is a workspace of the
     * caller's, {@code name} the fork's (the source's, with {@code -fork} in the same workspace).
     */
    record Fork(@JsonProperty("space_id") String spaceId, String name) {}

    /** The optional body of a workspace's default repository: {@code name} is the workspace's slug unless given. */
    record Init(String name, @JsonProperty("default_branch") String defaultBranch) {}

    /**
     * A repository fetched from {@code url} into the workspace {@code space_id}; {@code auth.token} is a token the
     * remote accepts; {@code name} is the URL's last segment unless given.
     */
    record ImportExternal(
            String url,
            @JsonProperty("space_id") String spaceId,
            String name,
            String description,
            String visibility,
            RemoteAuth auth) {}

    record RemoteAuth(String token) {}

    /** {@code partial}: the remote's objects came by a blobless partial fetch, so some file contents are not here. */
    record ImportedExternal(
            View repository,
            boolean partial,
            @JsonProperty("source_url") String sourceUrl) {}

    record Deleted(boolean success) {}

    // ------------------------------------------------------------------------------------------- upstream sync

    /** A new upstream: a remote Git URL over smart HTTP, and a bearer token for it (kept for this fetch only). */
    record FetchRemote(String url, String token) {}

    /** The optional body of a fetch or sync: a token for a private upstream (kept for this call only). */
    record FetchUpstream(String token) {}

    /** {@code kind}: {@code remote} (a URL) or {@code fork} (the repository it was forked from). */
    record UpstreamView(
            String kind,
            String url,
            @JsonProperty("repository_id") String repositoryId) {}

    record RefMove(
            String ref,
            @JsonProperty("old_id") String oldId,
            @JsonProperty("new_id") String newId) {}

    /** The refs a fetch moved (40 zeros: made or pruned), and the upstream's tags that differ from local ones. */
    record Fetched(
            UpstreamView upstream,
            @JsonProperty("updated_refs") List<RefMove> updatedRefs,
            @JsonProperty("rejected_tags") List<String> rejectedTags) {}

    /**
     * A branch against its upstream: {@code state} {@code even}, {@code behind}, {@code ahead}, {@code diverged},
     * {@code local_only}, {@code upstream_only} or {@code not_a_commit}; after a sync also {@code fast_forwarded},
     * {@code created} or {@code not_updated} (with {@code reason}). Counts stop at 10,000.
     */
    record BranchSync(
            String name,
            String commit,
            @JsonProperty("upstream_commit") String upstreamCommit,
            int ahead,
            int behind,
            String state,
            String reason) {}

    record Synced(
            UpstreamView upstream,
            @JsonProperty("updated_refs") List<RefMove> updatedRefs,
            @JsonProperty("rejected_tags") List<String> rejectedTags,
            List<BranchSync> branches) {}

    /** {@code upstream} null when the repository has none; {@code last_result} {@code ok} or {@code failed}. */
    record SyncStatus(
            UpstreamView upstream,
            @JsonProperty("last_fetch_at") Instant lastFetchAt,
            @JsonProperty("last_result") String lastResult,
            @JsonProperty("last_error") String lastError,
            boolean partial,
            List<BranchSync> branches) {}

    /** The caller's star on a repository, and how many it has. */
    record Star(boolean starred, long stars) {}

    /** A repository's refs and disk use; {@code head} is the default branch's commit, null while it has none. */
    record Status(
            @JsonProperty("repository_id") String repositoryId,
            @JsonProperty("default_branch") String defaultBranch,
            boolean empty,
            String head,
            int branches,
            int tags,
            @JsonProperty("size_bytes") long sizeBytes) {}

    // ------------------------------------------------------------------------------------------- branches

    record Branch(
            String name,
            String commit,
            @JsonProperty("is_default") boolean isDefault) {}

    record Branches(List<Branch> branches) {}

    record OneBranch(Branch branch) {}

    /** A new branch {@code name} at {@code from} (a branch, tag or commit; the default branch unless given). */
    record CreateBranch(String name, String from) {}

    // ------------------------------------------------------------------------------------------- history

    record Person(String name, String email, Instant date) {}

    /** A commit: {@code title} is the first line of {@code message}. */
    record Commit(String sha, String message, String title, Person author, Person committer, List<String> parents) {}

    /** A page of history, newest first. */
    record Log(
            List<Commit> commits, @JsonProperty("has_more") boolean hasMore, int limit, int offset) {}

    /** A changed file: {@code status} is {@code add}, {@code modify}, {@code delete}, {@code rename} or {@code copy}. */
    record FileDiff(
            String path, @JsonProperty("old_path") String oldPath, String status, int additions, int deletions) {}

    /**
     * What {@code head} changed: {@code merge_base} is the commit it is compared with, the merge base for
     * {@code base...head} (null when they share no history) and {@code base} for {@code base..head}; the
     * {@code patch} stops after about 5 MiB ({@code patch_truncated}).
     */
    record Diff(
            String base,
            String head,
            @JsonProperty("merge_base") String mergeBase,
            List<FileDiff> files,
            int additions,
            int deletions,
            String patch,
            @JsonProperty("patch_truncated") boolean patchTruncated) {}

    /** A commit against its first parent. */
    record CommitDiff(
            Commit commit,
            List<FileDiff> files,
            int additions,
            int deletions,
            String patch,
            @JsonProperty("patch_truncated") boolean patchTruncated) {}

    /** A commit and the files it changed, without the patch. */
    record CommitDetail(Commit commit, List<FileDiff> files, int additions, int deletions) {}

    // ------------------------------------------------------------------------------------------- trees, blobs

    /**
     * {@code type} is {@code blob}, {@code tree}, {@code symlink} or {@code commit} (a submodule); {@code size} is
     * there for files only, null when a partial import left the content out.
     */
    record TreeEntry(String name, String path, String type, String mode, String sha, Long size) {}

    record Tree(String ref, String commit, String path, List<TreeEntry> entries) {}

    /** A file at a ref: {@code content} is the text ({@code encoding: utf-8}) or its bytes in {@code base64}. */
    record Blob(String path, String sha, String mode, int size, String encoding, String content) {}

    /** {@code sha} is the commit the line comes from; {@code original_line} its number there. */
    record BlameLine(
            int line,
            String content,
            String sha,
            @JsonProperty("original_line") int originalLine) {}

    record BlameCommit(String title, Person author) {}

    /** Each line of a file with the commit that last changed it; {@code commits} maps those commits' ids to them. */
    record Blame(String ref, String commit, String path, List<BlameLine> lines, Map<String, BlameCommit> commits) {}

    /** A match: {@code type} {@code path} (its name) or {@code content} (one of its lines, with its number). */
    record SearchHit(String type, String path, Integer line, String preview) {}

    record Search(String query, String ref, String commit, List<SearchHit> results, boolean truncated) {}

    // ------------------------------------------------------------------------------------------- writes

    record Author(String name, String email) {}

    /**
     * One file of a commit: {@code action} {@code upsert} (the default) writes {@code content} ({@code encoding}
     * {@code utf-8}, the default, or {@code base64}), {@code delete} removes the file.
     */
    record Change(String path, String content, String encoding, String action, Boolean executable) {}

    /**
     * A commit from JSON: {@code branch} is the default branch unless given; {@code parent}, when given, the commit
     * the branch must be at (forty zeros: the branch must not exist yet); {@code author} the caller unless given.
     */
    record CommitInput(String branch, String parent, String message, Author author, List<Change> changes) {}

    record Committed(String branch, Commit commit) {}

    /**
     * A new commit on the default branch putting {@code path} back as it was at {@code commit} (removing it if it
     * was not there).
     */
    record Restore(String path, String commit, String message) {}

    record ImportedRef(String ref, String commit) {}

    /**
     * What an upload brought: a Git bundle's new or moved {@code refs}; an archive's commit ({@code branch} and
     * {@code commit}).
     */
    record Imported(List<ImportedRef> refs, String branch, Commit commit) {}

    // ------------------------------------------------------------------------------------------- maintenance

    /**
     * A repository's garbage collection: {@code state} is {@code idle}, {@code queued} or {@code running}; the rest
     * describes the last run (null before one).
     */
    record GcStatus(
            String state,
            @JsonProperty("last_run_at") Instant lastRunAt,
            @JsonProperty("duration_ms") Long durationMs,
            String reason,
            String error,
            Integer packs,
            Integer bitmaps,
            @JsonProperty("loose_objects") Long looseObjects) {}

    record Gc(GcStatus gc) {}

    /** An operator's request of a collection: the repository's state and the job that reports it. */
    record GcRequested(GcStatus gc, dev.atrium.kernel.api.Jobs.Snapshot job) {}

    /** The latest maintenance of every repository (null before the first since the server started). */
    record MaintenanceJob(dev.atrium.kernel.api.Jobs.Snapshot job) {}
}
