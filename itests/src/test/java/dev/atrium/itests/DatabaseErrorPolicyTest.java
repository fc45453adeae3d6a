package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * One answer for what the database refuses, whichever bundle's route reached it (issue 14): every bundle reads and
 * writes through kernel.api's {@code Sql}, which refuses a NUL before PostgreSQL sees it, answers a value PostgreSQL
 * cannot hold with 400 and a unique violation with 409. Before, the kernel answered a NUL or an out-of-range date with
 * 500 while runs and threads answered 400.
 */
@SharedServer
class DatabaseErrorPolicyTest {

    private static final String NUL_BODY =
            "{\"error\":{\"code\":\"BAD_REQUEST\",\"message\":\"text must not contain NUL (U+0000) characters\"}}";

    private static String cursor(String text) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    private static void assertBody(int status, String expected, Http.Reply r) {
        assertEquals(status, r.status(), r.body());
        try {
            assertEquals(Http.JSON.readTree(expected), r.json(), r.body());
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aNulThatGetsPastTheEnvelopeIsTheSame400WhicheverBundleReachesTheDatabase(AtriumServer server) {
        User u = server.newUser();
        String repo = ReposApiTest.create(u, "policy");
        String thread = ThreadsTest.thread(u, "policy");
        String at = "2024-01-01T00:00:00Z";
        List<Http.Reply> replies = List.of(
                // repos: a body the envelope does not read (not a text type) names a workspace, which the kernel looks
                // up
                u.http()
                        .send(
                                "POST",
                                "/api/repos/" + repo + "/fork",
                                "{\"space_id\":\"sp_a\\u0000b\"}",
                                "application/octet-stream"),
                // runs: a cursor is base64url, so a NUL in it passes the envelope and reaches the runs table
                u.http().get("/api/threads/" + thread + "/runs?cursor=" + cursor(at + "|run_a\0b")),
                // threads: the same through a thread's history, which reads the threads' messages table
                u.http().get("/api/threads/" + thread + "/history?cursor=" + cursor(at + "|message|msg_a\0b")));
        for (Http.Reply r : replies) {
            assertBody(400, NUL_BODY, r);
        }
        // and what the envelope refuses before any route reads it says the same, in memories, threads, runs and repos
        String space = "/api/spaces/" + u.defaultSpaceId();
        List<Http.Reply> refused = List.of(
                u.http().post(space + "/memories", "{\"content\":\"a\\u0000b\"}"),
                u.http().post(space + "/threads", "{\"title\":\"a\\u0000b\"}"),
                u.http().post("/api/threads/" + thread + "/runs", "{\"input\":\"a\\u0000b\"}"),
                u.http().post(space + "/repos", "{\"name\":\"ok\",\"description\":\"a\\u0000b\"}"));
        for (Http.Reply r : refused) {
            BadInputTest.assertSpecError(r, 400, "BAD_REQUEST");
            assertTrue(
                    r.json()
                            .path("error")
                            .path("message")
                            .asText()
                            .endsWith("must not contain NUL (U+0000) characters"),
                    r.body());
        }
    }

    @Test
    void aDateTheDatabaseCannotHoldIs400NotA500(AtriumServer server) {
        User u = server.newUser();
        Http.Reply r = u.http()
                .post(
                        "/api/me/personal-access-tokens",
                        Map.of("name", "far", "scopes", "*", "expiresAt", "+300000-01-01T00:00:00Z"));
        assertBody(400, "{\"error\":{\"code\":\"BAD_REQUEST\",\"message\":\"a date or time is out of range\"}}", r);
        assertEquals(
                0,
                u.http().get("/api/me/personal-access-tokens").json().path("tokens").findValues("name").stream()
                        .filter(n -> n.asText().equals("far"))
                        .count());
    }

    @Test
    void aUniqueViolationIs409EvenWhenRequestsRace(AtriumServer server) throws Exception {
        User u = server.newUser();
        String space = "/api/spaces/" + u.defaultSpaceId();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Http.Reply>> racing = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                racing.add(pool.submit(() -> u.http().post(space + "/repos", Map.of("name", "twin"))));
            }
            int created = 0;
            for (Future<Http.Reply> f : racing) {
                Http.Reply r = f.get();
                if (r.status() == 201) {
                    created++;
                } else {
                    assertBody(
                            409,
                            "{\"error\":{\"code\":\"CONFLICT\",\"message\":\"a repository named twin already exists in this workspace\"}}",
                            r);
                }
            }
            assertEquals(1, created);
        } finally {
            pool.shutdownNow();
        }
        Http.Reply again = u.http().post(space + "/repos", Map.of("name", "twin"));
        assertBody(
                409,
                "{\"error\":{\"code\":\"CONFLICT\",\"message\":\"a repository named twin already exists in this workspace\"}}",
                again);
        String other = ReposApiTest.create(u, "other");
        Http.Reply rename = u.http().patch("/api/repos/" + other, Map.of("name", "twin"));
        assertBody(
                409,
                "{\"error\":{\"code\":\"CONFLICT\",\"message\":\"a repository named twin already exists in this workspace\"}}",
                rename);
    }
}
