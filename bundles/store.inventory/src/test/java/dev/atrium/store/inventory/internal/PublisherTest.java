package dev.atrium.store.inventory.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.TestPostgres;
import dev.atrium.repos.api.RepositoryEvents;
import dev.atrium.store.ap.api.Deliveries;
import dev.atrium.store.ap.api.LocalStores;
import dev.atrium.store.inventory.internal.Directory.RepoView;
import dev.atrium.store.inventory.internal.Directory.StoreView;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Repository events and inventory edits become activities kept in PostgreSQL (a second {@link Outboxes} on the same
 * database, as after a restart, reads them all) and queued to followers with absolute URLs on the base each followed by.
 * The directory of repositories and stores is a table in the test; the database is real.
 */
class PublisherTest {

    private static TestPostgres database;
    private static Outboxes outboxes;

    /** The repositories and stores the test's instance has. */
    private final Map<String, RepoView> repos = new HashMap<>();

    private final List<StoreView> automatic = new ArrayList<>();
    private final List<StoreView> explicit = new ArrayList<>();

    record Sent(String actor, URI inbox, JsonNode body) {}

    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    private Publisher publisher;
    private FanOut fanOut;
    private static final AtomicInteger N = new AtomicInteger();
    private String space;

    @BeforeAll
    static void start() throws Exception {
        database = TestPostgres.create("atrium_ap_inventory");
        outboxes = new Outboxes(
                database.dataSource(),
                database.migrations(
                        Outboxes.class,
                        "/db/migration/V1__store_inventory.sql",
                        "/db/migration/V2__inbox_seen_per_actor.sql"),
                TestPostgres.noBundleContext());
    }

    @AfterAll
    static void stop() throws Exception {
        database.close();
    }

