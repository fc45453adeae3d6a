package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /api/repos/:id/pulls/:n/ai-review} (issue 35) against a model API on loopback speaking the real
 * OpenAI streaming protocol: the diff goes to the workspace's model in chunks, and its notes on lines of the head
 * become the review's inline comments.
 */
class PullAiReviewTest {

    static FakeModelServer fake;
    static TestDatabase db;
    static AtriumServer server;

    @BeforeAll
    static void start() throws Exception {
        fake = new FakeModelServer();
        db = TestDatabase.create();
        server = AtriumServer.launch(
                Files.createTempDirectory("atrium-ai-review-"),
                db,
                Map.of("ATRIUM_OPENAI_BASE_URL", fake.openAiBase(), "ATRIUM_OPENAI_API_KEY", "sk-test-openai"));
    }

    @AfterAll
    static void stop() throws Throwable {
        if (server != null) {
            server.close();
        }
        if (fake != null) {
            fake.close();
        }
    }

    @Test
    void theWorkspacesModelReviewsTheDiffInChunksAndItsNotesOnHeadLinesBecomeInlineComments() {
        User u = server.newUser();
        String model = "reviewer-1";
        assertEquals(
                200,
                u.http()
                        .patch(
                                "/api/spaces/" + u.defaultSpaceId() + "/model",
                                Map.of("provider", "openai", "model", model))
                        .status());
        String repo = ReposApiTest.create(u, "reviewed");
        String main = ReposApiTest.sha(ReposApiTest.commit(
                u, repo, "main", ReleasesTest.ZERO, "seed", List.of(ReposApiTest.file("a.txt", "one\ntwo\n"))));
        assertEquals(
                201,
                u.http()
                        .post("/api/repos/" + repo + "/branches", Map.of("name", "topic"))
                        .status());
        // more than one chunk of diff: the model is asked once per chunk
        String big = "x".repeat(100) + "\n";
        ReposApiTest.sha(ReposApiTest.commit(
                u,
                repo,
                "topic",
                main,
                "change",
                List.of(ReposApiTest.file("a.txt", "one\n2\n"), ReposApiTest.file("big.txt", big.repeat(400)))));
        Http.Reply pr = u.http()
                .post("/api/repos/" + repo + "/pulls", Map.of("title", "Review me", "head", "topic", "base", "main"));
        assertEquals(201, pr.status(), pr.body());
        String answer = "{\"summary\": \"Numbers in words, please.\", \"comments\": ["
                + "{\"path\": \"a.txt\", \"line\": 2, \"body\": \"spell it: two\"},"
                + "{\"path\": \"a.txt\", \"line\": 99, \"body\": \"no such line\"}]}";
        fake.script(
                model,
                body -> FakeModelServer.openAiText("Here it is: ", answer),
                body -> FakeModelServer.openAiText("{\"summary\": \"The big file is fine.\", \"comments\": []}"),
                body -> FakeModelServer.openAiText("{\"summary\": \"\", \"comments\": []}"));

        Http.Reply review = u.http().post("/api/repos/" + repo + "/pulls/1/ai-review", null);
        assertEquals(201, review.status(), review.body());
        JsonNode r = review.get("review");
        assertEquals("commented", r.get("state").asText());
        assertTrue(r.get("body").asText().contains("Review by reviewer-1"), r.toString());
        assertTrue(r.get("body").asText().contains("Numbers in words, please."), r.toString());
        assertTrue(r.get("body").asText().contains("The big file is fine."), r.toString());
        assertEquals(1, r.get("comments").size(), "the note on a line the head lacks is left out");
        assertEquals("a.txt", r.get("comments").get(0).get("path").asText());
        assertEquals(2, r.get("comments").get(0).get("line").asInt());
        List<JsonNode> asked = fake.received(model);
        assertEquals(2, asked.size(), "the diff went in two chunks");
        String firstPrompt = asked.get(0).path("messages").toString();
        assertTrue(firstPrompt.contains("+2"), firstPrompt);
        assertTrue(firstPrompt.contains("Part 1 of 2"), firstPrompt);
        assertEquals(
                1,
                u.http()
                        .get("/api/repos/" + repo + "/pulls/1/reviews")
                        .get("reviews")
                        .size());
    }
}
