package dev.atrium.repos.pulls.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the pull request routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class PullJson {

    private PullJson() {}

    record Head(@JsonProperty("repo_id") String repoId, String branch, String commit) {}

    record Base(String branch, String commit) {}

    /**
     * A pull request: {@code state} {@code open}, {@code closed} or {@code merged}; {@code mergeable_state}
     * {@code clean}, {@code conflicts} or {@code unknown} (being checked).
     */
    record Pull(
            String id,
            int number,
            @JsonProperty("repo_id") String repoId,
            String title,
            String body,
            String state,
            boolean draft,
            @JsonProperty("author_id") String authorId,
            Head head,
            Base base,
            @JsonProperty("mergeable_state") String mergeableState,
            @JsonProperty("merge_commit") String mergeCommit,
            @JsonProperty("merged_by") String mergedBy,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt,
            @JsonProperty("closed_at") Instant closedAt,
            @JsonProperty("merged_at") Instant mergedAt) {}

    record One(@JsonProperty("pull_request") Pull pullRequest) {}

    record Page(@JsonProperty("pull_requests") List<Pull> pullRequests, long total, int limit, int offset) {}

    /**
     * A new pull request: {@code head} a branch of this repository, or of {@code head_repo_id} (a fork of it you can
     * read); {@code base} a branch of this repository (its default branch unless given).
     */
    record Create(
            String title,
            String body,
            String head,
            String base,
            @JsonProperty("head_repo_id") String headRepoId,
            Boolean draft) {}

    /** A change: only the fields given change; {@code state} {@code open} or {@code closed}. */
    record Update(String title, String body, String base, Boolean draft, String state) {}

    /** One file of a diff; {@code patch} null once the whole diff's patches passed the answer's limit. */
    record DiffFile(
            String path,
            @JsonProperty("old_path") String oldPath,
            String status,
            int additions,
            int deletions,
            String patch) {}

    /** What the head changed since it left the base (the merge base). {@code ?format=patch} streams the unified diff. */
    record Diff(
            String base,
            String head,
            @JsonProperty("merge_base") String mergeBase,
            List<DiffFile> files,
            int additions,
            int deletions,
            @JsonProperty("patch_truncated") boolean patchTruncated) {}

    /** {@code kind}: {@code content}, {@code add_add} or {@code modify_delete}. */
    record Conflict(String path, String kind) {}

    record Conflicts(
            boolean mergeable,
            @JsonProperty("base_commit") String baseCommit,
            @JsonProperty("head_commit") String headCommit,
            List<Conflict> conflicts) {}

    /**
     * A comment: top-level, or inline on {@code path} and {@code line} of the head commit {@code commit_id} it was
     * made on; {@code outdated} once the head's file at that path differs from the one commented on.
     */
    record Comment(
            String id,
            @JsonProperty("review_id") String reviewId,
            @JsonProperty("author_id") String authorId,
            String body,
            String path,
            Integer line,
            @JsonProperty("commit_id") String commitId,
            boolean outdated,
            @JsonProperty("created_at") Instant createdAt) {}

    record OneComment(Comment comment) {}

    record Comments(List<Comment> comments) {}

    /** A new comment; {@code path} and {@code line} together make it inline on the head's file. */
    record NewComment(String body, String path, Integer line) {}

    /** {@code state}: approved, changes_requested, or (a review that only comments) commented. */
    record Review(
            String id,
            @JsonProperty("author_id") String authorId,
            String state,
            String body,
            @JsonProperty("commit_id") String commitId,
            @JsonProperty("created_at") Instant createdAt,
            List<Comment> comments) {}

    record OneReview(Review review) {}

    record Reviews(List<Review> reviews) {}

    record InlineComment(String path, int line, String body) {}

    /** {@code event}: approve, request_changes, or (only remarks) comment; with inline remarks. */
    record NewReview(String event, String body, List<InlineComment> comments) {}

    /**
     * {@code strategy} {@code merge} (a merge commit, the default), {@code squash} or {@code rebase};
     * {@code base_commit} the base the caller checked and {@code head_commit} the head they reviewed (409 when either
     * moved); {@code delete_branch} deletes the head branch after the merge.
     */
    record Merge(
            String strategy,
            @JsonProperty("base_commit") String baseCommit,
            @JsonProperty("head_commit") String headCommit,
            String message,
            @JsonProperty("delete_branch") Boolean deleteBranch) {}

    record Merged(
            @JsonProperty("pull_request") Pull pullRequest,
            @JsonProperty("merge_commit") String mergeCommit,
            @JsonProperty("branch_deleted") boolean branchDeleted) {}

    record Resolution(String path, String content) {}

    /** The content of each conflicting path, committed on the head branch as the merge of the base into it. */
    record Resolve(List<Resolution> resolutions, String message) {}

    record Resolved(@JsonProperty("pull_request") Pull pullRequest, String commit) {}
}
