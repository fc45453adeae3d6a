package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.text.PDFTextStripper;
import org.junit.jupiter.api.Test;

@SharedServer
class ThreadsTest {

    static String thread(User u, String title) {
        Http.Reply r = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", title));
        assertEquals(201, r.status(), r.body());
        return r.json().path("thread").path("id").asText();
    }

    @Test
    void threadsAreCreatedListedByStatusUpdatedArchivedAndDeleted(AtriumServer server) {
        User u = server.newUser();
        String base = "/api/spaces/" + u.username() + "/threads";
        Http.Reply created = u.http().post(base, Map.of("title", "  Release planning  "));
        assertEquals(201, created.status(), created.body());
        JsonNode t = created.get("thread");
        assertTrue(WorkspacesTest.fields(t).containsAll(Set.of("id", "title", "created_at")));
        assertEquals("Release planning", t.path("title").asText());
        String id = t.path("id").asText();
        thread(u, "Second");
        assertEquals(t, u.http().get("/api/threads/" + id).get("thread"));

        JsonNode patched = u.http()
                .patch("/api/threads/" + id, Map.of("title", "Release 2", "locale", "en-GB", "context_window", 8000))
                .get("thread");
        assertEquals("Release 2", patched.path("title").asText());
        assertEquals("en-GB", patched.path("locale").asText());
        assertEquals(8000, patched.path("context_window").asInt());
        assertEquals(
                400,
                u.http()
                        .patch("/api/threads/" + id, Map.of("status", "sleeping"))
                        .status());
        assertEquals(
                "archived",
                u.http()
                        .patch("/api/threads/" + id, Map.of("status", "archived"))
                        .get("thread")
                        .path("status")
                        .asText());
        assertEquals(
                "active",
                u.http()
                        .patch("/api/threads/" + id, Map.of("status", "active"))
                        .get("thread")
                        .path("status")
                        .asText());
        assertEquals(
                400,
                u.http()
                        .patch("/api/threads/" + id, Map.of("context_window", "big"))
                        .status());

        assertEquals(
                "archived",
                u.http()
                        .post("/api/threads/" + id + "/archive", Map.of())
                        .get("thread")
                        .path("status")
                        .asText());
        assertEquals(
                1, u.http().get(base + "?status=archived").json().path("total").asInt());
        assertEquals(
                1, u.http().get(base + "?status=active").json().path("total").asInt());
        assertEquals(2, u.http().get(base).json().path("total").asInt());
        assertEquals(400, u.http().get(base + "?status=nope").status());
        assertEquals(
                "active",
                u.http()
                        .post("/api/threads/" + id + "/unarchive", Map.of())
                        .get("thread")
                        .path("status")
                        .asText());
        assertEquals(
                2, u.http().get(base + "?status=active").json().path("total").asInt());

        assertEquals(200, u.http().delete("/api/threads/" + id).status());
        assertEquals(404, u.http().get("/api/threads/" + id).status());
        assertEquals(400, u.http().post(base, Map.of("title", "")).status());
    }

    @Test
    void messagesArePagedWithACursorAndSearchable(AtriumServer server) {
        User u = server.newUser();
        String id = thread(u, "Timeline");
        for (int i = 0; i < 25; i++) {
            Http.Reply m = u.http().post("/api/threads/" + id + "/messages", Map.of("content", "message number " + i));
            assertEquals(201, m.status(), m.body());
        }
        assertEquals(
                201,
                u.http()
                        .post(
                                "/api/threads/" + id + "/messages",
                                Map.of("role", "assistant", "content", "The kubernetes cluster restarts nightly"))
                        .status());
        assertEquals(
                400,
                u.http()
                        .post("/api/threads/" + id + "/messages", Map.of("role", "robot", "content", "x"))
                        .status());
        List<String> contents = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            JsonNode page = u.http()
                    .get("/api/threads/" + id + "/messages?limit=10" + (cursor == null ? "" : "&cursor=" + cursor))
                    .json();
            page.path("messages").forEach(m -> contents.add(m.path("content").asText()));
            cursor = page.path("next_cursor").isNull()
                    ? null
                    : page.path("next_cursor").asText();
            pages++;
        } while (cursor != null);
        assertEquals(3, pages);
        assertEquals(26, contents.size());
        assertEquals("message number 0", contents.get(0));
        assertEquals("The kubernetes cluster restarts nightly", contents.get(25));
        assertEquals(
                400, u.http().get("/api/threads/" + id + "/messages?cursor=abc").status());