    @BeforeEach
    void fresh() {
        space = "sp" + N.incrementAndGet();
        Directory directory = new Directory() {
            @Override
            public Optional<RepoView> repository(String spaceId, String name) {
                return Optional.ofNullable(repos.get(spaceId + "/" + name));
            }

            @Override
            public List<StoreView> automaticStores(String spaceId) {
                return spaceId.equals(space) ? automatic : List.of();
            }

            @Override
            public List<StoreView> explicitStores(String actorPath) {
                return explicit;
            }
        };
        Deliveries deliveries = (actor, inbox, body) -> {
            try {
                sent.add(new Sent(actor, inbox, Outboxes.JSON.readTree(new String(body, StandardCharsets.UTF_8))));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            return "d" + sent.size();
        };
        // what earlier tests left pending goes nowhere
        new FanOut(outboxes, (actor, inbox, body) -> "x", true).drain();
        fanOut = new FanOut(outboxes, deliveries, true);
        publisher = new Publisher(outboxes, directory, () -> {});
    }

    private RepoView repo(String id, String name, boolean isPublic, String description) {
        RepoView r = new RepoView(
                id,
                space,
                "ws-" + space,
                name,
                description,
                isPublic,
                "main",
                null,
                Instant.parse("2026-01-01T00:00:00Z"),
                Instant.now());
        repos.put(space + "/" + name, r);
        return r;
    }

    private void event(String topic, RepoView r, Map<String, Object> extra) {
        Map<String, Object> props = new HashMap<>(extra);
        props.put(RepositoryEvents.REPO_ID, r.id());
        props.put(RepositoryEvents.SPACE_ID, r.spaceId());
        props.put(RepositoryEvents.NAME, r.name());
        publisher.repositoryEvent(topic, props);
    }

    private static List<String> types(String actorPath) {
        List<String> newestFirst = new ArrayList<>(new Outboxes(database.dataSource())
                .outbox(actorPath, 100, 0).stream().map(Outboxes.Stored::type).toList());
        java.util.Collections.reverse(newestFirst);
        return newestFirst;
    }

    private void follow(String actorPath, String follower, String base) {
        assertTrue(outboxes.once(
                follower,
                follower + "#follow-" + actorPath + "-" + space,
                c -> outboxes.follow(c, actorPath, follower, follower + "/inbox", base, follower + "#follow")));
    }

    @Test
    void aPublicRepositoryLivesInItsOutboxAndItsAutomaticStoresOutbox() {
        StoreView store = new StoreView("st1", "shop-" + space);
        automatic.add(store);
        RepoView r = repo("r1-" + space, "site", true, "the site");
        follow(r.actorPath(), "https://peer.example/users/ann", "https://atrium.example");
        event(RepositoryEvents.CREATED, r, Map.of());
        event(RepositoryEvents.UPDATED, repo(r.id(), "site", true, "the new site"), Map.of());
        String tip = "1".repeat(40);
        event(
                RepositoryEvents.PUSHED,
                r,
                Map.of(
                        RepositoryEvents.REFS,
                        List.of("refs/heads/main " + "0".repeat(40) + " " + tip),
                        RepositoryEvents.COMMITS,
                        List.of(Map.of(
                                "sha",
                                tip,
                                "message",
                                "first",
                                "author_name",
                                "Ann",
                                "author_email",
                                "ann@example.org",
                                "time",
                                "2026-01-02T00:00:00Z"))));
        event(
                RepositoryEvents.TAG_CREATED,
                r,
                Map.of(
                        RepositoryEvents.REF,
                        "refs/tags/v1",
                        RepositoryEvents.OLD_ID,
                        "0".repeat(40),
                        RepositoryEvents.NEW_ID,
                        tip));

        assertEquals(
                List.of("Create", "Update", "Push", "Update", "Create"),
                types(r.actorPath()),
                "the default branch moved: an Update");
        assertEquals(List.of("Create", "Update", "Announce", "Update", "Announce"), types(store.actorPath()));

        Outboxes reopened = new Outboxes(database.dataSource());
        ObjectNode push = reopened.outbox(r.actorPath(), 100, 0).stream()
                .filter(s -> s.type().equals("Push"))
                .findFirst()
                .orElseThrow()
                .template();
        JsonNode rendered = Outboxes.render(push, "https://atrium.example");
        assertEquals(
                "https://atrium.example" + r.actorPath(), rendered.get("actor").asText());
        assertEquals("refs/heads/main", rendered.get("target").asText());
        assertEquals(
                "https://atrium.example/ns/ext#",
                rendered.get("@context").get(2).get("ext").asText(),
                "the ext: terms on the base");
        assertEquals("ext:Push", rendered.get("@context").get(2).get("Push").asText());
        assertEquals(Publisher.PUBLIC, rendered.get("to").get(0).asText());
        JsonNode commit = rendered.get("object").get("orderedItems").get(0);
        assertEquals("Commit", commit.get("type").asText());
        assertEquals(tip, commit.get("hash").asText());
        assertEquals("ann@example.org", commit.get("attributedTo").get("email").asText());
        assertTrue(rendered.get("id").asText().startsWith("https://atrium.example" + r.actorPath() + "/activities/"));
        JsonNode tag = reopened.outbox(r.actorPath(), 1, 0).get(0).template().get("object");
        assertEquals("Tag", tag.get("type").asText());
        assertEquals("refs/tags/v1", tag.get("ref").asText());
        assertEquals(tip, tag.get("target").asText());

        // every repository activity reaches the follower once committed, signed as the actor it followed, on its base
        assertEquals(0, sent.size(), "nothing is sent from the event handler");
        assertEquals(10, fanOut.drain(), "five activities of the repository, five of the store");
        assertEquals(0, fanOut.drain(), "each is queued once");
        assertEquals(5, sent.size(), "the store has no followers");
        for (Sent s : sent) {
            assertEquals("https://atrium.example" + r.actorPath(), s.actor());
            assertEquals(URI.create("https://peer.example/users/ann/inbox"), s.inbox());
            assertEquals(s.actor(), s.body().get("actor").asText());
        }
        assertEquals(
                "https://atrium.example/git/ws-" + space + "/site.git",
                sent.get(0).body().get("object").get("cloneUri").get(0).asText());
    }

    @Test
    void privateRepositoriesProduceNothingUntilTheyAreMadePublic() {
        StoreView store = new StoreView("st2", "shop-" + space);
        automatic.add(store);
        RepoView hidden = repo("r2-" + space, "plans", false, "secret");
        event(RepositoryEvents.CREATED, hidden, Map.of());
        event(
                RepositoryEvents.PUSHED,
                hidden,
                Map.of(RepositoryEvents.REFS, List.of("refs/heads/main " + "0".repeat(40) + " " + "2".repeat(40))));
        assertEquals(List.of(), types(hidden.actorPath()));
        assertEquals(List.of(), types(store.actorPath()));

        event(RepositoryEvents.UPDATED, repo(hidden.id(), "plans", true, "now open"), Map.of());
        event(RepositoryEvents.UPDATED, repo(hidden.id(), "plans", false, "closed again"), Map.of());
        event(RepositoryEvents.UPDATED, repo(hidden.id(), "plans", false, "still closed"), Map.of());
        assertEquals(List.of("Create", "Delete"), types(hidden.actorPath()));
        assertEquals(List.of("Create", "Announce"), types(store.actorPath()));

        RepoView open = repo("r3-" + space, "open", true, "");
        event(RepositoryEvents.CREATED, open, Map.of());
        repos.remove(space + "/open");
        event(RepositoryEvents.DELETED, open, Map.of());
        event(RepositoryEvents.DELETED, open, Map.of());
        assertEquals(List.of("Create", "Delete"), types(open.actorPath()));
        assertEquals(
                "Tombstone",
                new Outboxes(database.dataSource())
                        .outbox(open.actorPath(), 1, 0)
                        .get(0)
                        .template()
                        .get("object")
                        .get("type")
                        .asText());
    }

    @Test
    void aDeletedActorsFollowersGetItsDeleteAndThenFollowItNoMore() {
        RepoView r = repo("r6-" + space, "short-lived", true, "");
        event(RepositoryEvents.CREATED, r, Map.of());
        follow(r.actorPath(), "https://peer.example/users/eve", "https://atrium.example");
        repos.remove(space + "/short-lived");
        event(RepositoryEvents.DELETED, r, Map.of());
        fanOut.drain();
        assertEquals(
                List.of("Create", "Delete"),
                sent.stream().map(x -> x.body().get("type").asText()).toList());
        assertEquals(
                0, outboxes.followerCount(r.actorPath()), "a new repository of the same name starts with no followers");

        String store = Model.storePath("gone-" + space);
        follow(store, "https://peer.example/users/eve", "https://atrium.example");
        publisher.storeDeleted("gone-" + space);
        fanOut.drain();
        JsonNode delete = sent.get(sent.size() - 1).body();
        assertEquals("Delete", delete.get("type").asText());
        assertEquals(
                "https://atrium.example" + store, delete.get("object").get("id").asText());
        assertEquals(0, outboxes.followerCount(store));
    }

    @Test
    void aRenamedRepositoryIsDeletedUnderItsOldActorAndCreatedUnderItsNew() {
        RepoView before = repo("r4-" + space, "old-name", true, "");
        event(RepositoryEvents.CREATED, before, Map.of());
        repos.remove(space + "/old-name");
        RepoView after = repo(before.id(), "new-name", true, "");
        event(RepositoryEvents.UPDATED, after, Map.of());
        assertEquals(List.of("Create", "Delete"), types(before.actorPath()));
        assertEquals(List.of("Create"), types(after.actorPath()));
    }

    @Test
    void explicitInventoryEditsAreAddAndRemoveAndListedRepositoriesAreAnnounced() {
        StoreView store = new StoreView("st5", "picks-" + space);
        explicit.add(store);
        follow(store.actorPath(), "https://peer.example/users/bob", "http://127.0.0.1:9");
        publisher.inventoryEvent(
                LocalStores.INVENTORY_ADDED,
                Map.of(
                        LocalStores.STORE_SLUG,
                        store.slug(),
                        LocalStores.STORE_ID,
                        store.id(),
                        LocalStores.REPOSITORY_URI,
                        "https://elsewhere.example/ap/repos/x/y"));
        RepoView r = repo("r5-" + space, "listed", true, "");
        event(RepositoryEvents.CREATED, r, Map.of());
        publisher.inventoryEvent(
                LocalStores.INVENTORY_REMOVED,
                Map.of(
                        LocalStores.STORE_SLUG,
                        store.slug(),
                        LocalStores.STORE_ID,
                        store.id(),
                        LocalStores.REPOSITORY_URI,
                        "https://elsewhere.example/ap/repos/x/y"));
        assertEquals(List.of("Add", "Announce", "Remove"), types(store.actorPath()));
        fanOut.drain();
        JsonNode add = sent.get(0).body();
        assertEquals("Add", add.get("type").asText());
        assertEquals(
                "https://elsewhere.example/ap/repos/x/y", add.get("object").asText(), "a remote URI is kept as it is");
        assertEquals(
                "http://127.0.0.1:9" + store.actorPath() + "/inventory",
                add.get("target").asText());
        assertEquals("http://127.0.0.1:9" + store.actorPath(), sent.get(0).actor());
        assertTrue(sent.get(1)
                .body()
                .get("object")
                .asText()
                .startsWith("http://127.0.0.1:9" + r.actorPath() + "/activities/"));
    }

    @Test
    void anAcceptGoesToItsOneInboxAndSurvivesARestartBeforeItIsQueued() {
        follow("/ap/stores/s-" + space, "https://peer.example/users/carl", "https://atrium.example");
        ObjectNode accept = Publisher.activity("Accept", "/ap/stores/s-" + space);
        assertTrue(outboxes.once(
                "https://peer.example/users/dora",
                "https://peer.example/follows/" + space,
                c -> Outboxes.append(
                        c,
                        "/ap/stores/s-" + space,
                        accept,
                        "https://peer.example/users/dora/inbox",
                        "https://atrium.example")));
        // the instance that kept it stops before queuing it; another (or the same after a restart) queues it
        FanOut afterRestart = new FanOut(
                new Outboxes(database.dataSource()),
                (actor, inbox, body) -> {
                    sent.add(new Sent(actor, inbox, null));
                    return "d";
                },
                true);
        assertEquals(1, afterRestart.drain());
        assertEquals(
                List.of(URI.create("https://peer.example/users/dora/inbox")),
                sent.stream().map(Sent::inbox).toList(),
                "only its follower gets the Accept, not every follower of the store");
        assertEquals("https://atrium.example/ap/stores/s-" + space, sent.get(0).actor());
    }

    @Test
    void anInboxTakesAnActivityIdOnce() {
        AtomicInteger effects = new AtomicInteger();
        String id = "https://peer.example/activities/" + space;
        String actor = "https://peer.example/users/ann";
        assertTrue(outboxes.once(actor, id, c -> effects.incrementAndGet()));
        assertFalse(outboxes.once(actor, id, c -> effects.incrementAndGet()));
        assertTrue(outboxes.seen(actor, id));
        assertEquals(1, effects.get());
    }

    /** A replay record belongs to its sender: another actor sending the same id first shadows nothing (issue 32, finding 5). */
    @Test
    void anActivityIdTakenByOneActorIsStillFreeForAnother() {
        AtomicInteger effects = new AtomicInteger();
        String id = "https://victim.example/activities/undo-" + space;
        assertTrue(outboxes.once("https://hostile.example/users/mallory", id, c -> effects.incrementAndGet()));
        assertFalse(outboxes.seen("https://victim.example/users/alice", id));
        assertTrue(outboxes.once("https://victim.example/users/alice", id, c -> effects.incrementAndGet()));
        assertFalse(outboxes.once("https://victim.example/users/alice", id, c -> effects.incrementAndGet()));
        assertEquals(2, effects.get());
    }

    @Test
    void anOriginIsSchemeHostAndPort() {
        assertTrue(dev.atrium.store.ap.api.Origins.same(
                "https://a.example/users/x", "https://A.example:443/activities/1"));
        assertTrue(dev.atrium.store.ap.api.Origins.same("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b#c"));
        assertFalse(dev.atrium.store.ap.api.Origins.same("http://127.0.0.1:8080/a", "http://127.0.0.1:8081/a"));
        assertFalse(dev.atrium.store.ap.api.Origins.same("http://a.example/a", "https://a.example/a"));
        assertFalse(dev.atrium.store.ap.api.Origins.same("https://a.example/a", "https://a.example.evil/a"));
        assertFalse(dev.atrium.store.ap.api.Origins.same("urn:x:a", "urn:x:a"));
    }
}
