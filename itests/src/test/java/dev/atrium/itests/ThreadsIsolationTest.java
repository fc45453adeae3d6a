package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.atrium.itests.AtriumServer.User;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Every thread, run, artifact and share route answers another Principal exactly as a missing id: 404. */
@SharedServer
class ThreadsIsolationTest {

    @Test
    void everyThreadRunArtifactAndShareRouteIsNotFoundForAStranger(AtriumServer server) throws Exception {
        User owner = server.newUser();
        User stranger = server.newUser();
        String thread = owner.http()
                .post("/api/spaces/" + owner.defaultSpaceId() + "/threads", Map.of("title", "Mine"))
                .json()
                .path("thread")
                .path("id")
                .asText();
        owner.http().post("/api/threads/" + thread + "/messages", Map.of("content", "secret plans"));
        String run = owner.http()
                .post("/api/threads/" + thread + "/runs", Map.of())
                .json()
                .path("run")
                .path("id")
                .asText();
        // artifacts go to a run that has not finished: a queued run without a requester stays queued (never dispatched)
        String other = owner.http()
                .post("/api/spaces/" + owner.defaultSpaceId() + "/threads", Map.of("title", "Held"))
                .json()
                .path("thread")
                .path("id")
                .asText();
        String held = "run_held" + Long.toHexString(System.nanoTime());
        server.db.execute(
                "INSERT INTO runs (id, thread_id, space_id, status) VALUES (?, ?, ?, 'queued')",
                held,
                other,
                owner.defaultSpaceId());
        Http.Reply art =
                owner.http().post("/api/runs/" + held + "/artifacts", Map.of("name", "notes.txt", "content", "hello"));
        assertEquals(201, art.status(), art.body());
        String artifact = art.json().path("artifact").path("id").asText();
        String share = owner.http()
                .post("/api/threads/" + thread + "/share", Map.of())
                .json()
                .path("share")
                .path("id")
                .asText();
        com.fasterxml.jackson.databind.JsonNode read =
                owner.http().get("/api/artifacts/" + artifact).get("artifact");
        assertEquals("notes.txt", read.path("name").asText());
        assertEquals("hello", read.path("content").asText());

        String space = "/api/spaces/" + owner.defaultSpaceId();
        List<Http.Reply> replies = List.of(
                stranger.http().get(space + "/threads"),
                stranger.http().post(space + "/threads", Map.of("title", "intruder")),
                stranger.http().get(space + "/threads/search?q=secret"),
                stranger.http().get("/api/threads/" + thread),
                stranger.http().patch("/api/threads/" + thread, Map.of("title", "taken")),
                stranger.http().delete("/api/threads/" + thread),
                stranger.http().post("/api/threads/" + thread + "/archive", Map.of()),
                stranger.http().post("/api/threads/" + thread + "/unarchive", Map.of()),
                stranger.http().get("/api/threads/" + thread + "/messages"),
                stranger.http().post("/api/threads/" + thread + "/messages", Map.of("content", "hi")),
                stranger.http().get("/api/threads/" + thread + "/messages/search?q=secret"),
                stranger.http().get("/api/threads/" + thread + "/history"),
                stranger.http().post("/api/threads/" + thread + "/share", Map.of()),
                stranger.http().get("/api/threads/" + thread + "/shares"),
                stranger.http().post("/api/threads/" + thread + "/shares/" + share + "/revoke", Map.of()),
                stranger.http().get("/api/threads/" + thread + "/export?format=markdown"),
                stranger.http().get("/api/threads/" + thread + "/export?format=pdf"),
                stranger.http().get("/api/threads/" + thread + "/runs"),
                stranger.http().post("/api/threads/" + thread + "/runs", Map.of("input", "go")),
                stranger.http().get("/api/runs/" + run),
                stranger.http().post("/api/runs/" + run + "/cancel", Map.of()),
                stranger.http().get("/api/runs/" + run + "/events"),
                stranger.http().get("/api/runs/" + run + "/sse"),
                stranger.http().get("/api/runs/" + run + "/replay"),
                stranger.http().get("/api/runs/" + run + "/artifacts"),
                stranger.http().post("/api/runs/" + run + "/artifacts", Map.of("name", "x", "content", "y")),
                stranger.http().get("/api/artifacts/" + artifact));
        for (Http.Reply r : replies) {
            assertEquals(
                    404,
                    r.status(),
                    r.raw().request().method() + " " + r.raw().request().uri() + ": " + r.body());
            assertEquals("NOT_FOUND", r.errorCode(), r.body());
        }
        // and nothing changed for the owner
        assertEquals(
                "Mine",
                owner.http()
                        .get("/api/threads/" + thread)
                        .json()
                        .path("thread")
                        .path("title")
                        .asText());
        assertEquals(
                1,
                owner.http()
                        .get("/api/threads/" + thread + "/messages")
                        .json()
                        .path("messages")
                        .size());
        assertEquals(
                1,
                owner.http()
                        .get("/api/threads/" + thread + "/runs")
                        .json()
                        .path("runs")
                        .size());
        com.fasterxml.jackson.databind.JsonNode listed =
                owner.http().get("/api/runs/" + held + "/artifacts").json().path("artifacts");
        assertEquals(1, listed.size());
        assertEquals(5, listed.get(0).path("size").asLong(), "a list reports each content's size without loading it");
        org.junit.jupiter.api.Assertions.assertTrue(
                listed.get(0).path("content").isMissingNode());
        // a finished run takes no more artifacts
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!java.util.Set.of("completed", "failed", "cancelled")
                        .contains(owner.http()
                                .get("/api/runs/" + run)
                                .json()
                                .path("run")
                                .path("status")
                                .asText())
                && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        Http.Reply late =
                owner.http().post("/api/runs/" + run + "/artifacts", Map.of("name", "late.txt", "content", "too late"));
        assertEquals(409, late.status(), late.body());
        assertEquals(
                0,
                owner.http()
                        .get("/api/runs/" + run + "/artifacts")
                        .json()
                        .path("artifacts")
                        .size());
        assertEquals(404, stranger.http().get("/api/threads/th_doesnotexist").status());
        assertEquals(404, stranger.http().get("/api/runs/run_doesnotexist").status());
    }

    @Test
    void runRoutesNeedTheRunScopesAndThreadRoutesTheThreadScopes(AtriumServer server) {
        User threadsOnly = server.newUser("threads:read threads:write");
        String thread = threadsOnly
                .http()
                .post("/api/spaces/" + threadsOnly.defaultSpaceId() + "/threads", Map.of("title", "t"))
                .json()
                .path("thread")
                .path("id")
                .asText();
        assertEquals(
                200,
                threadsOnly.http().get("/api/threads/" + thread + "/history").status());
        Http.Reply denied = threadsOnly.http().post("/api/threads/" + thread + "/runs", Map.of());
        assertEquals(403, denied.status(), denied.body());
        assertEquals("FORBIDDEN", denied.errorCode());
        assertEquals(
                403, threadsOnly.http().get("/api/threads/" + thread + "/runs").status());

        User runsOnly = server.newUser("runs:read");
        assertEquals(
                403,
                runsOnly.http()
                        .get("/api/spaces/" + runsOnly.defaultSpaceId() + "/threads")
                        .status());
    }
}
