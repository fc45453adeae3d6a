package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Workspace search against an embeddings API on loopback whose vectors carry meaning ({@link FakeEmbeddings}): hybrid
 * answers, isolation between Principals, semantic thread search, graph neighbours, file paths, the index's upkeep, and
 * a server killed while indexing whose Lucene indexes are also deleted. One server of its own (its embeddings API is
 * the fake), on a database the test reads too.
 */
@Timeout(180)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SearchTest {

    static FakeEmbeddings embeddings;
    static TestDatabase db;
    static Path data;
    static AtriumServer server;

    @BeforeAll
    static void start() throws Exception {
        embeddings = new FakeEmbeddings();
        db = TestDatabase.create();
        data = Files.createTempDirectory("atrium-search-");
        server = AtriumServer.launch(data, db, env());
    }

    static Map<String, String> env() {
        return Map.of(
                "ATRIUM_EMBEDDINGS_BASE_URL", embeddings.base(),
                "ATRIUM_EMBEDDINGS_API_KEY", "sk-test-embeddings",
                "ATRIUM_EMBEDDINGS_BATCH", "16",
                "ATRIUM_SEARCH_POLL_MS", "200",
                "ATRIUM_SEARCH_INDEX_INTERVAL_S", "3600");
    }

    @AfterAll
    static void stop() throws Throwable {
        if (server != null) {
            server.close();
        }
        if (embeddings != null) {
            embeddings.close();
        }
    }

    static Http http(User u) {
        return new Http(server.base(), u.http().token());
    }

    static void memory(User u, String content) {
        Http.Reply r = http(u).post("/api/spaces/" + u.defaultSpaceId() + "/memories", Map.of("content", content));
        assertEquals(201, r.status(), r.body());
    }

    /** Waits until the workspace's index holds at least {@code items} items, every one embedded and in Lucene. */
    static JsonNode indexed(User u, int items) throws InterruptedException {
        long end = System.nanoTime() + 60_000_000_000L;
        JsonNode status = null;
        while (System.nanoTime() < end) {
            Http.Reply r = http(u).get("/api/spaces/" + u.defaultSpaceId() + "/index/status");
            if (r.status() == 200) {
                status = r.json();
                if (status.path("items").asLong() >= items
                        && status.path("embedded").asLong()
                                == status.path("items").asLong()
                        && status.path("index_documents").asLong()
                                == status.path("embedded").asLong()) {
                    return status;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the index did not reach " + items + " items: " + status);
    }

    static JsonNode search(User u, String query) {
        Http.Reply r =
                http(u).post("/api/spaces/" + u.defaultSpaceId() + "/search", Map.of("query", query, "limit", 10));
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    static JsonNode find(JsonNode answer, String snippetPart) {
        for (JsonNode r : answer.path("results")) {
            if (r.path("snippet").asText().contains(snippetPart)) {
                return r;
            }
        }
        return null;
    }

    static User alice;

    @Test
    @Order(1)
    void searchFindsByMeaningWhatKeywordsMissAndByIdentifierWhatVectorsRankLowAndMergesBoth() throws Exception {
        alice = server.newUser();
        memory(alice, "Take the automobile to the mechanic every spring");
        memory(alice, "Ticket KX4471 tracks the flaky sign-in page");
        memory(alice, "Lunch is served at noon on Fridays");
        memory(alice, "The kitten sleeps on the warm laptop");
        memory(alice, "Backups of the database run nightly");
        indexed(alice, 5);

        String memories = "/api/spaces/" + alice.defaultSpaceId() + "/memories/search?q=";
        assertEquals(
                0, http(alice).get(memories + "car%20repair").get("memories").size(), "keywords miss it");
        JsonNode byMeaning = search(alice, "car repair");
        assertEquals("hybrid", byMeaning.path("mode").asText(), byMeaning.toString());
        JsonNode car = byMeaning.path("results").path(0);
        assertTrue(car.path("snippet").asText().contains("automobile"), byMeaning.toString());
        assertEquals("memory", car.path("kind").asText());
        assertTrue(car.path("keyword_rank").isNull(), "found by meaning only: " + car);
        assertTrue(car.path("similarity").asDouble() > 0.5, car.toString());

        JsonNode byIdentifier = search(alice, "KX4471");
        JsonNode ticket = find(byIdentifier, "KX4471");
        assertNotNull(ticket, byIdentifier.toString());
        assertEquals(1, ticket.path("keyword_rank").asInt(), ticket.toString());
        assertEquals(ticket, byIdentifier.path("results").path(0), "the identifier's item comes first");
        assertTrue(ticket.path("similarity").asDouble() < 0.2, "vectors rank the identifier low: " + ticket);

        JsonNode both = search(alice, "car repair KX4471");
        JsonNode top2 = both.path("results");
        List<String> firstTwo = List.of(
                top2.path(0).path("snippet").asText(),
                top2.path(1).path("snippet").asText());
        assertTrue(firstTwo.stream().anyMatch(s -> s.contains("automobile")), both.toString());
        assertTrue(firstTwo.stream().anyMatch(s -> s.contains("KX4471")), both.toString());

        assertFalse(both.path("cached").asBoolean());
        assertTrue(search(alice, "car repair KX4471").path("cached").asBoolean(), "an equal search is kept");
        memory(alice, "The sedan needs new tyres");
        indexed(alice, 6);
        JsonNode fresh = search(alice, "car repair KX4471");
        assertFalse(fresh.path("cached").asBoolean(), "a change of the index drops kept answers");
        assertNotNull(find(fresh, "sedan"), fresh.toString());
    }

    @Test
    @Order(2)
    void searchNeverShowsAnotherWorkspacesItemAndEveryRouteAnswersAStrangerAsAMissingWorkspace() throws Exception {
        User a = server.newUser();
        User b = server.newUser();
        memory(a, "The automobile mechanic of Alice's team");
        memory(b, "The automobile mechanic of Bob's team");
        memory(b, "Bob keeps the vehicle repair log");
        indexed(a, 1);
        indexed(b, 2);
        for (String q : List.of("automobile mechanic", "car repair", "vehicle repair log", "Bob")) {
            JsonNode answer = search(a, q);
            for (JsonNode r : answer.path("results")) {
                assertFalse(r.path("snippet").asText().contains("Bob"), q + ": " + answer);
            }
        }
        String space = "/api/spaces/" + b.defaultSpaceId();
        Http stranger = http(a);
        List<Http.Reply> replies = List.of(
                stranger.post(space + "/search", Map.of("query", "repair")),
                stranger.get(space + "/search/quick?q=a"),
                stranger.get(space + "/index/status"),
                stranger.post(space + "/index/vectorize", Map.of()),
                stranger.post(space + "/index/rebuild", Map.of()),
                stranger.post(space + "/index/file", Map.of("path", "a.md")),
                stranger.get(space + "/graph/neighbors?kind=memory&id=x"),
                stranger.get(space + "/threads/search?q=repair&mode=semantic"));
        Http.Reply missing = stranger.get("/api/spaces/spc_doesnotexist000000/index/status");
        assertEquals(404, missing.status());
        for (Http.Reply r : replies) {
            assertEquals(404, r.status(), r.body());
            assertEquals(missing.json(), r.json(), "the same 404 as for a missing workspace");
        }
        // a result id of the other workspace named in a graph query is a missing item
        String bobMemory = search(b, "vehicle repair log")
                .path("results")
                .path(0)
                .path("id")
                .asText();
        Http.Reply foreign =
                http(a).get("/api/spaces/" + a.defaultSpaceId() + "/graph/neighbors?kind=memory&id=" + bobMemory);
        assertEquals(404, foreign.status(), foreign.body());
    }

    @Test
    @Order(3)
    void threadsAreSearchedByMeaningAndLinkedToTheirMessagesAndNeighbours() throws Exception {
        User u = server.newUser();
        Http h = http(u);
        String thread = h.post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", "Spring plans"))
                .get("thread")
                .get("id")
                .asText();
        Http.Reply m = h.post(
                "/api/threads/" + thread + "/messages",
                Map.of("role", "user", "content", "The truck goes to the garage on Monday"));
        assertEquals(201, m.status(), m.body());
        String other = h.post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", "Dinner"))
                .get("thread")
                .get("id")
                .asText();
        h.post("/api/threads/" + other + "/messages", Map.of("role", "user", "content", "A recipe for the weekend"));
        memory(u, "Vehicle servicing checklist, see [[Spring plans]]");
        indexed(u, 5);

        String search = "/api/spaces/" + u.defaultSpaceId() + "/threads/search?q=car%20repair";
        assertEquals(0, h.get(search).get("threads").size(), "keyword mode finds no word of it");
        JsonNode semantic = h.get(search + "&mode=semantic").json();
        assertEquals("semantic", semantic.path("mode").asText());
        assertEquals(thread, semantic.path("threads").path(0).path("id").asText(), semantic.toString());
        assertEquals(400, h.get(search + "&mode=magic").status());
        Http.Reply deep = h.get(search + "&mode=semantic&offset=429496700");
        assertEquals(400, deep.status(), deep.body());
        assertEquals("BAD_REQUEST", deep.errorCode(), deep.body());
        assertEquals(400, h.get(search + "&mode=semantic&offset=490&limit=20").status(), "past the 500 nearest");
        assertEquals(200, h.get(search + "&mode=semantic&offset=480&limit=20").status());

        String messageId = null;
        for (JsonNode r : search(u, "truck garage").path("results")) {
            if (r.path("kind").asText().equals("message")
                    && r.path("snippet").asText().contains("truck")) {
                messageId = r.path("id").asText();
                assertEquals("thread:" + thread, r.path("parent_id").asText());
            }
        }
        assertNotNull(messageId);
        String graph = "/api/spaces/" + u.defaultSpaceId() + "/graph/neighbors";
        JsonNode ofMessage = h.get(graph + "?kind=message&id=" + messageId).json();
        assertTrue(has(ofMessage, "thread", thread, "parent"), ofMessage.toString());
        assertTrue(hasEdge(ofMessage, "similar"), ofMessage.toString());
        JsonNode ofThread = h.get(graph + "?kind=thread&id=" + thread).json();
        assertTrue(has(ofThread, "message", messageId, "child"), ofThread.toString());
        assertTrue(hasEdge(ofThread, "linked_from"), "the memory links to the thread by title: " + ofThread);
        assertEquals(400, h.get(graph + "?kind=memory").status());
        assertEquals(400, h.get(graph + "?kind=memory&id=x&limit=0").status());
        assertEquals(404, h.get(graph + "?kind=memory&id=mem_missing").status());
    }

    static boolean has(JsonNode neighbors, String kind, String id, String edge) {
        for (JsonNode n : neighbors.path("neighbors")) {
            if (n.path("kind").asText().equals(kind)
                    && n.path("id").asText().equals(id)
                    && n.path("edge").asText().equals(edge)) {
                return true;
            }
        }
        return false;
    }

    static boolean hasEdge(JsonNode neighbors, String edge) {
        for (JsonNode n : neighbors.path("neighbors")) {
            if (n.path("edge").asText().equals(edge)) {
                return true;
            }
        }
        return false;
    }

    @Test
    @Order(4)
    void filesAreFoundByPathPrefixAndFuzzilyAndByTheirText() throws Exception {
        User u = server.newUser();
        Http h = http(u);
        String files = "/api/spaces/" + u.defaultSpaceId() + "/storage/files";
        for (String[] f : List.of(
                new String[] {"docs/release-plan.md", "How we ship a release: tag, build, rollout"},
                new String[] {"src/parser/JsonReader.java", "class JsonReader { /* parses json */ }"},
                new String[] {"notes/lunch.txt", "Meal ideas"})) {
            Http.Reply r = h.post(files, Map.of("path", f[0], "content", f[1]));
            assertEquals(201, r.status(), r.body());
        }
        Http.Reply now = h.post(
                "/api/spaces/" + u.defaultSpaceId() + "/index/file", Map.of("path", "src/parser/JsonReader.java"));
        assertEquals(200, now.status(), now.body());
        assertTrue(now.json().path("indexed").asBoolean());
        assertEquals(
                404,
                h.post("/api/spaces/" + u.defaultSpaceId() + "/index/file", Map.of("path", "no/such.md"))
                        .status());
        indexed(u, 3);
        String quick = "/api/spaces/" + u.defaultSpaceId() + "/search/quick?q=";
        JsonNode prefix = h.get(quick + "release").json();
        assertEquals(
                "docs/release-plan.md",
                prefix.path("files").path(0).path("path").asText(),
                prefix.toString());
        assertEquals("prefix", prefix.path("files").path(0).path("match").asText());
        JsonNode fuzzy = h.get(quick + "jsnrdr").json();
        assertEquals(
                "src/parser/JsonReader.java",
                fuzzy.path("files").path(0).path("path").asText(),
                fuzzy.toString());
        assertEquals("fuzzy", fuzzy.path("files").path(0).path("match").asText());
        assertEquals(0, h.get(quick + "zzzq").get("files").size());
        assertEquals(400, h.get(quick).status());
        JsonNode byText = search(u, "deployment");
        assertEquals("file", byText.path("results").path(0).path("kind").asText(), byText.toString());
        assertEquals(
                "docs/release-plan.md",
                byText.path("results").path(0).path("title").asText());
    }

    @Test
    @Order(5)
    void upkeepIsRateLimitedPerWorkspaceAndBadInputIsRefusedWithTheSpecBody() throws Exception {
        User u = server.newUser();
        memory(u, "A note to embed");
        indexed(u, 1);
        String index = "/api/spaces/" + u.defaultSpaceId() + "/index/";
        Http.Reply first = http(u).post(index + "vectorize", Map.of());
        assertEquals(200, first.status(), first.body());
        Http.Reply second = http(u).post(index + "rebuild", Map.of());
        assertEquals(429, second.status(), second.body());
        assertEquals("RATE_LIMITED", second.errorCode());
        long retry =
                Long.parseLong(second.raw().headers().firstValue("Retry-After").orElseThrow());
        assertTrue(retry > 3500 && retry <= 3600, "Retry-After " + retry);
        User other = server.newUser();
        assertEquals(
                200,
                http(other)
                        .post("/api/spaces/" + other.defaultSpaceId() + "/index/rebuild", Map.of())
                        .status(),
                "another workspace has its own allowance");

        String search = "/api/spaces/" + u.defaultSpaceId() + "/search";
        for (Object body : List.of(
                Map.of(),
                Map.of("query", ""),
                Map.of("query", "   "),
                Map.of("query", 42),
                Map.of("query", "x".repeat(1001)),
                Map.of("query", "ok", "limit", 0),
                Map.of("query", "ok", "limit", 51),
                Map.of("query", "ok", "limit", "ten"))) {
            Http.Reply r = http(u).post(search, body);
            assertEquals(400, r.status(), body + ": " + r.body());
            assertNotNull(r.errorCode(), r.body());
        }
    }

    @Test
    @Order(6)
    void aDeletedItemIsNeverShownAgain() throws Exception {
        User u = server.newUser();
        memory(u, "The feline naps in the sun");
        indexed(u, 1);
        JsonNode hit = search(u, "cat");
        String id = hit.path("results").path(0).path("id").asText();
        assertEquals(200, http(u).delete("/api/memories/" + id).status());
        JsonNode after = search(u, "kitten cat");
        assertNull(find(after, "feline"), after.toString());
    }

    @Test
    @Order(7)
    void aRepositoryIsSearchedByMeaningAndAPushReembedsOnlyTheFilesItChanged(@TempDir Path tmp) throws Exception {
        User u = server.newUser();
        Http h = http(u);
        Http.Reply created =
                h.post("/api/spaces/" + u.defaultSpaceId() + "/repos", Map.of("name", "big", "visibility", "private"));
        assertEquals(201, created.status(), created.body());
        String repoId = created.json().path("repository").path("id").asText();
        String index = "/api/repos/" + repoId + "/semantic-index";
        String search = "/api/repos/" + repoId + "/semantic-search?q=";
        assertEquals(409, h.get(search + "sorting").status(), "not indexed yet");

        GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
        Path work = git.newWorkingCopy(tmp.resolve("work"), "README.md", "The big repository\n");
        for (int i = 0; i < 1999; i++) {
            Path f = work.resolve("gen/m" + (i % 40) + "/file_" + i + ".js");
            Files.createDirectories(f.getParent());
            Files.writeString(f, "export function add_" + i + "(a, b) {\n  return a + b + " + i + ";\n}\n");
        }
        Files.createDirectories(work.resolve("src"));
        Files.writeString(
                work.resolve("src/ordering.js"),
                "import x from './x.js';\n\nexport function sortItems(list) {\n  // orders the items of an array\n"
                        + "  return [...list].sort((a, b) => a - b);\n}\n");
        git.ok(work, "add", "-A");
        git.ok(work, "commit", "-q", "-m", "two thousand files");
        String url = server.base() + "/git/" + u.username() + "/big.git";
        git.ok(work, "push", "-q", url, "main");

        Http.Reply indexed = h.post(index, Map.of());
        assertEquals(200, indexed.status(), indexed.body());
        assertEquals(2001, indexed.json().path("files").asInt(), indexed.body());
        assertEquals(
                git.ok(work, "rev-parse", "HEAD"), indexed.json().path("commit").asText());

        JsonNode found = h.get(search + "sorting%20a%20list").json();
        JsonNode top = found.path("results").path(0);
        assertEquals("src/ordering.js", top.path("path").asText(), found.toString());
        assertEquals("sortItems", top.path("symbol").asText(), top.toString());
        assertTrue(top.path("start_line").asInt() <= 3 && top.path("end_line").asInt() >= 6, top.toString());

        long before = embeddings.embedded("gen/m");
        assertEquals(1999, before, "each generated file embedded once");
        for (int i : new int[] {5, 777, 1500}) {
            Files.writeString(
                    work.resolve("gen/m" + (i % 40) + "/file_" + i + ".js"),
                    "export function add_" + i + "(a, b) {\n  return b + a;\n}\n");
        }
        git.ok(work, "commit", "-q", "-am", "three files");
        git.ok(work, "push", "-q", url, "main");
        String head = git.ok(work, "rev-parse", "HEAD");
        long end = System.nanoTime() + 30_000_000_000L;
        while (!head.equals(h.get(search + "sorting").json().path("commit").asText()) && System.nanoTime() < end) {
            Thread.sleep(100);
        }
        assertEquals(head, h.get(search + "sorting").json().path("commit").asText(), "the push was indexed");
        assertEquals(before + 3, embeddings.embedded("gen/m"), "only the 3 changed files were embedded again");
        for (int i : new int[] {5, 777, 1500}) {
            assertEquals(2, embeddings.embedded("gen/m" + (i % 40) + "/file_" + i + ".js"));
        }
        assertEquals(1, embeddings.embedded("gen/m6/file_6.js"));

        User stranger = server.newUser();
        Http.Reply foreign = http(stranger).get(search + "sorting");
        assertEquals(404, foreign.status(), foreign.body());
        assertEquals(404, http(stranger).post(index, Map.of()).status());
        assertEquals(400, h.get("/api/repos/" + repoId + "/semantic-search").status());
        assertEquals(400, h.get(search + "x&limit=0").status());
    }

    @Test
    @Order(9)
    void aServerKilledWhileIndexingLosesNothingAndRebuildsLostIndexesWithTheSameAnswers() throws Exception {
        List<String> before = answerKeys(search(alice, "car repair KX4471"));
        User c = server.newUser();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> writes = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            int n = i;
            writes.add(pool.submit(() -> memory(c, "bulk note " + n + " about topic " + (n % 7))));
        }
        for (Future<?> w : writes) {
            w.get();
        }
        pool.shutdown();
        embeddings.delayMillis = 150; // indexing is under way when the server dies
        long end = System.nanoTime() + 30_000_000_000L;
        long embedded = 0;
        while (System.nanoTime() < end) {
            embedded = count("SELECT count(*) FROM search_items WHERE space_id = '" + c.defaultSpaceId()
                    + "' AND embedding IS NOT NULL");
            if (embedded >= 32) {
                break;
            }
            Thread.sleep(20);
        }
        assertTrue(embedded >= 32 && embedded < 400, "killed while indexing: " + embedded + " of 400 embedded");
        server.killHard();
        AtriumServer.deleteTree(data.resolve("search").resolve("lucene").toFile());
        assertFalse(Files.exists(data.resolve("search/lucene")));
        embeddings.delayMillis = 0;
        server = AtriumServer.launch(data, db, env());

        JsonNode status = indexed(c, 400);
        assertEquals(400, status.path("items").asLong(), status.toString());
        assertEquals(400, status.path("index_documents").asLong(), status.toString());
        assertEquals(
                400,
                count("SELECT count(DISTINCT item_id) FROM search_items WHERE kind = 'memory' AND space_id = '"
                        + c.defaultSpaceId() + "'"));
        for (int i = 0; i < 400; i += 97) {
            assertTrue(embeddings.embedded("bulk note " + i + " about") >= 1, "note " + i + " was embedded");
        }
        assertEquals(before, answerKeys(search(alice, "car repair KX4471")), "the same answers from the rebuilt index");
    }

    /**
     * The results that matched by a word or by meaning, in order (not the near-zero similarity tail, whose order among
     * equals is arbitrary, nor the fused scores, which move with a result's place in that tail).
     */
    static List<String> answerKeys(JsonNode answer) {
        List<String> keys = new ArrayList<>();
        for (JsonNode r : answer.path("results")) {
            if (!r.path("keyword_rank").isNull() || r.path("similarity").asDouble() > 0.05) {
                keys.add(r.path("kind").asText() + ":" + r.path("id").asText());
            }
        }
        assertFalse(keys.isEmpty(), answer.toString());
        return keys;
    }

    static long count(String sql) throws Exception {
        try (Connection c = db.connect();
                ResultSet rs = c.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
