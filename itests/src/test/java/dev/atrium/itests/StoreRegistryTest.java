package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.atrium.itests.AtriumServer.User;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The store-registry client over HTTP: a workspace registers a store that another Principal publishes (by WebFinger
 * {@code slug@domain} and by actor URL), reads and searches its repositories, installs one as its own repository
 * (fetched over Git smart HTTP), polls the store's outbox for updates and marks them seen. Every fetch goes through
 * the egress guard (loopback is allowed for the test server only).
 */
@SharedServer
class StoreRegistryTest {

    private static String host(AtriumServer server) {
        return server.base().replaceFirst("^https?://", "");
    }

    /** A published store of {@code publisher} with two public repositories (one with a commit) and a private one. */
    private static String publish(AtriumServer server, User publisher, String slug) {
        Http.Reply s = publisher
                .http()
                .post(
                        "/api/spaces/" + publisher.defaultSpaceId() + "/stores",
                        Map.of("slug", slug, "name", "Tools of " + slug, "summary", "what we build"));
        assertEquals(201, s.status(), s.body());
        String hammer = repo(publisher, "hammer", "public", "hits nails");
        Http.Reply c = publisher
                .http()
                .post(
                        "/api/repos/" + hammer + "/commit",
                        Map.of(
                                "branch",
                                "main",
                                "message",
                                "first nail",
                                "changes",
                                List.of(Map.of("path", "README.md", "content", "# hammer\n"))));
        assertEquals(201, c.status(), c.body());
        repo(publisher, "saw", "public", "cuts wood");
        repo(publisher, "secret-plans", "private", "nobody sees these");
        return s.get("store").get("actor_url").asText();
    }

    private static String repo(User u, String name, String visibility, String description) {
        Http.Reply r = u.http()
                .post(
                        "/api/spaces/" + u.defaultSpaceId() + "/repos",
                        Map.of("name", name, "visibility", visibility, "description", description));
        assertEquals(201, r.status(), r.body());
        return r.get("repository").get("id").asText();
    }

    private static String registry(User u) {
        return "/api/spaces/" + u.defaultSpaceId() + "/store-registry";
    }

