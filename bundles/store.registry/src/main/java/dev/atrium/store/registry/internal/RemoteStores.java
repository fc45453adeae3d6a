package dev.atrium.store.registry.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.store.ap.api.RemoteDocuments;
import dev.atrium.store.ap.api.RemoteDocuments.RemoteException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Reads remote stores of either federation model through the guarded fetcher: Model A (an inventory of canonical
 * Repository actors) and Model B (a pull-only {@code ext:repositories} collection of repository objects). Everything a
 * route answers is normalised to one shape, so the client never needs to know which model a store speaks.
 */
@Component(service = RemoteStores.class)
public class RemoteStores {

    /** {@code slug@domain}, the domain optionally with a port. */
    private static final Pattern ACCT =
            Pattern.compile("(?:acct:)?([A-Za-z0-9][A-Za-z0-9._-]{0,99})@([A-Za-z0-9.-]{1,253}(?::[0-9]{1,5})?)");

    private static final int MAX_OUTBOX_PAGES = 5;
    private static final int MAX_INVENTORY_ITEMS = 10_000;
    /** Requests one route may send to a store, and the seconds they may take together. */
    private static final int MAX_FETCHES = 150;

    private static final long WALK_SECONDS = 30;

    private final RemoteDocuments documents;

    @Activate
    public RemoteStores(@Reference RemoteDocuments documents) {
        this.documents = documents;
    }

    /** A remote store's actor, as the registry keeps it. */
    public record StoreActor(
            String actorUrl,
            String domain,
            String slug,
            String name,
            String summary,
            String iconUrl,
            String outboxUrl,
            String repositoriesUrl,
            String inventoryUrl,
            String repositorySearchUrl) {}