        JsonNode found = u.http()
                .get("/api/threads/" + id + "/messages/search?q=restarting")
                .json();
        assertEquals(1, found.path("messages").size());
        // keyword search over threads: titles and message text, stemmed, inside the workspace only
        String other = thread(u, "Unrelated");
        JsonNode threads = u.http()
                .get("/api/spaces/" + u.defaultSpaceId() + "/threads/search?q=cluster")
                .json();
        assertEquals(1, threads.path("threads").size());
        assertEquals(id, threads.path("threads").get(0).path("id").asText());
        assertEquals(
                other,
                u.http()
                        .get("/api/spaces/" + u.defaultSpaceId() + "/threads/search?q=unrelated")
                        .json()
                        .path("threads")
                        .get(0)
                        .path("id")
                        .asText());
        User stranger = server.newUser();
        assertEquals(
                404,
                stranger.http()
                        .get("/api/spaces/" + u.defaultSpaceId() + "/threads/search?q=cluster")
                        .status());
        assertEquals(
                400,
                u.http()
                        .get("/api/spaces/" + u.defaultSpaceId() + "/threads/search")
                        .status());
    }

    @Test
    void nulCharactersAndFarFutureShareExpiriesAreRefusedWith400(AtriumServer server) {
        User u = server.newUser();
        String id = thread(u, "Binary-safe");
        String base = "/api/spaces/" + u.defaultSpaceId() + "/threads";
        Http.Reply title = u.http().post(base, Map.of("title", "a\u0000b"));
        assertEquals(400, title.status(), title.body());
        assertEquals("BAD_REQUEST", title.errorCode(), title.body());
        assertTrue(title.body().contains("NUL"), title.body());
        Http.Reply content = u.http().post("/api/threads/" + id + "/messages", Map.of("content", "x\u0000y"));
        assertEquals(400, content.status(), content.body());
        assertTrue(content.body().contains("content"), content.body());
        assertEquals(
                400,
                u.http().patch("/api/threads/" + id, Map.of("title", "\u0000")).status());
        assertEquals(400, u.http().get(base + "/search?q=a%00b").status());
        assertEquals(
                400,
                u.http()
                        .post("/api/spaces/" + u.defaultSpaceId() + "/memories", Map.of("content", "m\u0000"))
                        .status());

        Http.Reply far =
                u.http().post("/api/threads/" + id + "/share", Map.of("expires_at", "+300000-01-01T00:00:00Z"));
        assertEquals(400, far.status(), far.body());
        assertEquals(
                400,
                u.http()
                        .post(
                                "/api/threads/" + id + "/share",
                                Map.of(
                                        "expires_at",
                                        java.time.Instant.now()
                                                .plus(java.time.Duration.ofDays(400))
                                                .toString()))
                        .status());
        Http.Reply near = u.http()
                .post(
                        "/api/threads/" + id + "/share",
                        Map.of(
                                "expires_at",
                                java.time.Instant.now()
                                        .plus(java.time.Duration.ofDays(300))
                                        .toString()));
        assertEquals(201, near.status(), near.body());
        assertEquals(
                0,
                u.http()
                        .get("/api/threads/" + id + "/messages")
                        .json()
                        .path("messages")
                        .size());
    }

    @Test
    void aPublicShareAndAnExportAreReadInPages(AtriumServer server) {
        User u = server.newUser();
        String id = thread(u, "Long shared thread");
        for (int i = 1; i <= 3; i++) {
            assertEquals(
                    201,
                    u.http()
                            .post("/api/threads/" + id + "/messages", Map.of("content", "message " + i))
                            .status());
        }
        String token = u.http()
                .post("/api/threads/" + id + "/share", Map.of())
                .json()
                .path("share")
                .path("token")
                .asText();
        Http anon = server.anonymous();
        JsonNode first =
                anon.get("/api/public/thread-shares/" + token + "?limit=2").json();
        assertEquals(2, first.path("messages").size());
        assertEquals("message 1", first.path("messages").get(0).path("content").asText());
        JsonNode rest = anon.get("/api/public/thread-shares/" + token + "?limit=2&cursor="
                        + first.path("next_cursor").asText())
                .json();
        assertEquals(1, rest.path("messages").size());
        assertEquals("message 3", rest.path("messages").get(0).path("content").asText());
        assertTrue(rest.path("next_cursor").isNull());
        assertEquals(
                3,
                anon.get("/api/public/thread-shares/" + token)
                        .json()
                        .path("messages")
                        .size());
        assertEquals(
                400, anon.get("/api/public/thread-shares/" + token + "?limit=0").status());
        assertEquals(
                400,
                anon.get("/api/public/thread-shares/" + token + "?cursor=x").status());
        String md =
                u.http().get("/api/threads/" + id + "/export?format=markdown").body();
        assertTrue(md.contains("message 1") && md.contains("message 3"), md);
    }

    @Test
    void sharesArePublicPasswordProtectedOrExpiringAndShowOnlyTheirThread(AtriumServer server) throws Exception {
        User u = server.newUser();
        String id = thread(u, "Shared notes");
        String other = thread(u, "Private notes");
        u.http().post("/api/threads/" + other + "/messages", Map.of("content", "written in another thread"));
        u.http().post("/api/threads/" + id + "/messages", Map.of("content", "visible to the share"));
        Http anon = server.anonymous();

        JsonNode pub = u.http().post("/api/threads/" + id + "/share", Map.of()).get("share");
        String token = pub.path("token").asText();
        JsonNode view = anon.get("/api/public/thread-shares/" + token).json();
        assertEquals(Set.of("id", "title", "created_at"), WorkspacesTest.fields(view.path("thread")));
        assertEquals("Shared notes", view.path("thread").path("title").asText());
        assertEquals(1, view.path("messages").size());
        assertEquals(
                "visible to the share",
                view.path("messages").get(0).path("content").asText());
        assertFalse(view.toString().contains(u.defaultSpaceId()), "the public view names no workspace");
        assertFalse(view.toString().contains("Private notes"));
        assertFalse(
                view.toString().contains("written in another thread"), "the view holds only its own thread's messages");

        Http.Reply locked =
                u.http().post("/api/threads/" + id + "/share", Map.of("mode", "password", "password", "correct horse"));
        assertEquals(201, locked.status(), locked.body());
        String lockedToken = locked.json().path("share").path("token").asText();
        assertEquals(401, anon.get("/api/public/thread-shares/" + lockedToken).status());
        Http.Reply wrong =
                anon.post("/api/public/thread-shares/" + lockedToken + "/access", Map.of("password", "wrong horse"));
        assertEquals(401, wrong.status());
        assertEquals("UNAUTHORIZED", wrong.errorCode());
        Http.Reply right =
                anon.post("/api/public/thread-shares/" + lockedToken + "/access", Map.of("password", "correct horse"));
        assertEquals(200, right.status(), right.body());
        assertEquals("Shared notes", right.json().path("thread").path("title").asText());
        assertFalse(right.body().contains("written in another thread"), right.body());
        assertEquals(
                400,
                u.http()
                        .post("/api/threads/" + id + "/share", Map.of("mode", "password", "password", "short"))
                        .status());

        String expiring = u.http()
                .post("/api/threads/" + id + "/share", Map.of("expires_in", 1))
                .json()
                .path("share")
                .path("token")
                .asText();
        assertEquals(200, anon.get("/api/public/thread-shares/" + expiring).status());
        Thread.sleep(1_300);
        Http.Reply gone = anon.get("/api/public/thread-shares/" + expiring);
        assertEquals(410, gone.status());
        assertEquals("GONE", gone.errorCode());
        assertEquals(
                400,
                u.http()
                        .post("/api/threads/" + id + "/share", Map.of("expires_at", "2001-01-01T00:00:00Z"))
                        .status());

        JsonNode shares = u.http().get("/api/threads/" + id + "/shares").json().path("shares");
        assertEquals(3, shares.size());
        shares.forEach(s -> assertTrue(s.path("token").isMissingNode(), "a share's token is shown once"));
        String shareId = pub.path("id").asText();
        assertEquals(
                200,
                u.http()
                        .post("/api/threads/" + id + "/shares/" + shareId + "/revoke", Map.of())
                        .status());
        Http.Reply revoked = anon.get("/api/public/thread-shares/" + token);
        assertEquals(404, revoked.status());
        assertEquals("NOT_FOUND", revoked.errorCode());
        assertEquals(404, anon.get("/api/public/thread-shares/ats_doesnotexist").status());
    }

    @Test
    void exportIsMarkdownOrARealPdf(AtriumServer server) throws Exception {
        User u = server.newUser();
        String id = thread(u, "Export (me)");
        u.http().post("/api/threads/" + id + "/messages", Map.of("content", "First line of the export"));
        Http.Reply md = u.http().get("/api/threads/" + id + "/export?format=markdown");
        assertEquals(200, md.status());
        assertTrue(md.raw().headers().firstValue("Content-Type").orElse("").startsWith("text/markdown"));
        assertTrue(md.body().startsWith("# Export (me)\n"));
        assertTrue(md.body().contains("First line of the export"));
        assertEquals(
                400, u.http().get("/api/threads/" + id + "/export?format=docx").status());

        HttpResponse<byte[]> pdf = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(server.base() + "/api/threads/" + id + "/export?format=pdf"))
                                .header("Authorization", "Bearer " + u.http().token())
                                .build(),
                        HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, pdf.statusCode());
        assertEquals("application/pdf", pdf.headers().firstValue("Content-Type").orElse(""));
        String raw = new String(pdf.body(), StandardCharsets.ISO_8859_1);
        assertTrue(raw.startsWith("%PDF-1."));
        assertTrue(raw.stripTrailing().endsWith("%%EOF"));
        try (PDDocument doc = PDDocument.load(pdf.body())) {
            String text = new PDFTextStripper().getText(doc);
            assertTrue(text.startsWith("Export (me)\n"), text);
            assertTrue(text.contains("First line of the export"), text);
        }
    }

    @Test
    void historyListsMessagesAndRunsInOrder(AtriumServer server) {
        User u = server.newUser();
        String id = thread(u, "History");
        u.http().post("/api/threads/" + id + "/messages", Map.of("content", "before the run"));
        Http.Reply run = u.http().post("/api/threads/" + id + "/runs", Map.of());
        assertEquals(201, run.status(), run.body());
        JsonNode items = u.http().get("/api/threads/" + id + "/history").json().path("items");
        assertEquals(2, items.size());
        assertEquals("message", items.get(0).path("kind").asText());
        assertEquals("run", items.get(1).path("kind").asText());
        assertEquals(
                run.json().path("run").path("id").asText(),
                items.get(1).path("id").asText());
    }

    /** A cursor that decodes but holds an instant the database cannot store is bad input, not a 500. */
    @Test
    void cursorsWithOutOfRangeInstantsAre400OnRunsAndHistory(AtriumServer server) {
        User u = server.newUser();
        String id = thread(u, "Cursors");
        for (String decoded : List.of(
                "+1000000000-01-01T00:00:00Z|run|x",
                "-1000000000-01-01T00:00:00Z|message|x",
                "+1000000000-01-01T00:00:00Z|run_x",
                "-0001-01-01T00:00:00Z|run_x")) {
            String cursor = java.util.Base64.getUrlEncoder()
                    .withoutPadding()
                    .encodeToString(decoded.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            BadInputTest.assertSpecError(
                    u.http().get("/api/threads/" + id + "/history?cursor=" + cursor), 400, "BAD_REQUEST");
            BadInputTest.assertSpecError(
                    u.http().get("/api/threads/" + id + "/runs?cursor=" + cursor), 400, "BAD_REQUEST");
        }
    }

    /** A long thread's history comes in pages: every item once, in order, whatever the page size. */
    @Test
    void historyIsPagedWithoutGapsOrRepeats(AtriumServer server) {
        User u = server.newUser();
        String id = thread(u, "Paged history");
        List<String> expected = new java.util.ArrayList<>();
        for (int i = 0; i < 7; i++) {
            expected.add(u.http()
                    .post("/api/threads/" + id + "/messages", Map.of("content", "m" + i))
                    .json()
                    .path("message")
                    .path("id")
                    .asText());
            if (i % 3 == 0) {
                expected.add(u.http()
                        .post("/api/threads/" + id + "/runs", Map.of())
                        .json()
                        .path("run")
                        .path("id")
                        .asText());
            }
        }
        for (int size : new int[] {1, 2, 4, 100}) {
            List<String> seen = new java.util.ArrayList<>();
            String cursor = null;
            for (int pages = 0; pages < 50; pages++) {
                JsonNode page = u.http()
                        .get("/api/threads/" + id + "/history?limit=" + size
                                + (cursor == null ? "" : "&cursor=" + cursor))
                        .json();
                page.path("items").forEach(i -> seen.add(i.path("id").asText()));
                cursor = page.path("next_cursor").isNull()
                        ? null
                        : page.path("next_cursor").asText();
                if (cursor == null) {
                    break;
                }
            }
            assertEquals(expected, seen, "page size " + size);
        }
        assertEquals(
                400,
                u.http()
                        .get("/api/threads/" + id + "/history?cursor=not-a-cursor")
                        .status());
    }
}