    @Test
    void aWorkspaceRegistersARemoteStoreBrowsesItAndInstallsARepository(AtriumServer server) {
        User publisher = server.newUser();
        String slug = "tools-" + Long.toString(System.nanoTime(), 36);
        String actorUrl = publish(server, publisher, slug);
        User reader = server.newUser();

        Http.Reply reg = reader.http()
                .post(
                        registry(reader),
                        Map.of("identifier", slug + "@" + host(server), "set_active", true, "subscribe", true));
        assertEquals(201, reg.status(), reg.body());
        JsonNode entry = reg.get("store");
        String entryId = entry.get("id").asText();
        assertEquals(actorUrl, entry.get("actor_url").asText(), "WebFinger led to the store's actor");
        assertEquals(slug, entry.get("store_slug").asText());
        assertEquals(host(server), entry.get("domain").asText());
        assertEquals("Tools of " + slug, entry.get("name").asText());
        assertEquals("what we build", entry.get("summary").asText());
        assertTrue(entry.get("is_active").asBoolean());
        assertTrue(entry.get("subscription_enabled").asBoolean());
        BadInputTest.assertSpecError(
                reader.http().post(registry(reader), Map.of("identifier", actorUrl)), 409, "CONFLICT");

        Http.Reply repos = reader.http().get(registry(reader) + "/" + entryId + "/repositories?page=1&limit=10");
        assertEquals(200, repos.status(), repos.body());
        assertEquals(2, repos.get("total").asInt(), repos.body());
        List<String> names = new ArrayList<>();
        repos.get("repositories").forEach(r -> names.add(r.get("name").asText()));
        assertEquals(List.of("hammer", "saw"), names, "public repositories only");
        JsonNode hammer = repos.get("repositories").get(0);
        assertTrue(hammer.get("clone_url").asText().endsWith("/hammer.git"), hammer.toString());
        String owner = hammer.get("owner").asText();
        assertEquals(
                1,
                reader.http()
                        .get(registry(reader) + "/" + entryId + "/repositories?page=2&limit=1")
                        .get("repositories")
                        .size());

        Http.Reply found = reader.http().get(registry(reader) + "/" + entryId + "/repositories/search?q=wood");
        assertEquals(200, found.status(), found.body());
        assertEquals(1, found.get("repositories").size());
        assertEquals("saw", found.get("repositories").get(0).get("name").asText());

        Http.Reply installed = reader.http()
                .post(
                        registry(reader) + "/" + entryId + "/install",
                        Map.of("remote_owner", owner, "remote_repo_name", "hammer", "local_name", "my-hammer"));
        assertEquals(201, installed.status(), installed.body());
        JsonNode repo = installed.get("repository");
        assertEquals("my-hammer", repo.get("name").asText());
        assertEquals(actorUrl, repo.get("remote_store_actor_url").asText());
        assertTrue(repo.get("clone_url").asText().endsWith("/my-hammer.git"), repo.toString());
        Http.Reply readme = reader.http().get("/api/repos/" + repo.get("id").asText() + "/branches");
        assertEquals(200, readme.status(), readme.body());
        assertTrue(readme.body().contains("\"main\""), "the installed copy has the remote's branch: " + readme.body());
        BadInputTest.assertSpecError(
                reader.http()
                        .post(
                                registry(reader) + "/" + entryId + "/install",
                                Map.of("remote_owner", owner, "remote_repo_name", "hammer", "local_name", "my-hammer")),
                409,
                "CONFLICT");
        BadInputTest.assertSpecError(
                reader.http()
                        .post(
                                registry(reader) + "/" + entryId + "/install",
                                Map.of("remote_owner", owner, "remote_repo_name", "secret-plans")),
                404,
                "NOT_FOUND");
        Http.Reply byUrl = reader.http()
                .post(
                        registry(reader) + "/" + entryId + "/import-repository",
                        Map.of(
                                "repository_url",
                                actorUrl + "/repositories/" + owner + "/hammer",
                                "local_name",
                                "hammer-two"));
        assertEquals(201, byUrl.status(), byUrl.body());
        BadInputTest.assertSpecError(
                reader.http()
                        .post(
                                registry(reader) + "/" + entryId + "/import-repository",
                                Map.of("repository_url", "https://elsewhere.example/ap/repos/a/b")),
                400,
                "BAD_REQUEST");

        Http.Reply poll = reader.http().post(registry(reader) + "/" + entryId + "/poll", Map.of());
        assertEquals(200, poll.status(), poll.body());
        // the entry is subscribed, so the background poller (a tick every 30 s) may have recorded them before this poll
        int polled = poll.get("new_updates").asInt();
        int news = reader.http().get(registry(reader) + "/updates").get("total").asInt();
        assertTrue(polled <= news, "this poll recorded " + polled + " of the " + news + " updates");
        assertTrue(
                news >= 2,
                "at least one Create or Update per public repository (Model A adds Announces and Updates): " + news);
        assertEquals(
                0,
                reader.http()
                        .post(registry(reader) + "/" + entryId + "/poll", Map.of())
                        .get("new_updates")
                        .asInt(),
                "an activity is recorded once");
        Http.Reply updates = reader.http().get(registry(reader) + "/updates?unseen=true");
        assertEquals(200, updates.status(), updates.body());
        assertEquals(news, updates.get("total").asInt());
        JsonNode first = updates.get("updates").get(0);
        assertEquals(entryId, first.get("registry_entry_id").asText());
        assertEquals("Tools of " + slug, first.get("store_name").asText());
        assertTrue(
                List.of("Create", "Update", "Announce", "Push")
                        .contains(first.get("activity_type").asText()),
                first.toString());
        assertNotNull(first.get("object_name").asText());
        Http.Reply seen = reader.http()
                .post(
                        registry(reader) + "/updates/mark-seen",
                        Map.of("update_ids", List.of(first.get("id").asText())));
        assertEquals(200, seen.status(), seen.body());
        assertEquals(
                news - 1,
                reader.http()
                        .get(registry(reader) + "/updates?unseen=true")
                        .get("total")
                        .asInt());
        assertEquals(
                200,
                reader.http()
                        .post(registry(reader) + "/updates/mark-seen", Map.of("all", true))
                        .status());
        assertEquals(
                0,
                reader.http()
                        .get(registry(reader) + "/updates?unseen=true")
                        .get("total")
                        .asInt());
        assertEquals(
                news,
                reader.http().get(registry(reader) + "/updates").get("total").asInt());

        Http.Reply refreshed = reader.http().post(registry(reader) + "/" + entryId + "/refresh", Map.of());
        assertEquals(200, refreshed.status(), refreshed.body());
        assertFalse(refreshed.get("store").get("last_fetched_at").isNull());

        Http.Reply deleted = reader.http().delete(registry(reader) + "/" + entryId);
        assertEquals(200, deleted.status(), deleted.body());
        assertTrue(deleted.get("success").asBoolean());
        assertEquals(0, reader.http().get(registry(reader)).get("stores").size());
        assertEquals(
                0,
                reader.http().get(registry(reader) + "/updates").get("total").asInt(),
                "the entry's updates went with it");
    }

