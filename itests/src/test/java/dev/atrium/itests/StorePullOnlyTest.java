package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Federation Model B over HTTP: a workspace publishes a store (/api/spaces/:spaceId/stores), and anyone reads it as a
 * pull-only catalog of the workspace's public repositories, every row of the spec's Model B table.
 */
@SharedServer
class StorePullOnlyTest {

    /** Model A (store-inventory) is the default; Model B serves the same paths, so it runs only while Model A is off. */
    @BeforeAll
    static void modelB(AtriumServer server) throws Exception {
        assertEquals(
                200,
                server.operator()
                        .post("/admin/features/store-inventory/disable", Map.of())
                        .status());
        Http.Reply on = server.operator().post("/admin/features/store-pullonly/enable", Map.of());
        assertEquals(200, on.status(), on.body());
        FeatureSwitchTest.await(server.anonymous(), "/ns/ext-git", 200);
    }

    @AfterAll
    static void modelA(AtriumServer server) throws Exception {
        assertEquals(
                200,
                server.operator()
                        .post("/admin/features/store-pullonly/disable", Map.of())
                        .status());
        Http.Reply on = server.operator().post("/admin/features/store-inventory/enable", Map.of());
        assertEquals(200, on.status(), on.body());
        FeatureSwitchTest.await(server.anonymous(), "/ns/ext-git", 301);
    }

    private static String host(AtriumServer server) {
        return server.base().replaceFirst("^https?://", "");
    }

    /** The media type and its parameters, without the optional whitespace (CXF writes none after the ';'). */
    private static String type(Http.Reply r) {
        return r.raw()
                .headers()
                .firstValue("Content-Type")
                .orElse("")
                .replace(" ", "")
                .toLowerCase(java.util.Locale.ROOT);
    }

    private static String store(User u, String slug) {
        Http.Reply r = u.http()
                .post(
                        "/api/spaces/" + u.defaultSpaceId() + "/stores",
                        Map.of(
                                "slug",
                                slug,
                                "name",
                                "Tools of " + slug,
                                "summary",
                                "what we build",
                                "icon_url",
                                "https://img.example/icon.png"));
        assertEquals(201, r.status(), r.body());
        return r.get("store").get("actor_url").asText();
    }

    private static void repo(User u, String name, String visibility, String description) {
        Http.Reply r = u.http()
                .post(
                        "/api/spaces/" + u.defaultSpaceId() + "/repos",
                        Map.of("name", name, "visibility", visibility, "description", description));
        assertEquals(201, r.status(), r.body());
    }

