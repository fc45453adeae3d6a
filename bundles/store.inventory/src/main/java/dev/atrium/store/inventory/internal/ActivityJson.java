package dev.atrium.store.inventory.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The documents Model A serves (ActivityStreams, WebFinger, its JSON-LD context), for the API reference ({@link
 * dev.atrium.kernel.api.JsonShape}). Every ActivityStreams document's {@code @context} is the ActivityStreams and
 * security contexts and an object defining the {@code ext:} terms.
 */
final class ActivityJson {

    private ActivityJson() {}

    record Icon(String type, String url) {}

    /** The key an actor signs with ({@code publicKeyPem} is PEM text). */
    record PublicKey(String id, String owner, String publicKeyPem) {}

    /** A store's actor: {@code type} is {@code ["Service", "Store"]}. */
    record StoreActor(
            @JsonProperty("@context") List<Object> context,
            String id,
            List<String> type,
            String preferredUsername,
            String name,
            String summary,
            String url,
            Icon icon,
            String inbox,
            String outbox,
            String followers,
            String inventory,
            String search,
            String repositorySearch,
            PublicKey publicKey) {}

    /** A public repository's actor ({@code type} {@code Repository}). */
    record RepositoryActor(
            @JsonProperty("@context") List<Object> context,
            String id,
            String type,
            String name,
            String summary,
            String inbox,
            String outbox,
            String followers,
            List<String> cloneUri,
            List<String> pushUri,
            Instant published,
            Instant updated,
            String url,
            String stores,
            String defaultBranchRef,
            String defaultBranchHash,
            PublicKey publicKey) {}

    /** A repository's key as a document of its own ({@code type} {@code CryptographicKey}). */
    record Key(
            @JsonProperty("@context") List<Object> context,
            String id,
            String type,
            String owner,
            String publicKeyPem) {}

    /** An OrderedCollection of actor URLs, all of them. */
    record Collection(
            @JsonProperty("@context") List<Object> context,
            String id,
            String type,
            int totalItems,
            List<String> orderedItems) {}

    /**
     * An outbox: without {@code page} the OrderedCollection ({@code totalItems} and {@code first}); with it an
     * OrderedCollectionPage ({@code partOf}, {@code prev}, {@code next} and its activities).
     */
    record Outbox(
            @JsonProperty("@context") List<Object> context,
            String id,
            String type,
            String partOf,
            long totalItems,
            String first,
            String prev,
            String next,
            List<Activity> orderedItems) {}

    /** The followers: as {@link Outbox}, the items being the followers' actor URLs. */
    record Followers(
            @JsonProperty("@context") List<Object> context,
            String id,
            String type,
            String partOf,
            long totalItems,
            String first,
            String prev,
            String next,
            List<String> orderedItems) {}

    /** A store's search service ({@code type} {@code ["Service", "ext:SearchService"]}). */
    record SearchService(
            @JsonProperty("@context") List<Object> context,
            String id,
            List<String> type,
            String attributedTo,
            String name,
            String summary,
            String repositorySearch) {}

    /**
     * An activity of an outbox ({@code Create}, {@code Update}, {@code Delete}, {@code Push}, {@code Add},
     * {@code Remove}, {@code Announce}…): {@code object} is a URL or an object, {@code target} a URL or a ref.
     */
    record Activity(
            @JsonProperty("@context") List<Object> context,
            String id,
            String type,
            String actor,
            Instant published,
            List<String> to,
            List<String> cc,
            String attributedTo,
            Object object,
            Object target) {}

    record Link(String rel, String type, String href) {}

    /** A WebFinger answer (JRD): {@code subject} is {@code acct:<store>@<host>} or the repository's actor URL. */
    record WebFinger(String subject, List<String> aliases, List<Link> links) {}

    /** The JSON-LD context of the {@code ext:} terms. */
    record Namespace(@JsonProperty("@context") Map<String, Object> context) {}
}
