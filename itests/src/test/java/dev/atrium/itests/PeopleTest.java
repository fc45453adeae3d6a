package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * People on the shared server: profiles, follows, follow requests, blocks, mutes, activity and avatars, each seen by
 * anonymous and signed-in callers. Repositories are made and pushed to with the real {@code git} client.
 */
@SharedServer
class PeopleTest {

    private static final AtomicInteger NAMES = new AtomicInteger();
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path tmp;

    private static Http anonymous(AtriumServer server) {
        return new Http(server.base(), null);
    }

    private static void assertError(int status, String code, Http.Reply r) {
        assertEquals(status, r.status(), r.body());
        assertEquals(code, r.json().path("error").path("code").asText(), r.body());
        assertFalse(r.json().path("error").path("message").asText().isBlank(), r.body());
    }

    private static JsonNode ok(Http.Reply r) {
        assertEquals(200, r.status(), r.body());
        assertTrue(r.json() != null, "not JSON: " + r.body() + " " + r.raw().headers());
        return r.json();
    }

    private static List<String> usernames(JsonNode list) {
        List<String> out = new ArrayList<>();
        list.forEach(n -> out.add(n.path("username").asText()));
        return out;
    }

    private static List<String> followers(Http as, User of) {
        return usernames(
                ok(as.get("/api/users/" + of.username() + "/followers")).path("followers"));
    }

    private static List<String> following(Http as, User of) {
        return usernames(
                ok(as.get("/api/users/" + of.username() + "/following")).path("following"));
    }

    private static String follow(User who, User whom) {
        return ok(who.http().post("/api/users/" + whom.username() + "/follow", Map.of()))
                .path("state")
                .asText();
    }

    private static String repo(User u, String name, String visibility) {
        Http.Reply r = u.http()
                .post(
                        "/api/spaces/" + u.defaultSpaceId() + "/repos",
                        Map.of("name", name, "description", "about " + name, "visibility", visibility));
        assertEquals(201, r.status(), r.body());
        return r.get("repository").get("id").asText();
    }

    private void push(AtriumServer server, User u, String repoName, String message) {
        GitClient git =
                new GitClient(tmp.resolve("home-" + u.username()), u.http().token());
        Path work;
        try {
            work = git.newWorkingCopy(
                    tmp.resolve("w-" + repoName + "-" + NAMES.incrementAndGet()), "README.md", message + "\n");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        git.ok(work, "commit", "-q", "--amend", "-m", message);
        git.ok(work, "push", "-q", "-f", server.base() + "/git/" + u.username() + "/" + repoName + ".git", "main");
    }

    /** The activity {@code as} sees of {@code of}, once {@code until} holds (events are recorded asynchronously). */
    private static JsonNode activity(Http as, User of, Predicate<JsonNode> until) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 15_000;
        JsonNode items;
        do {
            items = ok(as.get("/api/users/" + of.username() + "/activity")).path("activity");
            if (until.test(items)) {
                return items;
            }
            Thread.sleep(100);
        } while (System.currentTimeMillis() < deadline);
        fail("activity of " + of.username() + " never became as expected: " + items);
        return items;
    }

    private static boolean mentions(JsonNode items, String repoName) {
        for (JsonNode i : items) {
            if (i.path("repository").path("name").asText().equals(repoName)) {
                return true;
            }
        }
        return false;
    }

