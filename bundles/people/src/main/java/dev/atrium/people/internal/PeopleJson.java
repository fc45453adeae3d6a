package dev.atrium.people.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The JSON the people routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class PeopleJson {

    private PeopleJson() {}

    /** What a list shows of a person. */
    record Summary(
            String username,
            @JsonProperty("display_name") String displayName,
            @JsonProperty("avatar_url") String avatarUrl) {}

    /** How the signed-in caller relates to the person (absent for anonymous callers). */
    record Viewer(
            @JsonProperty("is_self") boolean isSelf,
            boolean following,
            @JsonProperty("followed_by") boolean followedBy,
            @JsonProperty("follow_requested") boolean followRequested,
            boolean blocking,
            boolean muting) {}

    record Profile(
            String username,
            @JsonProperty("display_name") String displayName,
            @JsonProperty("avatar_url") String avatarUrl,
            String bio,
            String website,
            @JsonProperty("joined_at") Instant joinedAt,
            @JsonProperty("public_repos") long publicRepos,
            long followers,
            long following,
            @JsonProperty("private_account") boolean privateAccount,
            Viewer viewer) {}

    record User(Profile user) {}

    record Repo(
            String id,
            String name,
            @JsonProperty("full_name") String fullName,
            String description,
            @JsonProperty("default_branch") String defaultBranch,
            boolean fork,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record UserWithRepos(Profile user, List<Repo> repositories) {}

    record Users(List<Summary> users, long total, int limit, int offset) {}

    /** A follower or a followed person, with when the follow began. */
    record Related(
            String username,
            @JsonProperty("display_name") String displayName,
            @JsonProperty("avatar_url") String avatarUrl,
            @JsonProperty("followed_at") Instant followedAt) {}

    record Followers(List<Related> followers, long total, int limit, int offset) {}

    record Following(List<Related> following, long total, int limit, int offset) {}

    record ActivityRepo(
            String id,
            String name,
            @JsonProperty("full_name") String fullName) {}

    /** type: push (payload refs, commit_count, commits), star, release (payload tag, release_id, prerelease). */
    record ActivityItem(
            String id,
            String type,
            Summary actor,
            ActivityRepo repository,
            Map<String, Object> payload,
            @JsonProperty("created_at") Instant createdAt) {}

    record Activity(List<ActivityItem> activity, long total, int limit, int offset) {}

    record FollowRequest(
            String id,
            Summary requester,
            @JsonProperty("created_at") Instant createdAt) {}

    record FollowRequests(
            @JsonProperty("follow_requests") List<FollowRequest> followRequests, long total, int limit, int offset) {}

    /** state: following, requested (the account approves followers) or none. */
    record FollowState(
            String state, @JsonProperty("follow_request_id") String followRequestId) {}

    record Decision(@JsonProperty("follow_request_id") String followRequestId, String state) {}

    record Blocking(boolean blocking) {}

    record Muting(boolean muting) {}

    /** A PATCH of one's own profile: any of the fields; an empty website clears it. */
    record ProfileInput(@JsonProperty("display_name") String displayName, String bio, String website) {}

    record Avatar(@JsonProperty("avatar_url") String avatarUrl, List<Integer> sizes) {}
}