    @Test
    void activatingAnEntryDeactivatesTheOthers(AtriumServer server) {
        User publisher = server.newUser();
        String a = publish(server, publisher, "one-" + Long.toString(System.nanoTime(), 36));
        User other = server.newUser();
        String b = publish(server, other, "two-" + Long.toString(System.nanoTime(), 36));
        User reader = server.newUser();
        String first = reader.http()
                .post(registry(reader), Map.of("identifier", a, "set_active", true))
                .get("store")
                .get("id")
                .asText();
        Http.Reply second = reader.http().post(registry(reader), Map.of("identifier", b));
        assertEquals(201, second.status(), second.body());
        assertFalse(second.get("store").get("is_active").asBoolean());
        assertFalse(second.get("store").get("subscription_enabled").asBoolean());
        String secondId = second.get("store").get("id").asText();

        Http.Reply patched = reader.http()
                .patch(registry(reader) + "/" + secondId, Map.of("is_active", true, "subscription_enabled", true));
        assertEquals(200, patched.status(), patched.body());
        assertTrue(patched.get("store").get("is_active").asBoolean());
        assertTrue(patched.get("store").get("subscription_enabled").asBoolean());
        for (JsonNode s : reader.http().get(registry(reader)).get("stores")) {
            assertEquals(
                    s.get("id").asText().equals(secondId), s.get("is_active").asBoolean(), "exactly one active: " + s);
        }
        assertEquals(
                first,
                reader.http()
                        .get(registry(reader))
                        .get("stores")
                        .get(0)
                        .get("id")
                        .asText());
    }