    @Test
    void aProfileShowsPublicFieldsToEveryoneAndTheRelationOnlyToTheSignedIn(AtriumServer server) {
        User alice = server.newUser();
        User bob = server.newUser();
        repo(alice, "shown-" + NAMES.incrementAndGet(), "public");
        Http.Reply patched = alice.http()
                .patch(
                        "/api/users/" + alice.username(),
                        Map.of("display_name", "Alice A.", "bio", "I write code", "website", "https://alice.example"));
        JsonNode user = ok(patched).path("user");
        assertEquals("Alice A.", user.path("display_name").asText());
        assertEquals("I write code", user.path("bio").asText());

        JsonNode seen =
                ok(anonymous(server).get("/api/users/" + alice.username())).path("user");
        assertEquals(alice.username(), seen.path("username").asText());
        assertEquals("Alice A.", seen.path("display_name").asText());
        assertEquals("https://alice.example", seen.path("website").asText());
        assertEquals(1, seen.path("public_repos").asInt());
        assertEquals(0, seen.path("followers").asInt());
        assertTrue(seen.path("joined_at").asText().matches("\\d{4}-.*"), seen.toString());
        assertFalse(seen.has("viewer"), "anonymous callers get no caller-specific fields: " + seen);
        JsonNode bobSees = ok(bob.http().get("/api/users/" + alice.username())).path("user");
        assertFalse(bobSees.path("viewer").path("following").asBoolean());
        ((com.fasterxml.jackson.databind.node.ObjectNode) bobSees).remove("viewer");
        assertEquals(seen, bobSees, "a signed-in caller sees what anyone sees, plus the viewer fields");

        assertError(403, "FORBIDDEN", bob.http().patch("/api/users/" + alice.username(), Map.of("bio", "hacked")));
        assertError(
                400, "BAD_REQUEST", alice.http().patch("/api/users/" + alice.username(), Map.of("website", "ftp://x")));
        assertError(404, "NOT_FOUND", anonymous(server).get("/api/users/nobody-" + NAMES.incrementAndGet()));
        assertError(404, "NOT_FOUND", anonymous(server).get("/api/explore/users/nobody-" + NAMES.incrementAndGet()));

        JsonNode found = ok(anonymous(server).get("/api/explore/users?q=" + alice.username()));
        assertEquals(List.of(alice.username()), usernames(found.path("users")));
    }