    @Test
    void aStoreIsFoundByWebFingerAndPublishesOnlyPublicRepositories(AtriumServer server) {
        User u = server.newUser();
        String slug = "tools-" + Long.toString(System.nanoTime(), 36);
        String actorUrl = store(u, slug);
        repo(u, "hammer", "public", "hits nails");
        repo(u, "saw", "public", "cuts wood");
        repo(u, "secret-plans", "private", "nobody sees these");
        Http anyone = server.anonymous();

        Http.Reply finger = anyone.get("/.well-known/webfinger?resource="
                + URLEncoder.encode("acct:" + slug + "@" + host(server), StandardCharsets.UTF_8));
        assertEquals(200, finger.status(), finger.body());
        assertEquals("application/jrd+json;charset=utf-8", type(finger));
        assertEquals("acct:" + slug + "@" + host(server), finger.get("subject").asText());
        assertEquals(actorUrl, finger.get("links").get(0).get("href").asText());
        assertEquals(
                "application/activity+json",
                finger.get("links").get(0).get("type").asText());
        assertEquals(
                200,
                anyone.get("/.well-known/webfinger?resource=" + URLEncoder.encode(actorUrl, StandardCharsets.UTF_8))
                        .status());
        BadInputTest.assertSpecError(
                anyone.get("/.well-known/webfinger?resource=acct:" + slug + "@elsewhere.example"), 404, "NOT_FOUND");
        BadInputTest.assertSpecError(anyone.get("/.well-known/webfinger"), 400, "BAD_REQUEST");
        assertEquals(
                200,
                anyone.get("/.well-known/oauth-authorization-server").status(),
                "the OAuth documents beside WebFinger still answer");

        String path = "/ap/stores/" + slug;
        Http.Reply actor = anyone.get(path);
        assertEquals(200, actor.status(), actor.body());
        assertEquals("application/activity+json;charset=utf-8", type(actor));
        JsonNode a = actor.json();
        assertEquals("Group", a.get("type").asText());
        assertEquals(slug, a.get("preferredUsername").asText());
        assertEquals("pull-only", a.get("ext:distributionMode").asText());
        assertEquals(actorUrl + "/repositories", a.get("ext:repositories").asText());
        assertEquals("https://img.example/icon.png", a.get("icon").get("url").asText());
        assertTrue(a.get("publicKey").get("publicKeyPem").asText().startsWith("-----BEGIN PUBLIC KEY-----"));
        assertEquals(actorUrl + "#main-key", a.get("publicKey").get("id").asText());

        JsonNode summary = anyone.get(path + "/repositories").json();
        assertEquals("OrderedCollection", summary.get("type").asText());
        assertEquals(2, summary.get("totalItems").asInt());
        assertTrue(summary.get("first").asText().endsWith("/repositories?page=1"), summary.toString());
        JsonNode page = anyone.get(path + "/repositories?page=1&limit=1").json();
        assertEquals("OrderedCollectionPage", page.get("type").asText());
        assertEquals(1, page.get("orderedItems").size());
        assertTrue(page.get("orderedItems").get(0).isTextual(), "ids only unless expand=object");
        assertTrue(page.has("next"));
        JsonNode expanded =
                anyone.get(path + "/repositories?page=1&expand=object").json().get("orderedItems");
        assertEquals(2, expanded.size());
        JsonNode hammer = expanded.get(0);
        assertEquals("hammer", hammer.get("name").asText());
        assertEquals(
                List.of("Document", "ext:GitRepository"),
                List.of(
                        hammer.get("type").get(0).asText(),
                        hammer.get("type").get(1).asText()));
        assertEquals("public", hammer.get("ext:visibility").asText());
        assertTrue(hammer.get("ext:cloneUrl").asText().endsWith("/hammer.git"), hammer.toString());
        assertEquals(actorUrl, hammer.get("attributedTo").asText());
        assertFalse(anyone.get(path + "/repositories?page=1&limit=100&expand=object")
                .body()
                .contains("secret-plans"));
        BadInputTest.assertSpecError(anyone.get(path + "/repositories?page=1&limit=101"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(anyone.get(path + "/repositories?page=0"), 400, "BAD_REQUEST");

        String owner = hammer.get("ext:owner").asText();
        Http.Reply single = anyone.get(path + "/repositories/" + owner + "/saw");
        assertEquals(200, single.status(), single.body());
        assertEquals("cuts wood", single.get("summary").asText());
        BadInputTest.assertSpecError(anyone.get(path + "/repositories/" + owner + "/secret-plans"), 404, "NOT_FOUND");

        JsonNode outbox = anyone.get(path + "/outbox?page=1").json();
        assertEquals(2, outbox.get("orderedItems").size());
        JsonNode activity = outbox.get("orderedItems").get(0);
        assertTrue(List.of("Create", "Update").contains(activity.get("type").asText()), activity.toString());
        assertEquals(actorUrl, activity.get("actor").asText());
        assertEquals(
                "https://www.w3.org/ns/activitystreams#Public",
                activity.get("to").get(0).asText());
        assertTrue(activity.get("object").has("ext:cloneUrl"));

        JsonNode search = anyone.get(path + "/search").json();
        assertEquals("ext:SearchService", search.get("type").get(1).asText());
        JsonNode found = anyone.get(path + "/search/repositories?q=WOOD&page=1").json();
        assertEquals(1, found.get("totalItems").asInt());
        assertEquals(
                0,
                anyone.get(path + "/search/repositories?q=plans&page=1")
                        .json()
                        .get("totalItems")
                        .asInt());
        BadInputTest.assertSpecError(anyone.get(path + "/search/repositories"), 400, "BAD_REQUEST");

        Http.Reply inbox = anyone.send(
                "POST",
                path + "/inbox",
                "{\"type\":\"Follow\"}".getBytes(StandardCharsets.UTF_8),
                "application/activity+json");
        assertEquals(501, inbox.status(), inbox.body());
        assertEquals("NOT_IMPLEMENTED", inbox.errorCode());
        JsonNode followers = anyone.get(path + "/followers").json();
        assertEquals(0, followers.get("totalItems").asInt());

        Http.Reply ns = anyone.get("/ns/ext-git");
        assertEquals(200, ns.status());
        assertEquals("application/ld+json;charset=utf-8", type(ns));
        assertEquals("ext:cloneUrl", ns.get("@context").get("cloneUrl").asText());
        BadInputTest.assertSpecError(anyone.get("/ap/stores/no-such-store-here"), 404, "NOT_FOUND");
    }

    @Test
    void storesBelongToTheirWorkspaceAndBadInputChangesNothing(AtriumServer server) {
        User owner = server.newUser();
        User stranger = server.newUser();
        String slug = "mine-" + Long.toString(System.nanoTime(), 36);
        store(owner, slug);
        String mine = "/api/spaces/" + owner.defaultSpaceId() + "/stores";
        assertEquals(1, owner.http().get(mine).json().get("stores").size());
        BadInputTest.assertSpecError(stranger.http().get(mine), 404, "NOT_FOUND");
        String theirs = "/api/spaces/" + stranger.defaultSpaceId() + "/stores/" + slug;
        BadInputTest.assertSpecError(stranger.http().patch(theirs, Map.of("name", "taken over")), 404, "NOT_FOUND");
        BadInputTest.assertSpecError(stranger.http().delete(theirs), 404, "NOT_FOUND");
        BadInputTest.assertSpecError(
                stranger.http()
                        .post(
                                "/api/spaces/" + stranger.defaultSpaceId() + "/stores",
                                Map.of("slug", slug, "name", "same slug")),
                409,
                "CONFLICT");
        for (Map<String, Object> bad : List.<Map<String, Object>>of(
                Map.of("slug", "Bad Slug", "name", "x"),
                Map.of("slug", "-x", "name", "x"),
                Map.of("slug", "ok-slug"),
                Map.of("slug", "ok-slug", "name", "x", "icon_url", "javascript:alert(1)"),
                Map.of("slug", "ok-slug", "name", "x", "color", "red"))) {
            BadInputTest.assertSpecError(owner.http().post(mine, bad), 400, "BAD_REQUEST");
        }
        Http.Reply renamed = owner.http().patch(mine + "/" + slug, Map.of("name", "Renamed", "summary", "new words"));
        assertEquals(200, renamed.status(), renamed.body());
        assertEquals(
                "Renamed",
                server.anonymous().get("/ap/stores/" + slug).get("name").asText());
        JsonNode inventory = owner.http().get(mine + "/" + slug + "/inventory").json();
        assertEquals("automatic", inventory.get("mode").asText());
        BadInputTest.assertSpecError(
                owner.http()
                        .post(
                                mine + "/" + slug + "/inventory",
                                Map.of("repository_uri", "http://169.254.169.254/ap/repos/x/y")),
                400,
                "BAD_REQUEST");
        BadInputTest.assertSpecError(
                owner.http().post(mine + "/" + slug + "/inventory", Map.of("repository_uri", "not a url")),
                400,
                "BAD_REQUEST");
        assertEquals(
                "automatic",
                owner.http()
                        .get(mine + "/" + slug + "/inventory")
                        .json()
                        .get("mode")
                        .asText());
        assertEquals(200, owner.http().delete(mine + "/" + slug).status());
        BadInputTest.assertSpecError(server.anonymous().get("/ap/stores/" + slug), 404, "NOT_FOUND");
    }

    @Test
    void modelBCanBeSwitchedOffAndOnAtRunTime(AtriumServer server) throws Exception {
        User u = server.newUser();
        String slug = "switch-" + Long.toString(System.nanoTime(), 36);
        store(u, slug);
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/store-pullonly/disable", Map.of())
                            .status());
            assertEquals(
                    404,
                    FeatureSwitchTest.await(server.anonymous(), "/ap/stores/" + slug, 404)
                            .status());
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/store-pullonly/enable", Map.of())
                            .status());
        }
        assertEquals(
                200,
                FeatureSwitchTest.await(server.anonymous(), "/ap/stores/" + slug, 200)
                        .status());
    }
}