    /** A repository a remote store lists. */
    public record RemoteRepository(
            String id, String owner, String name, String summary, String cloneUrl, String browseUrl) {
        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("owner", owner);
            m.put("name", name);
            m.put("summary", summary);
            m.put("clone_url", cloneUrl);
            m.put("browse_url", browseUrl);
            return m;
        }
    }

    /** One page of a store's repositories. */
    public record Page(List<RemoteRepository> repositories, long total, int page, int limit) {
        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(
                    "repositories",
                    repositories.stream().map(RemoteRepository::toJson).toList());
            m.put("total", total);
            m.put("page", page);
            m.put("limit", limit);
            return m;
        }
    }

    /**
     * The actor URL an identifier names: {@code slug@domain} is looked up by WebFinger (over HTTPS; over HTTP only for
     * {@code localhost} and loopback literals, which the egress guard lets through only where the operator allowed
     * loopback), a full {@code http(s)} URL is taken as it is.
     */
    public URI actorUrl(String identifier) {
        var acct = ACCT.matcher(identifier);
        if (acct.matches()) {
            String domain = acct.group(2);
            String host = domain.contains(":") ? domain.substring(0, domain.lastIndexOf(':')) : domain;
            String scheme = host.equals("localhost") || host.equals("127.0.0.1") ? "http" : "https";
            String resource = "acct:" + acct.group(1) + "@" + domain;
            URI webfinger = uri(
                    scheme + "://" + domain + "/.well-known/webfinger?resource="
                            + URLEncoder.encode(resource, StandardCharsets.UTF_8),
                    "identifier");
            JsonNode jrd = new Walk().jrd(webfinger);
            for (JsonNode link : jrd.path("links")) {
                String type = link.path("type").asText("");
                if ("self".equals(link.path("rel").asText())
                        && (type.startsWith("application/activity+json") || type.startsWith("application/ld+json"))
                        && link.path("href").isTextual()) {
                    return uri(link.path("href").asText(), "the WebFinger answer's self link");
                }
            }
            throw new ApiException(
                    502, "BAD_GATEWAY", "the WebFinger answer for " + resource + " names no ActivityPub actor");
        }
        URI u = uri(identifier, "identifier");
        if (!("https".equals(u.getScheme()) || "http".equals(u.getScheme())) || u.getHost() == null) {
            throw ApiException.badRequest("identifier must be <slug>@<domain> or an http(s) actor URL");
        }
        return u;
    }

    /** Fetches a store's actor document and reads what the registry keeps. */
    public StoreActor actor(URI actorUrl) {
        JsonNode a = new Walk().fetch(actorUrl);
        String id = a.path("id").asText(actorUrl.toString());
        URI idUri = uri(id, "the actor's id");
        String outbox = link(a, idUri, "outbox");
        String repositories = link(a, idUri, "repositories");
        String inventory = link(a, idUri, "inventory");
        if (outbox == null || (repositories == null && inventory == null)) {
            throw new ApiException(
                    502,
                    "BAD_GATEWAY",
                    id + " is not a store: its actor has no outbox, or neither an inventory nor a "
                            + "repositories collection");
        }
        String slug = text(a, "preferredUsername");
        if (slug == null) {
            String path = idUri.getPath() == null ? "" : idUri.getPath();
            slug = path.substring(path.lastIndexOf('/') + 1);
        }
        String name = Optional.ofNullable(text(a, "name")).orElse(slug);
        String icon = null;
        JsonNode iconNode = a.path("icon");
        if (iconNode.isArray() && iconNode.size() > 0) {
            iconNode = iconNode.get(0);
        }
        if (iconNode.isTextual()) {
            icon = iconNode.asText();
        } else if (iconNode.path("url").isTextual()) {
            icon = iconNode.path("url").asText();
        }
        String authority = idUri.getPort() < 0 ? idUri.getHost() : idUri.getHost() + ":" + idUri.getPort();
        return new StoreActor(
                id,
                authority,
                clip(slug, 200),
                clip(name, 500),
                clip(Optional.ofNullable(text(a, "summary")).orElse(""), 5000),
                clip(icon, 2048),
                outbox,
                repositories,
                inventory,
                link(a, idUri, "repositorySearch"));
    }

    /** A page of the store's repositories ({@code page} from 1). */
    public Page repositories(StoreActor store, int page, int limit) {
        if (store.repositoriesUrl() != null) {
            return collectionPage(new Walk(), store.repositoriesUrl(), "", page, limit);
        }
        // Model A: the inventory lists canonical repository actor URIs; each is fetched for its fields
        Walk walk = new Walk();
        List<String> ids = new ArrayList<>();
        JsonNode inv = walk.page(store.inventoryUrl());
        long total = inv.path("totalItems").asLong(-1);
        collectItems(walk, inv, ids);
        int from = (page - 1) * limit;
        List<RemoteRepository> out = new ArrayList<>();
        for (int i = from; i < Math.min(ids.size(), from + limit); i++) {
            URI id = uri(ids.get(i), "an inventory item");
            out.add(repositoryFields(walk.fetch(id), id));
        }
        return new Page(out, total < 0 ? ids.size() : total, page, limit);
    }

    /** A page of the store's repositories whose name or description contains {@code q}. */
    public Page search(StoreActor store, String q, int page, int limit) {
        String url = store.repositorySearchUrl();
        if (url == null) {
            throw new ApiException(502, "BAD_GATEWAY", store.actorUrl() + " offers no repository search");
        }
        return collectionPage(new Walk(), url, "q=" + URLEncoder.encode(q, StandardCharsets.UTF_8), page, limit);
    }

    /** The store's repository {@code owner/name}, or 404. */
    public RemoteRepository repository(StoreActor store, String owner, String name) {
        String path = "/" + URLEncoder.encode(owner, StandardCharsets.UTF_8) + "/"
                + URLEncoder.encode(name, StandardCharsets.UTF_8);
        URI target = store.repositoriesUrl() != null
                ? uri(store.repositoriesUrl() + path, "the repository URL")
                : uri(store.actorUrl(), "the actor URL").resolve("/ap/repos" + path);
        try {
            new Walk().spend();
            JsonNode doc = documents.fetch(target, null);
            return store.repositoriesUrl() != null ? repositoryObject(doc, target) : repositoryFields(doc, target);
        } catch (RemoteException e) {
            if (e.getMessage() != null && e.getMessage().endsWith(" answered 404")) {
                throw ApiException.notFound(store.name() + " has no repository " + owner + "/" + name);
            }
            throw new ApiException(
                    e.status(),
                    e.status() == 400 ? "BAD_REQUEST" : e.status() == 504 ? "GATEWAY_TIMEOUT" : "BAD_GATEWAY",
                    e.getMessage());
        }
    }

    /** The newest activities of the store's outbox: its first page and, while they are all new, up to four more. */
    public List<RegistryStore.Activity> outbox(
            StoreActor store, java.util.function.Predicate<List<RegistryStore.Activity>> wantMore) {
        Walk walk = new Walk();
        List<RegistryStore.Activity> all = new ArrayList<>();
        JsonNode doc = walk.page(store.outboxUrl());
        for (int pages = 0; pages < MAX_OUTBOX_PAGES && doc != null; pages++) {
            if (!doc.has("orderedItems") && !doc.has("items")) {
                String first = linkValue(doc.path("first"));
                doc = first == null ? null : walk.page(first);
                continue;
            }
            List<RegistryStore.Activity> page = new ArrayList<>();
            for (JsonNode item : items(doc)) {
                activity(item).ifPresent(page::add);
            }
            all.addAll(page);
            String next = linkValue(doc.path("next"));
            if (next == null || page.isEmpty() || !wantMore.test(page)) {
                break;
            }
            doc = walk.page(next);
        }
        return all;
    }

    private Page collectionPage(Walk walk, String base, String query, int page, int limit) {
        String sep = base.contains("?") ? "&" : "?";
        String url = base + sep + (query.isEmpty() ? "" : query + "&") + "page=" + page + "&limit=" + limit
                + "&expand=object";
        JsonNode doc = walk.fetch(uri(url, "the collection URL"));
        List<RemoteRepository> out = new ArrayList<>();
        for (JsonNode item : items(doc)) {
            if (item.isObject()) {
                out.add(repositoryObject(item, null));
            } else if (item.isTextual()) {
                URI u = uri(item.asText(), "a collection item");
                out.add(repositoryObject(walk.fetch(u), u));
            }
        }
        return new Page(out, doc.path("totalItems").asLong(out.size()), page, limit);
    }

    /** A Model A canonical Repository actor. */
    private static RemoteRepository repositoryFields(JsonNode a, URI fetched) {
        String id = a.path("id").asText(fetched == null ? "" : fetched.toString());
        String clone = null;
        JsonNode cu = a.path("cloneUri");
        if (cu.isArray() && cu.size() > 0) {
            clone = cu.get(0).asText();
        } else if (cu.isTextual()) {
            clone = cu.asText();
        }
        String owner = null;
        String path = uri(id, "the repository's id").getPath();
        int at = path == null ? -1 : path.indexOf("/ap/repos/");
        if (at >= 0) {
            String[] parts = path.substring(at + "/ap/repos/".length()).split("/");
            owner = parts.length > 0 ? parts[0] : null;
        }
        return new RemoteRepository(id, owner, text(a, "name"), text(a, "summary"), clone, linkValue(a.path("url")));
    }

    /** A Model B repository object ({@code ext:} fields) or, failing that, a Model A actor. */
    private static RemoteRepository repositoryObject(JsonNode o, URI fetched) {
        String clone = ext(o, "cloneUrl");
        if (clone == null && o.has("cloneUri")) {
            return repositoryFields(o, fetched);
        }
        return new RemoteRepository(
                o.path("id").asText(fetched == null ? null : fetched.toString()),
                ext(o, "owner"),
                text(o, "name"),
                text(o, "summary"),
                clone,
                Optional.ofNullable(ext(o, "browseUrl")).orElse(linkValue(o.path("url"))));
    }

    private static Optional<RegistryStore.Activity> activity(JsonNode item) {
        String id = text(item, "id");
        String type = typeOf(item.path("type"));
        if (id == null || type == null) {
            return Optional.empty();
        }
        JsonNode object = item.path("object");
        String objectId = null;
        String objectType = null;
        String objectName = null;
        String objectSummary = null;
        if (object.isTextual()) {
            objectId = object.asText();
        } else if (object.isObject()) {
            objectId = text(object, "id");
            objectType = typeOf(object.path("type"));
            objectName = text(object, "name");
            objectSummary = text(object, "summary");
        }
        Instant published = null;
        String p = text(item, "published");
        if (p != null) {
            try {
                published = Instant.parse(p);
            } catch (DateTimeParseException e) {
                // an unreadable timestamp is left out, the activity is still worth showing
            }
        }
        return Optional.of(new RegistryStore.Activity(
                clip(id, 2048),
                clip(type, 100),
                clip(objectId, 2048),
                clip(objectType, 100),
                clip(objectName, 500),
                clip(objectSummary, 5000),
                published));
    }

    private static String typeOf(JsonNode type) {
        if (type.isTextual()) {
            return type.asText();
        }
        if (type.isArray() && type.size() > 0) {
            return type.get(0).asText();
        }
        return null;
    }

    private static Iterable<JsonNode> items(JsonNode collection) {
        JsonNode items = collection.has("orderedItems") ? collection.path("orderedItems") : collection.path("items");
        return items.isArray() ? items : List.of();
    }

    private void collectItems(Walk walk, JsonNode collection, List<String> into) {
        JsonNode doc = collection;
        while (doc != null && into.size() < MAX_INVENTORY_ITEMS) {
            if (!doc.has("orderedItems") && !doc.has("items")) {
                String first = linkValue(doc.path("first"));
                doc = first == null ? null : walk.page(first);
                continue;
            }
            for (JsonNode item : items(doc)) {
                String id = item.isTextual() ? item.asText() : text(item, "id");
                if (id != null) {
                    into.add(id);
                }
            }
            String next = linkValue(doc.path("next"));
            doc = next == null ? null : walk.page(next);
        }
    }

    /** A property that names a URL, under its plain, {@code ext:} or expanded ({@code …#name}) key, resolved against the actor. */
    private static String link(JsonNode a, URI base, String name) {
        String v = linkValue(a.path(name));
        if (v == null) {
            v = ext(a, name);
        }
        if (v == null) {
            return null;
        }
        try {
            return base.resolve(new URI(v)).toString();
        } catch (URISyntaxException | IllegalArgumentException e) {
            return null;
        }
    }

    private static String ext(JsonNode o, String name) {
        JsonNode v = o.path("ext:" + name);
        if (v.isMissingNode()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                if (f.getKey().endsWith("#" + name)) {
                    v = f.getValue();
                    break;
                }
            }
        }
        return linkValue(v);
    }

    private static String linkValue(JsonNode v) {
        if (v.isTextual()) {
            return v.asText();
        }
        if (v.isObject() && v.path("id").isTextual()) {
            return v.path("id").asText();
        }
        if (v.isObject() && v.path("href").isTextual()) {
            return v.path("href").asText();
        }
        return null;
    }

    private static String text(JsonNode o, String name) {
        JsonNode v = o.path(name);
        return v.isTextual() ? v.asText() : null;
    }

    private static String clip(String s, int max) {
        return s == null || s.length() <= max ? s : s.substring(0, max);
    }

    private static URI uri(String s, String what) {
        try {
            URI u = new URI(s);
            if (!u.isAbsolute()) {
                throw ApiException.badRequest(what + " is not an absolute URL");
            }
            return u;
        } catch (URISyntaxException e) {
            throw ApiException.badRequest(what + " is not a valid URL");
        }
    }

    /**
     * Bounds one route's reading of a remote store, whatever the store sends: its wall-clock time, its number of
     * requests, and each collection page read once (a cycle of {@code first}/{@code next} links ends the walk).
     */
    private final class Walk {
        private final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WALK_SECONDS);
        private final Set<String> pages = new HashSet<>();
        private int fetches;

        JsonNode fetch(URI u) {
            spend();
            return get(() -> documents.fetch(u, null));
        }

        JsonNode jrd(URI u) {
            spend();
            return get(() -> documents.fetchJrd(u));
        }

        /** A collection page not read before in this walk, or null. */
        JsonNode page(String url) {
            return pages.add(url) ? fetch(uri(url, "a collection page")) : null;
        }

        void spend() {
            if (++fetches > MAX_FETCHES) {
                throw new ApiException(
                        502, "BAD_GATEWAY", "the store needs more than " + MAX_FETCHES + " requests to answer this");
            }
            if (System.nanoTime() > deadline) {
                throw new ApiException(
                        504, "GATEWAY_TIMEOUT", "the store took longer than " + WALK_SECONDS + " s to answer");
            }
        }
    }

    @FunctionalInterface
    private interface Fetch {
        JsonNode run() throws RemoteException;
    }

    /** A failed fetch as the route's answer: 400 refused address, 502 peer failure, 504 too slow. */
    private static JsonNode get(Fetch f) {
        try {
            return f.run();
        } catch (RemoteException e) {
            String code = switch (e.status()) {
                case 400 -> "BAD_REQUEST";
                case 504 -> "GATEWAY_TIMEOUT";
                default -> "BAD_GATEWAY";
            };
            throw new ApiException(e.status(), code, e.getMessage());
        }
    }
}