    @Test
    void followingAndUnfollowingChangeTheListsAndCountsAndNotifyTheFollowed(AtriumServer server) throws Exception {
        User alice = server.newUser();
        User bob = server.newUser();
        assertEquals("following", follow(bob, alice));
        assertEquals("following", follow(bob, alice), "following again changes nothing");
        assertEquals(List.of(bob.username()), followers(anonymous(server), alice));
        assertEquals(List.of(alice.username()), following(anonymous(server), bob));
        assertEquals(
                1,
                ok(anonymous(server).get("/api/users/" + alice.username()))
                        .path("user")
                        .path("followers")
                        .asInt());
        assertEquals(
                1,
                ok(anonymous(server).get("/api/users/" + bob.username()))
                        .path("user")
                        .path("following")
                        .asInt());
        JsonNode viewer = ok(bob.http().get("/api/users/" + alice.username()))
                .path("user")
                .path("viewer");
        assertTrue(viewer.path("following").asBoolean(), viewer.toString());
        assertTrue(ok(alice.http().get("/api/users/" + bob.username()))
                .path("user")
                .path("viewer")
                .path("followed_by")
                .asBoolean());

        long deadline = System.currentTimeMillis() + 10_000;
        while (!ok(alice.http().get("/api/notifications")).toString().contains("people.followed")
                && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        assertTrue(ok(alice.http().get("/api/notifications")).toString().contains(bob.username() + " followed you"));

        assertEquals(
                "none",
                ok(bob.http().delete("/api/users/" + alice.username() + "/follow"))
                        .path("state")
                        .asText());
        assertEquals(List.of(), followers(anonymous(server), alice));
        assertEquals(
                0,
                ok(anonymous(server).get("/api/users/" + alice.username()))
                        .path("user")
                        .path("followers")
                        .asInt());

        assertError(400, "BAD_REQUEST", alice.http().post("/api/users/" + alice.username() + "/follow", Map.of()));
        assertError(
                404,
                "NOT_FOUND",
                alice.http().post("/api/users/nobody-" + NAMES.incrementAndGet() + "/follow", Map.of()));
        assertError(
                401, "UNAUTHORIZED", anonymous(server).post("/api/users/" + alice.username() + "/follow", Map.of()));
    }

    @Test
    void anAccountThatApprovesFollowersTurnsFollowsIntoRequestsToAcceptOrReject(AtriumServer server) throws Exception {
        User carol = server.newUser();
        User dave = server.newUser();
        User erin = server.newUser();
        ok(carol.http().patch("/api/me/settings", Map.of("private_account", true)));
        assertTrue(ok(anonymous(server).get("/api/users/" + carol.username()))
                .path("user")
                .path("private_account")
                .asBoolean());

        JsonNode asked = ok(dave.http().post("/api/users/" + carol.username() + "/follow", Map.of()));
        assertEquals("requested", asked.path("state").asText());
        String requestId = asked.path("follow_request_id").asText();
        assertEquals(
                requestId,
                ok(dave.http().post("/api/users/" + carol.username() + "/follow", Map.of()))
                        .path("follow_request_id")
                        .asText());
        assertEquals(List.of(), followers(anonymous(server), carol), "a request is no follow");
        assertTrue(ok(dave.http().get("/api/users/" + carol.username()))
                .path("user")
                .path("viewer")
                .path("follow_requested")
                .asBoolean());
        assertEquals("requested", follow(erin, carol));

        JsonNode requests = ok(carol.http().get("/api/users/" + carol.username() + "/follow-requests"));
        assertEquals(2, requests.path("total").asInt(), requests.toString());
        assertTrue(
                requests.path("follow_requests").findValuesAsText("username").contains(dave.username()),
                requests.toString());

        // someone else's requests are as missing as a missing user's, and so is deciding them
        Http.Reply missing = dave.http().get("/api/users/nobody-" + NAMES.incrementAndGet() + "/follow-requests");
        Http.Reply others = dave.http().get("/api/users/" + carol.username() + "/follow-requests");
        assertError(404, "NOT_FOUND", others);
        assertEquals(missing.json().path("error"), others.json().path("error"));
        assertError(
                404,
                "NOT_FOUND",
                dave.http()
                        .post(
                                "/api/users/" + carol.username() + "/follow-requests/" + requestId + "/accept",
                                Map.of()));
        assertError(401, "UNAUTHORIZED", anonymous(server).get("/api/users/" + carol.username() + "/follow-requests"));
        assertError(
                404,
                "NOT_FOUND",
                carol.http()
                        .post(
                                "/api/users/" + carol.username() + "/follow-requests/frq_nosuchrequest00000/accept",
                                Map.of()));

        assertEquals(
                "accepted",
                ok(carol.http()
                                .post(
                                        "/api/users/" + carol.username() + "/follow-requests/" + requestId + "/accept",
                                        Map.of()))
                        .path("state")
                        .asText());
        assertEquals(List.of(dave.username()), followers(anonymous(server), carol));
        assertError(
                404,
                "NOT_FOUND",
                carol.http()
                        .post(
                                "/api/users/" + carol.username() + "/follow-requests/" + requestId + "/accept",
                                Map.of()));

        String erinRequest = ok(carol.http().get("/api/users/" + carol.username() + "/follow-requests"))
                .path("follow_requests")
                .get(0)
                .path("id")
                .asText();
        assertEquals(
                "rejected",
                ok(carol.http()
                                .post(
                                        "/api/users/" + carol.username() + "/follow-requests/" + erinRequest
                                                + "/reject",
                                        Map.of()))
                        .path("state")
                        .asText());
        assertEquals(List.of(dave.username()), followers(anonymous(server), carol));
        assertEquals(
                0,
                ok(carol.http().get("/api/users/" + carol.username() + "/follow-requests"))
                        .path("total")
                        .asInt());

        long deadline = System.currentTimeMillis() + 10_000;
        while (!ok(carol.http().get("/api/notifications")).toString().contains("people.follow_requested")
                && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        assertTrue(ok(carol.http().get("/api/notifications")).toString().contains("asked to follow you"));
    }

    @Test
    void aBlockRemovesFollowsBothWaysRefusesNewOnesAndHidesEachSideFromTheOthersLists(AtriumServer server) {
        User frank = server.newUser();
        User grace = server.newUser();
        User heidi = server.newUser();
        follow(frank, grace);
        follow(grace, frank);
        follow(heidi, frank);
        follow(heidi, grace);
        follow(frank, heidi);
        follow(grace, heidi);

        assertTrue(ok(frank.http().post("/api/users/" + grace.username() + "/block", Map.of()))
                .path("blocking")
                .asBoolean());
        assertTrue(
                ok(frank.http().post("/api/users/" + grace.username() + "/block", Map.of()))
                        .path("blocking")
                        .asBoolean(),
                "idempotent");
        // the existing follows went, both ways
        assertFalse(followers(anonymous(server), frank).contains(grace.username()));
        assertFalse(followers(anonymous(server), grace).contains(frank.username()));
        assertEquals(
                1,
                ok(anonymous(server).get("/api/users/" + frank.username()))
                        .path("user")
                        .path("followers")
                        .asInt());
        // follows are refused both ways
        assertError(403, "FORBIDDEN", frank.http().post("/api/users/" + grace.username() + "/follow", Map.of()));
        assertError(403, "FORBIDDEN", grace.http().post("/api/users/" + frank.username() + "/follow", Map.of()));
        // each side is hidden from the lists the other sees; others see both
        List<String> graceSeesHeidiFollowing = following(grace.http(), heidi);
        assertFalse(graceSeesHeidiFollowing.contains(frank.username()), graceSeesHeidiFollowing.toString());
        assertTrue(graceSeesHeidiFollowing.contains(grace.username()));
        List<String> frankSeesHeidiFollowers = followers(frank.http(), heidi);
        assertFalse(frankSeesHeidiFollowers.contains(grace.username()), frankSeesHeidiFollowers.toString());
        assertTrue(followers(anonymous(server), heidi).containsAll(List.of(frank.username(), grace.username())));
        assertTrue(following(heidi.http(), heidi).containsAll(List.of(frank.username(), grace.username())));
        assertTrue(ok(frank.http().get("/api/users/" + grace.username()))
                .path("user")
                .path("viewer")
                .path("blocking")
                .asBoolean());

        assertError(400, "BAD_REQUEST", frank.http().post("/api/users/" + frank.username() + "/block", Map.of()));
        assertError(
                404,
                "NOT_FOUND",
                frank.http().post("/api/users/nobody-" + NAMES.incrementAndGet() + "/block", Map.of()));

        assertFalse(ok(frank.http().delete("/api/users/" + grace.username() + "/block"))
                .path("blocking")
                .asBoolean());
        assertEquals("following", follow(grace, frank), "once unblocked, follows are allowed again");
    }

    @Test
    void aMuteHidesTheMutedUsersActivityFromTheMuterOnly(AtriumServer server) throws Exception {
        User ivan = server.newUser();
        User judy = server.newUser();
        User mallory = server.newUser();
        String name = "muted-" + NAMES.incrementAndGet();
        repo(ivan, name, "public");
        push(server, ivan, name, "first of ivan");
        activity(anonymous(server), ivan, items -> mentions(items, name));

        assertTrue(ok(judy.http().post("/api/users/" + ivan.username() + "/mute", Map.of()))
                .path("muting")
                .asBoolean());
        assertEquals(
                0,
                ok(judy.http().get("/api/users/" + ivan.username() + "/activity"))
                        .path("activity")
                        .size());
        assertTrue(mentions(
                ok(mallory.http().get("/api/users/" + ivan.username() + "/activity"))
                        .path("activity"),
                name));
        assertTrue(mentions(
                ok(anonymous(server).get("/api/users/" + ivan.username() + "/activity"))
                        .path("activity"),
                name));
        assertTrue(mentions(
                ok(ivan.http().get("/api/users/" + ivan.username() + "/activity"))
                        .path("activity"),
                name));
        // a mute hides activity only: follows and profiles are as before
        assertEquals("following", follow(judy, ivan));
        assertTrue(ok(judy.http().get("/api/users/" + ivan.username()))
                .path("user")
                .path("viewer")
                .path("muting")
                .asBoolean());

        assertError(400, "BAD_REQUEST", judy.http().post("/api/users/" + judy.username() + "/mute", Map.of()));
        assertFalse(ok(judy.http().delete("/api/users/" + ivan.username() + "/mute"))
                .path("muting")
                .asBoolean());
        assertTrue(mentions(
                ok(judy.http().get("/api/users/" + ivan.username() + "/activity"))
                        .path("activity"),
                name));
    }

    @Test
    void aRepositoryMadePrivateWhilePeopleWasSwitchedOffLeavesTheActivityTotalToo(AtriumServer server)
            throws Exception {
        User olga = server.newUser();
        String name = "missed-" + NAMES.incrementAndGet();
        String id = repo(olga, name, "public");
        push(server, olga, name, "the one push");
        activity(anonymous(server), olga, items -> mentions(items, name));
        Http operator = server.operator();
        try {
            assertEquals(
                    200,
                    operator.post("/admin/features/people/disable", Map.of()).status());
            // no component of the people capability runs to hear of this
            ok(olga.http().patch("/api/repos/" + id, Map.of("visibility", "private")));
        } finally {
            assertEquals(
                    200,
                    operator.post("/admin/features/people/enable", Map.of()).status());
        }
        // the items are filtered as they are read; the total must not count what the items leave out (it would tell
        // how many items of private repositories the user has)
        long deadline = System.currentTimeMillis() + 15_000;
        JsonNode page;
        do {
            Http.Reply r = anonymous(server).get("/api/users/" + olga.username() + "/activity");
            page = r.status() == 200 ? r.json() : null;
            if (page != null && page.path("total").asInt() == 0) {
                break;
            }
            Thread.sleep(100);
        } while (System.currentTimeMillis() < deadline);
        assertNotNull(page, "the activity route answers again");
        assertEquals(0, page.path("activity").size(), page.toString());
        assertEquals(0, page.path("total").asInt(), page.toString());
    }

    @Test
    void activityOfAPushSaysWhatWasPushedAndFollowsTheActorsVisibilitySetting(AtriumServer server) throws Exception {
        User oscar = server.newUser();
        User peggy = server.newUser();
        User trent = server.newUser();
        String name = "pushed-" + NAMES.incrementAndGet();
        repo(oscar, name, "public");
        push(server, oscar, name, "add the readme");
        JsonNode items = activity(anonymous(server), oscar, i -> mentions(i, name));
        JsonNode push = items.get(0);
        assertEquals("push", push.path("type").asText());
        assertEquals(
                oscar.username() + "/" + name,
                push.path("repository").path("full_name").asText());
        assertEquals(
                List.of("refs/heads/main"),
                List.of(push.path("payload").path("refs").get(0).asText()));
        assertEquals(
                "add the readme",
                push.path("payload").path("commits").get(0).path("message").asText());

        // followers only: anonymous callers and strangers see nothing, followers and the actor see it
        ok(oscar.http().patch("/api/me/settings", Map.of("activity_visibility", "followers")));
        follow(peggy, oscar);
        assertEquals(
                0,
                ok(anonymous(server).get("/api/users/" + oscar.username() + "/activity"))
                        .path("total")
                        .asInt());
        assertEquals(
                0,
                ok(trent.http().get("/api/users/" + oscar.username() + "/activity"))
                        .path("activity")
                        .size());
        assertTrue(mentions(
                ok(peggy.http().get("/api/users/" + oscar.username() + "/activity"))
                        .path("activity"),
                name));
        // private: only the actor
        ok(oscar.http().patch("/api/me/settings", Map.of("activity_visibility", "private")));
        assertEquals(
                0,
                ok(peggy.http().get("/api/users/" + oscar.username() + "/activity"))
                        .path("activity")
                        .size());
        assertTrue(mentions(
                ok(oscar.http().get("/api/users/" + oscar.username() + "/activity"))
                        .path("activity"),
                name));
        // a push made while private stays private when the setting is opened again
        String later = "later-" + NAMES.incrementAndGet();
        repo(oscar, later, "public");
        push(server, oscar, later, "made while private");
        activity(oscar.http(), oscar, i -> mentions(i, later));
        ok(oscar.http().patch("/api/me/settings", Map.of("activity_visibility", "public")));
        JsonNode open = ok(anonymous(server).get("/api/users/" + oscar.username() + "/activity"))
                .path("activity");
        assertTrue(mentions(open, name), open.toString());
        assertFalse(mentions(open, later), open.toString());
    }

    /**
     * Two users, each with a public and a private repository, pushed to, followed and starred: no route of the people
     * family, asked anonymously or by either user, names the private repositories or counts them, even when the
     * private name is the search term. A public repository made private later takes its earlier items with it.
     */
    @Test
    void noRouteOfPeopleEverShowsAPrivateRepositoryOrCountsIt(AtriumServer server) throws Exception {
        User a = server.newUser();
        User b = server.newUser();
        int n = NAMES.incrementAndGet();
        String aPublic = "apub-" + n;
        String aPrivate = "asecretrepo-" + n;
        String bPublic = "bpub-" + n;
        String bPrivate = "bsecretrepo-" + n;
        String aPublicId = repo(a, aPublic, "public");
        String aPrivateId = repo(a, aPrivate, "private");
        repo(b, bPublic, "public");
        String bPrivateId = repo(b, bPrivate, "private");
        push(server, a, aPublic, "public work of a");
        push(server, a, aPrivate, "secret work of a");
        push(server, b, bPublic, "public work of b");
        push(server, b, bPrivate, "secret work of b");
        follow(a, b);
        follow(b, a);
        // stars of the private repositories by their owners (the star routes are the repositories' own)
        a.http().post("/api/repos/" + aPrivateId + "/star", Map.of());
        b.http().post("/api/repos/" + bPrivateId + "/star", Map.of());
        activity(anonymous(server), a, i -> mentions(i, aPublic));
        activity(anonymous(server), b, i -> mentions(i, bPublic));
        // the private pushes were heard too: wait until the owner's own view has settled
        activity(a.http(), a, i -> mentions(i, aPublic));

        List<String> secrets = List.of(aPrivate, bPrivate, "secret work");
        List<Http> callers = List.of(anonymous(server), a.http(), b.http());
        for (User u : List.of(a, b)) {
            List<String> paths = new ArrayList<>(List.of(
                    "/api/users/" + u.username(),
                    "/api/users/" + u.username() + "/activity",
                    "/api/users/" + u.username() + "/activity?limit=100",
                    "/api/users/" + u.username() + "/followers",
                    "/api/users/" + u.username() + "/following",
                    "/api/explore/users/" + u.username(),
                    "/api/explore/users?q=" + u.username()));
            for (String secret : List.of(aPrivate, bPrivate)) {
                paths.add("/api/explore/users?q=" + secret);
            }
            for (Http caller : callers) {
                for (String path : paths) {
                    Http.Reply r = caller.get(path);
                    assertEquals(200, r.status(), path + ": " + r.body());
                    for (String secret : secrets) {
                        assertFalse(r.body().contains(secret), path + " shows " + secret + ": " + r.body());
                    }
                }
                JsonNode profile = ok(caller.get("/api/explore/users/" + u.username()));
                assertEquals(1, profile.path("user").path("public_repos").asInt(), profile.toString());
                assertEquals(1, profile.path("repositories").size(), profile.toString());
            }
            assertEquals(
                    0,
                    ok(anonymous(server).get("/api/explore/users?q=" + aPrivate))
                            .path("total")
                            .asInt());
        }
        // the owner's own follow requests route says nothing of repositories either
        assertFalse(a.http()
                .get("/api/users/" + a.username() + "/follow-requests")
                .body()
                .contains(aPrivate));

        // a public repository made private takes its earlier items out of every view
        ok(a.http().patch("/api/repos/" + aPublicId, Map.of("visibility", "private")));
        for (Http caller : callers) {
            JsonNode items =
                    ok(caller.get("/api/users/" + a.username() + "/activity")).path("activity");
            assertFalse(items.toString().contains(aPublic), items.toString());
        }
        assertEquals(
                0,
                ok(anonymous(server).get("/api/users/" + a.username()))
                        .path("user")
                        .path("public_repos")
                        .asInt());
        // and once it is heard, the items are out of the counts too
        long deadline = System.currentTimeMillis() + 10_000;
        while (ok(anonymous(server).get("/api/users/" + a.username() + "/activity"))
                                .path("total")
                                .asInt()
                        != 0
                && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        assertEquals(
                0,
                ok(anonymous(server).get("/api/users/" + a.username() + "/activity"))
                        .path("total")
                        .asInt());
    }

    /**
     * Stars and releases of public repositories are activity of who starred and who published (the events
     * {@code atrium/repo/starred} and {@code atrium/repo/release_published}); an unstar takes the star back; a star of a
     * private repository never shows.
     */
    @Test
    void starsAndReleasesOfPublicRepositoriesAreActivity(AtriumServer server) throws Exception {
        User owner = server.newUser();
        User fan = server.newUser();
        String name = "starred-" + NAMES.incrementAndGet();
        String id = repo(owner, name, "public");
        push(server, owner, name, "something to star");
        assertTrue(fan.http().post("/api/repos/" + id + "/star", Map.of()).status() < 300);
        JsonNode items = activity(anonymous(server), fan, i -> mentions(i, name));
        assertEquals("star", items.get(0).path("type").asText());
        assertEquals(
                owner.username() + "/" + name,
                items.get(0).path("repository").path("full_name").asText());
        assertTrue(fan.http().delete("/api/repos/" + id + "/star").status() < 300);
        activity(anonymous(server), fan, i -> !mentions(i, name));

        Http.Reply release =
                owner.http().post("/api/repos/" + id + "/releases", Map.of("tag_name", "v1.0.0", "name", "One"));
        assertEquals(201, release.status(), release.body());
        JsonNode released = activity(anonymous(server), owner, i -> i.toString().contains("\"release\""));
        assertTrue(released.toString().contains("v1.0.0"), released.toString());
    }

    @Test
    void anUploadedAvatarIsServedSquareInTwoSizesWithCachingHeaders(AtriumServer server) throws Exception {
        User u = server.newUser();
        BufferedImage picture = new BufferedImage(300, 200, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = picture.createGraphics();
        g.setColor(Color.ORANGE);
        g.fillRect(0, 0, 300, 200);
        g.dispose();
        ByteArrayOutputStream png = new ByteArrayOutputStream();
        ImageIO.write(picture, "png", png);
        // the format is told by the bytes, whatever the client calls it
        Http.Reply up = u.http().send("PUT", "/api/me/avatar", png.toByteArray(), "application/octet-stream");
        assertEquals(200, up.status(), up.body());
        String url = up.json().path("avatar_url").asText();
        assertTrue(url.startsWith(server.base() + "/api/avatars/av_"), url);
        assertEquals(
                url,
                ok(anonymous(server).get("/api/users/" + u.username()))
                        .path("user")
                        .path("avatar_url")
                        .asText());
        assertEquals(url, ok(u.http().get("/api/me")).path("picture").asText());

        HttpResponse<byte[]> large =
                CLIENT.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, large.statusCode());
        assertEquals("image/png", large.headers().firstValue("Content-Type").orElse(""));
        assertTrue(
                large.headers().firstValue("Cache-Control").orElse("").contains("max-age="),
                large.headers().toString());
        String etag = large.headers().firstValue("ETag").orElseThrow();
        BufferedImage big = ImageIO.read(new ByteArrayInputStream(large.body()));
        assertEquals(256, big.getWidth());
        assertEquals(256, big.getHeight());
        HttpResponse<byte[]> small = CLIENT.send(
                HttpRequest.newBuilder(URI.create(url + "?size=64")).build(), HttpResponse.BodyHandlers.ofByteArray());
        BufferedImage little = ImageIO.read(new ByteArrayInputStream(small.body()));
        assertEquals(64, little.getWidth());
        assertNotEquals(etag, small.headers().firstValue("ETag").orElse(""));
        HttpResponse<byte[]> again = CLIENT.send(
                HttpRequest.newBuilder(URI.create(url))
                        .header("If-None-Match", etag)
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(304, again.statusCode());
        assertEquals(0, again.body().length);

        ByteArrayOutputStream gif = new ByteArrayOutputStream();
        ImageIO.write(picture, "gif", gif);
        Http.Reply second = u.http().send("PUT", "/api/me/avatar", gif.toByteArray(), "image/gif");
        assertEquals(200, second.status(), second.body());
        assertNotEquals(url, second.json().path("avatar_url").asText(), "a new upload has a new URL");
        assertError(
                404,
                "NOT_FOUND",
                anonymous(server).get(url.substring(server.base().length())));

        // a 1x1 lossless WebP: the JDK reads no WebP, the bundle's own reader does
        byte[] webp = java.util.Base64.getDecoder().decode("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==");
        Http.Reply third = u.http().send("PUT", "/api/me/avatar", webp, "image/webp");
        assertEquals(200, third.status(), third.body());

        assertError(
                415,
                "UNSUPPORTED_MEDIA_TYPE",
                u.http().send("PUT", "/api/me/avatar", "not an image at all".getBytes(), "image/png"));
        assertError(
                400,
                "BAD_REQUEST",
                u.http().send("PUT", "/api/me/avatar", java.util.Arrays.copyOf(png.toByteArray(), 40), "image/png"));
        assertError(
                400,
                "BAD_REQUEST",
                anonymous(server)
                        .get(second.json()
                                        .path("avatar_url")
                                        .asText()
                                        .substring(server.base().length()) + "?size=7"));
        assertError(
                401, "UNAUTHORIZED", anonymous(server).send("PUT", "/api/me/avatar", png.toByteArray(), "image/png"));
    }
}
