package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Explore (issue 40, part A): public repositories, the catalog and suggestions, packages, seed repositories, and
 * repositories by owner name. Private repositories never show, to anonymous or signed-in callers.
 */
@SharedServer
class ExploreTest {

    private static final String ZERO = "0".repeat(40);

    private static String unique(String prefix) {
        return prefix + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
    }

    private static String repo(User u, String name, String visibility, String description) {
        Http.Reply r = u.http()
                .post(
                        "/api/spaces/" + u.defaultSpaceId() + "/repos",
                        Map.of("name", name, "visibility", visibility, "description", description));
        assertEquals(201, r.status(), r.body());
        return r.get("repository").get("id").asText();
    }

    private static String commit(User u, String repoId, String parent, String path, String content) {
        return ReposApiTest.sha(ReposApiTest.commit(
                u, repoId, "main", parent, "add " + path, List.of(ReposApiTest.file(path, content))));
    }

    private static String q(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static List<String> ids(JsonNode list) {
        List<String> out = new ArrayList<>();
        list.forEach(n ->
                out.add(n.has("id") ? n.get("id").asText() : n.path("repo_id").asText()));
        return out;
    }

    @Test
    void noExploreRouteShowsAPrivateRepositoryOrItsNameToAnonymousOrSignedInCallers(AtriumServer server) {
        User a = server.newUser();
        User b = server.newUser();
        String word = unique("zebrafish");
        String pubA = repo(a, word + "-tools", "public", "Public " + word + " helpers");
        String secretName = unique("secretplan");
        String privA = repo(a, secretName, "private", "Private " + word + " " + secretName + " notes");
        String pubB = repo(b, unique("bpub"), "public", "B's public " + word);
        String privB = repo(b, unique("bsecret"), "private", "B's private " + word);
        String privBName = b.http()
                .get("/api/repos/" + privB)
                .get("repository")
                .get("name")
                .asText();
        // the private ones have everything a listing could pick them up by: topics, the catalog mark, pushes, stars,
        // a versioned release
        for (String id : List.of(privA, pubA)) {
            assertEquals(
                    200,
                    a.http()
                            .patch("/api/repos/" + id, Map.of("topics", List.of(word, "privacy"), "catalog", true))
                            .status());
            commit(a, id, ZERO, "Main.java", "class Main {}\n");
            assertEquals(
                    201,
                    a.http()
                            .post("/api/repos/" + id + "/releases", Map.of("tag_name", "v1.0.0"))
                            .status());
            assertEquals(200, a.http().post("/api/repos/" + id + "/star", null).status());
        }
        String pubAName = word + "-tools";

        // the public one is found (by name, topic, description, fuzzy name), with its language detected at push
        JsonNode found =
                server.anonymous().get("/api/explore/repos?q=" + q(word)).get("repositories");
        assertTrue(ids(found).contains(pubA), found.toString());
        assertTrue(ids(found).contains(pubB), found.toString());
        JsonNode item = found.get(ids(found).indexOf(pubA));
        assertEquals("Java", item.get("language").asText(), item.toString());
        assertEquals(a.username() + "/" + pubAName, item.get("full_name").asText());
        assertFalse(item.has("space_id"), "explore never shows a workspace id");
        assertTrue(
                ids(server.anonymous()
                                .get("/api/explore/repos?q=" + q(word.substring(0, word.length() - 1) + "x"))
                                .get("repositories"))
                        .contains(pubA),
                "a misspelt name is found by trigrams");

        List<String> routes = new ArrayList<>();
        for (String term : List.of(secretName, privBName, word)) {
            String t = q(term);
            routes.addAll(List.of(
                    "/api/explore/repos?q=" + t,
                    "/api/explore/repos?q=" + t + "&sort=name",
                    "/api/explore/repos?q=" + t + "&sort=stars&limit=100",
                    "/api/explore/repos?owner=" + a.username() + "&q=" + t,
                    "/api/explore/catalog?q=" + t,
                    "/api/explore/suggest?q=" + t,
                    "/api/explore/catalog/suggest?q=" + t,
                    "/api/explore/packages?q=" + t,
                    "/api/explore/packages/suggest?q=" + t,
                    "/api/users/" + a.username() + "/repos?q=" + t,
                    "/api/explore/users?q=" + t));
        }
        // people's routes of the same family (bundles/people): profiles, activity, follow lists, the user list
        assertTrue(b.http()
                        .post("/api/users/" + a.username() + "/follow", Map.of())
                        .status()
                < 300);
        routes.addAll(List.of(
                "/api/users/" + a.username(),
                "/api/users/" + a.username() + "/activity?limit=100",
                "/api/users/" + a.username() + "/followers",
                "/api/users/" + b.username() + "/following",
                "/api/explore/users?limit=100",
                "/api/explore/users/" + a.username()));
        // activity is written from the repositories' events, after them: wait for the public repository's items, so
        // that those of the private one have been written (or refused) too
        long deadline = System.currentTimeMillis() + 15_000;
        while (!server.anonymous()
                        .get("/api/users/" + a.username() + "/activity?limit=100")
                        .body()
                        .contains(pubAName)
                && System.currentTimeMillis() < deadline) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        assertTrue(
                server.anonymous()
                        .get("/api/users/" + a.username() + "/activity?limit=100")
                        .body()
                        .contains(pubAName),
                "the public repository's pushes, release and star are A's activity");
        routes.addAll(List.of(
                "/api/explore/repos?limit=100",
                "/api/explore/repos/trending?limit=100",
                "/api/explore/repos/new?limit=100",
                "/api/explore/repos/recent?limit=100",
                "/api/explore/catalog?limit=100",
                "/api/explore/packages?limit=100",
                "/api/users/" + a.username() + "/repos",
                "/api/users/" + a.username() + "/stars",
                "/api/users/" + b.username() + "/repos"));
        List<String> missing = List.of(
                "/api/explore/repos/" + privA,
                "/api/explore/repos/by-name/" + a.username() + "/" + secretName,
                "/api/explore/packages/" + a.username() + "/" + secretName + "/latest",
                "/api/explore/packages/" + a.username() + "/" + secretName + "/versions",
                "/api/explore/packages/by-repo/" + privA + "/reviews",
                "/api/users/" + b.username() + "/" + privBName,
                "/api/users/" + b.username() + "/" + privBName + "/branches",
                "/api/users/" + b.username() + "/" + privBName + "/commits",
                "/api/users/" + b.username() + "/" + privBName + "/tree/main",
                "/api/users/" + a.username() + "/" + secretName + "/blob/main/Main.java");
        for (Http caller : List.of(server.anonymous(), b.http())) {
            for (String route : routes) {
                Http.Reply r = caller.get(route);
                assertEquals(200, r.status(), route + " " + r.body());
                for (String hidden : List.of(secretName, privA)) {
                    assertFalse(r.body().contains(hidden), route + " shows " + hidden + ": " + r.body());
                }
            }
            for (String route : missing) {
                Http.Reply r = caller.get(route);
                if (route.contains(b.username()) && caller == b.http()) {
                    continue; // B's own private repository: its owner reads it
                }
                assertEquals(404, r.status(), route + " " + r.body());
                assertEquals("NOT_FOUND", r.errorCode(), r.body());
            }
        }
        // and for A the same lists leave out B's private repository
        for (String route : routes) {
            Http.Reply r = a.http().get(route);
            assertFalse(r.body().contains(privBName), route + " " + r.body());
        }
        // counts leave the private repository out too
        assertEquals(
                1,
                server.anonymous()
                        .get("/api/users/" + a.username())
                        .get("user")
                        .get("public_repos")
                        .asInt());
        // the same answer signed in or not
        String anonymousList =
                server.anonymous().get("/api/explore/repos?q=" + q(word)).body();
        assertEquals(
                anonymousList, b.http().get("/api/explore/repos?q=" + q(word)).body());
        // the stars list counts only public stars
        assertEquals(
                List.of(pubA),
                ids(server.anonymous()
                        .get("/api/users/" + a.username() + "/stars")
                        .get("repositories")));
    }

    @Test
    void trendingRanksTwentyStarsThisWeekAboveFiftyStarsLastYear(AtriumServer server) throws Exception {
        User owner = server.newUser();
        String hot = repo(owner, unique("hot"), "public", "starred this week");
        String old = repo(owner, unique("old"), "public", "starred a year ago");
        for (int i = 0; i < 20; i++) {
            User fan = server.newUser("repos:write");
            assertEquals(
                    200, fan.http().post("/api/repos/" + hot + "/star", null).status());
        }
        // fifty stars of a year ago: the API stars only now, so their rows are written as the star route writes them,
        // with an old time
        try (Connection c = server.db.connect();
                PreparedStatement ps =
                        c.prepareStatement("INSERT INTO repository_stars (repo_id, principal_id, created_at)"
                                + " VALUES (?, ?, now() - interval '365 days')")) {
            for (int i = 0; i < 50; i++) {
                ps.setString(1, old);
                ps.setString(2, "prn_oldfan" + i);
                ps.addBatch();
            }
            ps.executeBatch();
        }
        JsonNode byStars = server.anonymous()
                .get("/api/explore/repos?owner=" + owner.username() + "&sort=stars")
                .get("repositories");
        assertEquals(List.of(old, hot), ids(byStars), "by all-time stars, the old one leads");
        assertEquals(50, byStars.get(0).get("stars").asInt());

        JsonNode trending =
                server.anonymous().get("/api/explore/repos/trending?limit=100").get("repositories");
        List<String> order = ids(trending);
        assertTrue(order.contains(hot), trending.toString());
        assertTrue(!order.contains(old) || order.indexOf(hot) < order.indexOf(old), order.toString());
        double score = trending.get(order.indexOf(hot)).get("trending_score").asDouble();
        assertTrue(score > 19.9 && score <= 20.0, "20 stars of the last minutes weigh almost 1 each: " + score);
    }

    @Test
    void packageVersionsComeInSemverOrderLatestIsTheHighestReleaseAndReviewsMoveTheRating(AtriumServer server) {
        User owner = server.newUser();
        User reviewer = server.newUser();
        User other = server.newUser();
        String name = unique("pkg");
        String id = repo(owner, name, "public", "a package");
        String c1 = commit(owner, id, ZERO, "lib.py", "x = 1\n");
        String base = "/api/repos/" + id + "/releases";
        assertEquals(201, owner.http().post(base, Map.of("tag_name", "1.0.0")).status());
        commit(owner, id, c1, "lib.py", "x = 2\n");
        assertEquals(
                201,
                owner.http()
                        .post(base, Map.of("tag_name", "v1.1.0-rc.1", "prerelease", true))
                        .status());
        assertEquals(201, owner.http().post(base, Map.of("tag_name", "1.1.0")).status());
        assertEquals(
                201,
                owner.http().post(base, Map.of("tag_name", "not-a-version")).status());

        String pkg = "/api/explore/packages/" + owner.username() + "/" + name;
        JsonNode versions = server.anonymous().get(pkg + "/versions").json();
        List<String> order = new ArrayList<>();
        versions.get("versions").forEach(v -> order.add(v.get("version").asText()));
        assertEquals(List.of("1.1.0", "1.1.0-rc.1", "1.0.0"), order);
        assertTrue(versions.get("versions").get(1).get("prerelease").asBoolean());
        JsonNode latest = server.anonymous().get(pkg + "/latest").json();
        assertEquals("1.1.0", latest.get("version").get("version").asText(), latest.toString());
        assertEquals("1.1.0", latest.get("package").get("latest_version").asText());
        assertTrue(ids(server.anonymous().get("/api/explore/packages?q=" + name).get("packages"))
                .contains(id));
        assertTrue(ids(server.anonymous()
                        .get("/api/explore/packages/suggest?q=" + name)
                        .get("suggestions"))
                .contains(id));

        String reviews = "/api/explore/packages/by-repo/" + id + "/reviews";
        assertEquals(401, server.anonymous().post(reviews, Map.of("rating", 5)).status());
        assertEquals(400, reviewer.http().post(reviews, Map.of("rating", 6)).status());
        Http.Reply first = reviewer.http().post(reviews, Map.of("rating", 4, "body", "good"));
        assertEquals(201, first.status(), first.body());
        assertEquals("true", first.raw().headers().firstValue("Deprecation").orElse(null));
        assertEquals(4.0, first.json().get("rating_average").asDouble());
        Http.Reply second = other.http().post(reviews, Map.of("rating", 2));
        assertEquals(3.0, second.json().get("rating_average").asDouble(), second.body());
        Http.Reply edited = reviewer.http().post(reviews, Map.of("rating", 5, "body", "better"));
        assertEquals(200, edited.status(), "a second review by the same user edits the first: " + edited.body());
        assertEquals("true", edited.raw().headers().firstValue("Deprecation").orElse(null));
        JsonNode listed = server.anonymous().get(reviews).json();
        assertEquals(2, listed.get("rating_count").asInt(), listed.toString());
        assertEquals(3.5, listed.get("rating_average").asDouble());
        assertEquals(2, listed.get("reviews").size());
        assertEquals(
                3.5,
                server.anonymous()
                        .get(pkg + "/latest")
                        .json()
                        .get("package")
                        .get("rating_average")
                        .asDouble());

        // a repository that goes private stops being a package at once
        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + id, Map.of("visibility", "private"))
                        .status());
        assertEquals(404, server.anonymous().get(pkg + "/versions").status());
        assertEquals(404, reviewer.http().get(reviews).status());
    }

    @Test
    void theOperatorEditsTheSeedListThatAnyoneReads(AtriumServer server) {
        User u = server.newUser();
        String url = "https://git.example.invalid/" + unique("seed") + ".git";
        assertEquals(
                401,
                u.http()
                        .post("/admin/seed-repositories", Map.of("url", url, "name", "x"))
                        .status());
        assertEquals(
                400,
                server.operator()
                        .post("/admin/seed-repositories", Map.of("url", "file:///etc/passwd", "name", "x"))
                        .status());
        Http.Reply made = server.operator()
                .post(
                        "/admin/seed-repositories",
                        Map.of("url", url, "name", "Starter", "description", "a start", "category", "templates"));
        assertEquals(201, made.status(), made.body());
        String seedId = made.get("repository").get("id").asText();
        assertEquals(
                409,
                server.operator()
                        .post("/admin/seed-repositories", Map.of("url", url, "name", "again"))
                        .status());

        JsonNode seed = find(server.anonymous().get("/api/seed-repositories").get("repositories"), url);
        assertEquals("Starter", seed.get("name").asText());
        assertEquals("a start", seed.get("description").asText());
        assertEquals("templates", seed.get("category").asText());
        assertFalse(seed.get("checked").asBoolean());

        assertEquals(
                200,
                server.operator()
                        .patch("/admin/seed-repositories/" + seedId, Map.of("checked", true))
                        .status());
        assertTrue(find(server.anonymous().get("/api/seed-repositories").get("repositories"), url)
                .get("checked")
                .asBoolean());
        assertEquals(
                200,
                server.operator().delete("/admin/seed-repositories/" + seedId).status());
        assertNull(find(server.anonymous().get("/api/seed-repositories").get("repositories"), url));
        assertEquals(
                404,
                server.operator().delete("/admin/seed-repositories/" + seedId).status());
    }

    private static JsonNode find(JsonNode list, String url) {
        for (JsonNode n : list) {
            if (n.get("url").asText().equals(url)) {
                return n;
            }
        }
        return null;
    }

    @Test
    void aPublicRepositoryIsBrowsedByOwnerAndNameAndOnlyItsOwnerDeletesIt(AtriumServer server) {
        User owner = server.newUser();
        User other = server.newUser();
        String name = unique("browse");
        String id = repo(owner, name, "public", "browse me");
        commit(owner, id, ZERO, "README.md", "hello\n");
        String base = "/api/users/" + owner.username() + "/" + name;
        for (Http caller : List.of(server.anonymous(), other.http())) {
            assertEquals(id, caller.get(base).get("repository").get("id").asText());
            assertEquals(
                    id,
                    caller.get("/api/explore/repos/by-name/" + owner.username() + "/" + name)
                            .get("repository")
                            .get("id")
                            .asText());
            assertEquals(
                    "README.md",
                    caller.get(base + "/tree/main")
                            .get("entries")
                            .get(0)
                            .get("name")
                            .asText());
            assertEquals(
                    "hello\n",
                    caller.get(base + "/blob/main/README.md").get("content").asText());
            assertEquals(
                    "main",
                    caller.get(base + "/branches")
                            .get("branches")
                            .get(0)
                            .get("name")
                            .asText());
            assertEquals(1, caller.get(base + "/commits").get("commits").size());
        }
        assertEquals(
                "repos",
                server.anonymous()
                        .get("/api/users/" + owner.username() + "/repos")
                        .raw()
                        .headers()
                        .firstValue("X-Atrium-Bundle")
                        .orElse("")
                        .replaceFirst("/.*", "")
                        .replace("dev.atrium.", ""));
        assertEquals(401, server.anonymous().delete(base).status());
        Http.Reply refused = other.http().delete(base);
        assertEquals(404, refused.status(), "someone else's repository by name is as missing: " + refused.body());
        assertEquals(200, server.anonymous().get(base).status(), "still there");
        assertEquals(200, owner.http().delete(base).status());
        assertEquals(404, server.anonymous().get(base).status());
        assertEquals(404, owner.http().get("/api/repos/" + id).status());
    }

    /**
     * Search and suggestions rank from an index in memory; every change of a repository reaches it through the change
     * log it reads with each request, so none of these waits.
     */
    @Test
    void searchAndSuggestionsFollowARepositoryFromTheNextRequestAsItIsRenamedHiddenAndDeleted(AtriumServer server) {
        User owner = server.newUser();
        String first = unique("okapi");
        String id = repo(owner, first + "-tools", "public", "quiet helpers");
        assertTrue(found(server, first).contains(id), "found by name at once");
        assertTrue(suggested(server, first).contains(id), "suggested at once");

        String second = unique("bongo");
        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + id, Map.of("name", second + "-kit"))
                        .status());
        assertFalse(found(server, first).contains(id), "the old name no longer finds it");
        assertTrue(found(server, second).contains(id));
        assertEquals(
                second + "-kit",
                server.anonymous()
                        .get("/api/explore/suggest?q=" + q(second))
                        .get("suggestions")
                        .get(0)
                        .get("name")
                        .asText());

        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + id, Map.of("visibility", "private"))
                        .status());
        assertFalse(found(server, second).contains(id), "private: not found");
        assertFalse(suggested(server, second).contains(id), "private: not suggested");
        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + id, Map.of("visibility", "public"))
                        .status());
        assertTrue(found(server, second).contains(id), "public again");
        assertTrue(suggested(server, second).contains(id));

        assertTrue(owner.http().delete("/api/repos/" + id).status() < 300);
        assertFalse(found(server, second).contains(id), "deleted: not found");
        assertFalse(suggested(server, second).contains(id), "deleted: not suggested");
    }

    private static List<String> found(AtriumServer server, String q) {
        return ids(server.anonymous().get("/api/explore/repos?q=" + q(q)).get("repositories"));
    }

    private static List<String> suggested(AtriumServer server, String q) {
        return ids(server.anonymous().get("/api/explore/suggest?q=" + q(q)).get("suggestions"));
    }

    @Test
    void aCursorPageNeitherRepeatsNorSkipsWhenRepositoriesAreAddedBetweenPages(AtriumServer server) {
        User owner = server.newUser();
        String topic = unique("cursor");
        for (String n : List.of("b", "c", "d")) {
            String id = repo(owner, topic + n, "public", "");
            owner.http().patch("/api/repos/" + id, Map.of("topics", List.of(topic)));
        }
        String list = "/api/explore/repos?owner=" + owner.username() + "&sort=name&limit=2";
        JsonNode first = server.anonymous().get(list).json();
        List<String> names = new ArrayList<>();
        first.get("repositories").forEach(r -> names.add(r.get("name").asText()));
        assertEquals(List.of(topic + "b", topic + "c"), names);
        String cursor = first.get("next_cursor").asText();
        repo(owner, topic + "a", "public", ""); // sorts before the cursor: not on the next page
        repo(owner, topic + "e", "public", ""); // sorts after it: on it
        JsonNode second = server.anonymous().get(list + "&cursor=" + cursor).json();
        List<String> rest = new ArrayList<>();
        second.get("repositories").forEach(r -> rest.add(r.get("name").asText()));
        assertEquals(List.of(topic + "d", topic + "e"), rest);
        assertEquals(400, server.anonymous().get(list + "&cursor=garbage").status());
        // every order pages through the same five without a repeat: relevance, stars, times
        for (String sort : List.of("best", "stars", "updated", "created")) {
            List<String> seen = new ArrayList<>();
            String next = null;
            do {
                JsonNode page = server.anonymous()
                        .get("/api/explore/repos?q=" + topic + "&owner=" + owner.username() + "&sort=" + sort
                                + "&limit=2" + (next == null ? "" : "&cursor=" + next))
                        .json();
                page.get("repositories").forEach(r -> seen.add(r.get("name").asText()));
                next = page.get("next_cursor").isNull()
                        ? null
                        : page.get("next_cursor").asText();
            } while (next != null && seen.size() < 20);
            assertEquals(5, seen.size(), sort + ": " + seen);
            assertEquals(5, new java.util.HashSet<>(seen).size(), sort + ": " + seen);
        }
        assertEquals(
                400, server.anonymous().get("/api/explore/repos?sort=bogus").status());
        assertNotEquals(
                500,
                server.anonymous()
                        .get("/api/explore/repos?sort=stars&cursor=" + cursor)
                        .status());
    }
}
