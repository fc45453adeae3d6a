package dev.atrium.repos.releases.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the release routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class ReleaseJson {

    private ReleaseJson() {}

    /**
     * An asset: {@code sha256} of its bytes (also its ETag), {@code download_url} where its bytes are (with
     * {@code Range} and {@code If-None-Match}).
     */
    record Asset(
            String id,
            @JsonProperty("release_id") String releaseId,
            String name,
            @JsonProperty("content_type") String contentType,
            long size,
            String sha256,
            @JsonProperty("download_count") long downloadCount,
            @JsonProperty("uploader_id") String uploaderId,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("download_url") String downloadUrl) {}

    record OneAsset(Asset asset) {}

    record Assets(List<Asset> assets) {}

    /**
     * A release: {@code commit_id} is the commit its tag names (null for a draft whose tag is not made yet);
     * {@code target_commitish} what the tag was, or will be, made at; {@code published_at} null while a draft.
     */
    record Release(
            String id,
            @JsonProperty("repo_id") String repoId,
            @JsonProperty("tag_name") String tagName,
            @JsonProperty("target_commitish") String targetCommitish,
            @JsonProperty("commit_id") String commitId,
            String name,
            String body,
            boolean draft,
            boolean prerelease,
            @JsonProperty("author_id") String authorId,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt,
            @JsonProperty("published_at") Instant publishedAt,
            List<Asset> assets) {}

    record One(Release release) {}

    /** Newest first; drafts only for the repository's owner. */
    record Page(List<Release> releases, long total, int limit, int offset) {}

    /**
     * A new release: {@code tag_name} is required; when the tag does not exist it is made at {@code target_commitish}
     * (a branch, tag or commit id; the default branch unless given), except for a draft, whose tag is made when it is
     * published.
     */
    record Create(
            @JsonProperty("tag_name") String tagName,
            @JsonProperty("target_commitish") String targetCommitish,
            String name,
            String body,
            Boolean draft,
            Boolean prerelease) {}

    /**
     * A change: only the fields given change. {@code draft: false} publishes a draft (making its tag when missing);
     * {@code target_commitish} changes only while the tag does not exist.
     */
    record Update(
            @JsonProperty("target_commitish") String targetCommitish,
            String name,
            String body,
            Boolean draft,
            Boolean prerelease) {}

    record Deleted(
            boolean success, @JsonProperty("tag_deleted") boolean tagDeleted) {}

    record AssetDeleted(boolean success) {}
}
