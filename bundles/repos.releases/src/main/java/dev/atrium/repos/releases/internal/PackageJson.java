package dev.atrium.repos.releases.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the packages routes take and answer, for the API reference. */
final class PackageJson {

    private PackageJson() {}

    record Owner(String username, String path) {}

    /** A package: {@code latest_version} is the highest version that is not a prerelease (null when all are). */
    record PackageItem(
            @JsonProperty("repo_id") String repoId,
            String name,
            @JsonProperty("full_name") String fullName,
            Owner owner,
            String description,
            @JsonProperty("latest_version") String latestVersion,
            int stars,
            @JsonProperty("rating_average") double ratingAverage,
            @JsonProperty("rating_count") int ratingCount) {}

    record Page(List<PackageItem> packages, int limit, int offset) {}

    record Suggestion(
            @JsonProperty("repo_id") String repoId,
            String name,
            @JsonProperty("full_name") String fullName) {}

    /** At most ten. */
    record Suggestions(List<Suggestion> suggestions) {}

    /** A version: {@code version} is the tag without its {@code v}. */
    record Version(
            String version,
            String tag,
            @JsonProperty("release_id") String releaseId,
            String name,
            boolean prerelease,
            @JsonProperty("published_at") Instant publishedAt) {}

    record Latest(@JsonProperty("package") PackageItem pkg, Version version) {}

    /** Highest version first; a prerelease below its release. */
    record Versions(@JsonProperty("package") PackageItem pkg, List<Version> versions) {}

    record Author(String username) {}

    record Review(
            String id,
            int rating,
            String body,
            Author author,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record Reviews(
            List<Review> reviews,
            @JsonProperty("rating_average") double ratingAverage,
            @JsonProperty("rating_count") int ratingCount,
            int limit,
            int offset) {}

    /** {@code rating} 1 to 5, required; {@code body} optional. */
    record ReviewInput(int rating, String body) {}

    record OneReview(
            Review review,
            @JsonProperty("rating_average") double ratingAverage,
            @JsonProperty("rating_count") int ratingCount) {}
}
