package dev.atrium.store.pullonly.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/**
 * The documents Model B serves (ActivityStreams and WebFinger), for the API reference ({@link
 * dev.atrium.kernel.api.JsonShape}). An ActivityStreams document's {@code @context} is the ActivityStreams and
 * security contexts and an object defining the {@code ext:} prefix.
 */
final class PullJson {

    private PullJson() {}

    record Icon(String type, String url) {}

    /** The key the store's actor signs with ({@code publicKeyPem} is PEM text). */
    record PublicKey(String id, String owner, String publicKeyPem) {}

    /** A store's actor: a {@code Group} whose {@code ext:distributionMode} is {@code pull-only}. */
    record StoreActor(
            @JsonProperty("@context") List<Object> context,
            String id,
            String type,
            String preferredUsername,
            String name,
            String summary,
            String url,
            Icon icon,
            String inbox,
            String outbox,
            String followers,
            PublicKey publicKey,
            @JsonProperty("ext:repositories") String repositories,
            @JsonProperty("ext:search") String search,
            @JsonProperty("ext:repositorySearch") String repositorySearch,
            @JsonProperty("ext:distributionMode") String distributionMode) {}

    /**
     * A public repository of the store's workspace ({@code type} {@code ["Document", "ext:GitRepository"]}); the
     * {@code ext:…Endpoint} and {@code ext:…UrlTemplate} fields are routes of this server's API. {@code @context} only
     * on the document of its own.
     */
    record Repository(
            @JsonProperty("@context") List<Object> context,
            String id,
            List<String> type,
            String name,
            String summary,
            String url,
            Instant published,
            Instant updated,
            String attributedTo,
            @JsonProperty("ext:owner") String owner,
            @JsonProperty("ext:visibility") String visibility,
            @JsonProperty("ext:defaultBranch") String defaultBranch,
            @JsonProperty("ext:cloneUrl") String cloneUrl,
            @JsonProperty("ext:browseUrl") String browseUrl,
            @JsonProperty("ext:branchesEndpoint") String branchesEndpoint,
            @JsonProperty("ext:commitsEndpoint") String commitsEndpoint,
            @JsonProperty("ext:treeUrlTemplate") String treeUrlTemplate,
            @JsonProperty("ext:blobUrlTemplate") String blobUrlTemplate,
            @JsonProperty("ext:refsEndpoint") String refsEndpoint) {}

    /**
     * The store's repositories (or those a search found): without {@code page} the OrderedCollection
     * ({@code totalItems} and {@code first}); with it an OrderedCollectionPage whose items are the repositories' URLs,
     * or with {@code expand=object} their {@link Repository} objects.
     */
    record Repositories(
            @JsonProperty("@context") List<Object> context,
            String id,
            String type,
            String partOf,
            int totalItems,
            String first,
            String prev,
            String next,
            List<Object> orderedItems) {}

    /** A {@code Create} or {@code Update} of a repository, dated by its last change. */
    record Activity(String id, String type, String actor, Instant published, List<String> to, Repository object) {}

    /** The outbox, paged as {@link Repositories}: the newest change of each repository first. */
    record Outbox(
            @JsonProperty("@context") List<Object> context,
            String id,
            String type,
            String partOf,
            int totalItems,
            String first,
            String prev,
            String next,
            List<Activity> orderedItems) {}

    /** Always empty: a pull-only store has no followers. */
    record Followers(
            @JsonProperty("@context") String context,
            String id,
            String type,
            int totalItems,
            List<String> orderedItems) {}

    /** The store's search service ({@code type} {@code ["Service", "ext:SearchService"]}). */
    record SearchService(
            @JsonProperty("@context") List<Object> context,
            String id,
            List<String> type,
            String attributedTo,
            String name,
            String summary,
            @JsonProperty("ext:repositorySearch") String repositorySearch) {}

    record Link(String rel, String type, String href) {}

    /** A WebFinger answer (JRD) for {@code acct:<store>@<host>}. */
    record WebFinger(String subject, List<String> aliases, List<Link> links) {}
}