    @Test
    void strangersAndBadInputGetSpecErrorsAndChangeNothing(AtriumServer server) {
        User publisher = server.newUser();
        String actorUrl = publish(server, publisher, "bad-" + Long.toString(System.nanoTime(), 36));
        User reader = server.newUser();
        String entryId = reader.http()
                .post(registry(reader), Map.of("identifier", actorUrl))
                .get("store")
                .get("id")
                .asText();
        User stranger = server.newUser();

        // a stranger's token on the reader's workspace, and the reader's entry id in the stranger's own workspace: 404
        // alike
        for (Http.Reply r : List.of(
                stranger.http().get(registry(reader)),
                stranger.http().post(registry(reader), Map.of("identifier", actorUrl)),
                stranger.http().patch(registry(stranger) + "/" + entryId, Map.of("is_active", true)),
                stranger.http().delete(registry(stranger) + "/" + entryId),
                stranger.http().post(registry(stranger) + "/" + entryId + "/refresh", Map.of()),
                stranger.http().get(registry(stranger) + "/" + entryId + "/repositories"),
                stranger.http().get(registry(stranger) + "/" + entryId + "/repositories/search?q=a"),
                stranger.http()
                        .post(
                                registry(stranger) + "/" + entryId + "/install",
                                Map.of("remote_owner", "a", "remote_repo_name", "b")),
                stranger.http().post(registry(stranger) + "/" + entryId + "/poll", Map.of()),
                stranger.http().get(registry(reader) + "/updates"))) {
            BadInputTest.assertSpecError(r, 404, "NOT_FOUND");
        }

        BadInputTest.assertSpecError(reader.http().post(registry(reader), Map.of()), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().post(registry(reader), Map.of("identifier", "not a store")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().post(registry(reader), Map.of("identifier", "ftp://example.org/x")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().post(registry(reader), Map.of("identifier", "http://10.1.2.3/ap/stores/x")),
                400,
                "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().post(registry(reader), Map.of("identifier", actorUrl + "-missing")), 502, "BAD_GATEWAY");
        BadInputTest.assertSpecError(
                reader.http().post(registry(reader), Map.of("identifier", actorUrl, "set_active", "yes")),
                400,
                "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().patch(registry(reader) + "/" + entryId, Map.of()), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().patch(registry(reader) + "/" + entryId, Map.of("is_active", 1)), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().get(registry(reader) + "/" + entryId + "/repositories?page=0"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().get(registry(reader) + "/" + entryId + "/repositories?limit=101"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().get(registry(reader) + "/" + entryId + "/repositories/search"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().post(registry(reader) + "/" + entryId + "/install", Map.of("remote_owner", "a")),
                400,
                "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http()
                        .post(
                                registry(reader) + "/" + entryId + "/install",
                                Map.of("remote_owner", "a", "remote_repo_name", "b", "local_name", "../x")),
                400,
                "BAD_REQUEST");
        BadInputTest.assertSpecError(reader.http().get(registry(reader) + "/updates?unseen=maybe"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().post(registry(reader) + "/updates/mark-seen", Map.of()), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                reader.http().post(registry(reader) + "/updates/mark-seen", Map.of("update_ids", "x")),
                400,
                "BAD_REQUEST");

        JsonNode stores = reader.http().get(registry(reader)).get("stores");
        assertEquals(1, stores.size(), "nothing was added by the refused requests");
        assertFalse(stores.get(0).get("is_active").asBoolean(), "nor changed");
    }

    /**
     * A hostile store on loopback: endless and cyclic collections, a redirect and a WebFinger link to private addresses,
     * malformed and oversized documents, a peer that never answers. Each route ends, bounded, in a 4xx/5xx spec error or
     * a bounded answer; nothing hangs.
     */
    @Test
    void aHostileStoreIsBoundedAndRefusedNeverHangs(AtriumServer server) throws Exception {
        HttpServer hostile = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        hostile.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        int port = hostile.getAddress().getPort();
        String base = "http://127.0.0.1:" + port;
        hostile.createContext("/", ex -> {
            String path = ex.getRequestURI().getPath();
            String query = ex.getRequestURI().getRawQuery() == null
                    ? ""
                    : ex.getRequestURI().getRawQuery();
            switch (path) {
                case "/.well-known/webfinger" ->
                    send(
                            ex,
                            200,
                            "application/jrd+json",
                            "{\"subject\":\"acct:evil@127.0.0.1:" + port + "\",\"links\":[{\"rel\":\"self\","
                                    + "\"type\":\"application/activity+json\",\"href\":\"http://169.254.169.254/latest/meta-data\"}]}");
                case "/a" ->
                    send(
                            ex,
                            200,
                            "application/activity+json",
                            "{\"id\":\"" + base + "/a\",\"type\":[\"Service\",\"Store\"],"
                                    + "\"name\":\"endless\",\"outbox\":\"" + base + "/outbox\",\"inventory\":\"" + base
                                    + "/inv\"}");
                case "/inv" ->
                    send(
                            ex,
                            200,
                            "application/activity+json",
                            "{\"type\":\"OrderedCollection\",\"totalItems\":1000000000," + "\"first\":\"" + base
                                    + "/inv/page?n=1\"}");
                case "/inv/page" -> {
                    int n = Integer.parseInt(query.replace("n=", ""));
                    StringBuilder items = new StringBuilder();
                    for (int i = 0; i < 100; i++) {
                        items.append(i == 0 ? "" : ",")
                                .append("\"")
                                .append(base)
                                .append("/ap/repos/o/r")
                                .append(n * 100 + i)
                                .append("\"");
                    }
                    send(
                            ex,
                            200,
                            "application/activity+json",
                            "{\"type\":\"OrderedCollectionPage\",\"orderedItems\":[" + items + "],\"next\":\"" + base
                                    + "/inv/page?n=" + (n + 1) + "\"}");
                }
                case "/outbox" ->
                    send(
                            ex,
                            200,
                            "application/activity+json",
                            "{\"type\":\"OrderedCollection\",\"first\":\"" + base + "/outbox/1\"}");
                case "/outbox/1", "/outbox/2" -> {
                    String other = path.endsWith("1") ? "2" : "1";
                    send(
                            ex,
                            200,
                            "application/activity+json",
                            "{\"type\":\"OrderedCollectionPage\",\"orderedItems\":[{\"id\":\"" + base
                                    + "/act/" + path.charAt(path.length() - 1)
                                    + "\",\"type\":\"Create\",\"object\":{\"id\":\"x\",\"name\":\"r\"}}],"
                                    + "\"next\":\"" + base + "/outbox/" + other + "\"}");
                }
                case "/redirect" -> {
                    ex.getResponseHeaders().add("Location", "http://10.0.0.1/a");
                    send(ex, 302, "text/plain", "");
                }
                case "/malformed" -> send(ex, 200, "application/activity+json", "{\"id\": [unclosed");
                case "/huge" -> {
                    ex.getResponseHeaders().add("Content-Type", "application/activity+json");
                    ex.sendResponseHeaders(200, 0);
                    try (OutputStream out = ex.getResponseBody()) {
                        out.write("{\"id\":\"".getBytes(StandardCharsets.UTF_8));
                        byte[] chunk = new byte[64 * 1024];
                        java.util.Arrays.fill(chunk, (byte) 'a');
                        for (int i = 0; i < 64; i++) {
                            out.write(chunk); // 4 MiB
                        }
                    } catch (IOException refusedEarly) {
                        // the fetcher stopped reading at its bound
                    }
                }
                case "/silent" -> {
                    try {
                        Thread.sleep(20_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    send(ex, 200, "application/activity+json", "{}");
                }
                default -> send(ex, 404, "text/plain", "no");
            }
        });
        hostile.start();
        try {
            User reader = server.newUser();
            // endless inventory: the first page of 20 is read from at most 10,000 collected ids, then it stops
            Http.Reply reg = reader.http().post(registry(reader), Map.of("identifier", base + "/a"));
            assertEquals(201, reg.status(), reg.body());
            String entry = reg.get("store").get("id").asText();
            long t0 = System.nanoTime();
            Http.Reply repos = reader.http().get(registry(reader) + "/" + entry + "/repositories?limit=1");
            assertTrue(repos.status() == 200 || repos.status() == 502, repos.body());
            assertTrue(System.nanoTime() - t0 < 35_000_000_000L, "bounded in time");
            // a cyclic outbox: each page is read once
            Http.Reply poll = reader.http().post(registry(reader) + "/" + entry + "/poll", Map.of());
            assertEquals(200, poll.status(), poll.body());
            assertEquals(2, poll.get("new_updates").asInt());

            BadInputTest.assertSpecError(
                    reader.http().post(registry(reader), Map.of("identifier", base + "/redirect")), 400, "BAD_REQUEST");
            BadInputTest.assertSpecError(
                    reader.http().post(registry(reader), Map.of("identifier", "evil@127.0.0.1:" + port)),
                    400,
                    "BAD_REQUEST");
            BadInputTest.assertSpecError(
                    reader.http().post(registry(reader), Map.of("identifier", base + "/malformed")),
                    502,
                    "BAD_GATEWAY");
            BadInputTest.assertSpecError(
                    reader.http().post(registry(reader), Map.of("identifier", base + "/huge")), 502, "BAD_GATEWAY");
            for (String refused : List.of(
                    "http://169.254.169.254/a",
                    "http://metadata.internal/a",
                    "http://store.local/a",
                    "http://x.localhost/a",
                    "http://[::ffff:10.0.0.1]/a",
                    "http://167772161/a",
                    "http://012.0.0.1/a",
                    "http://[fd00::1]/a")) {
                BadInputTest.assertSpecError(
                        reader.http().post(registry(reader), Map.of("identifier", refused)), 400, "BAD_REQUEST");
            }
            t0 = System.nanoTime();
            BadInputTest.assertSpecError(
                    reader.http().post(registry(reader), Map.of("identifier", base + "/silent")),
                    504,
                    "GATEWAY_TIMEOUT");
            assertTrue(System.nanoTime() - t0 < 15_000_000_000L, "the fetch deadline ends a silent peer");
            assertEquals(
                    1, reader.http().get(registry(reader)).get("stores").size(), "only the first store was registered");
        } finally {
            hostile.stop(0);
            ((java.util.concurrent.ExecutorService) hostile.getExecutor()).shutdownNow();
        }
    }

    private static void send(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", type);
        ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }
}
