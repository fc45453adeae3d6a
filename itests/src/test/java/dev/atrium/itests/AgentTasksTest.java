package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Agent tasks on the shared server, whose {@code openai} provider talks to the run's {@link FakeModelServer}: each
 * test scripts a model name of its own and chooses it for its workspace.
 */
@SharedServer
class AgentTasksTest {

    private static final AtomicInteger MODELS = new AtomicInteger();

    private static String model() {
        return "tasks-model-" + MODELS.incrementAndGet();
    }

    private static User withModel(AtriumServer server, String model) {
        User u = server.newUser();
        Http.Reply m = u.http()
                .patch("/api/spaces/" + u.defaultSpaceId() + "/model", Map.of("provider", "openai", "model", model));
        assertEquals(200, m.status(), m.body());
        return u;
    }

    private static JsonNode create(User u, Map<String, ?> body) {
        Http.Reply r = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/agent-tasks", body);
        assertEquals(201, r.status(), r.body());
        return r.get("agent_task");
    }

    private static void assertError(int status, String code, Http.Reply r) {
        assertEquals(status, r.status(), r.body());
        assertEquals(code, r.json().path("error").path("code").asText(), r.body());
        assertFalse(r.json().path("error").path("message").asText().isBlank(), r.body());
    }

    @Test
    void tasksAreCreatedReadFilteredUpdatedAndDeleted(AtriumServer server) {
        User u = server.newUser();
        String base = "/api/spaces/" + u.defaultSpaceId() + "/agent-tasks";
        JsonNode task = create(
                u,
                Map.of(
                        "title", "  Write the release notes  ",
                        "description", "For 2.0",
                        "priority", "high",
                        "due_at", "2026-12-24T18:00:00+01:00"));
        assertEquals(
                Set.of(
                        "id",
                        "space_id",
                        "title",
                        "description",
                        "status",
                        "priority",
                        "due_at",
                        "thread_id",
                        "plan",
                        "run_id",
                        "last_run_status",
                        "created_at",
                        "updated_at"),
                WorkspacesTest.fields(task));
        assertEquals("Write the release notes", task.get("title").asText());
        assertEquals("todo", task.get("status").asText());
        assertEquals("high", task.get("priority").asText());
        assertEquals("2026-12-24T17:00:00Z", task.get("due_at").asText());
        assertTrue(task.get("plan").isNull());
        assertEquals(u.defaultSpaceId(), task.get("space_id").asText());
        String id = task.get("id").asText();
        assertEquals(task, u.http().get("/api/agent-tasks/" + id).get("agent_task"));

        JsonNode plain = create(u, Map.of("title", "Tidy up"));
        assertEquals("normal", plain.get("priority").asText());
        assertTrue(plain.get("due_at").isNull());

        // a thread of the workspace may be linked; one of another Principal's reads as none of this workspace
        String thread = u.http()
                .post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", "tasks"))
                .get("thread")
                .path("id")
                .asText();
        User other = server.newUser();
        String foreign = other.http()
                .post("/api/spaces/" + other.defaultSpaceId() + "/threads", Map.of("title", "theirs"))
                .get("thread")
                .path("id")
                .asText();
        assertError(400, "BAD_REQUEST", u.http().patch("/api/agent-tasks/" + id, Map.of("thread_id", foreign)));
        assertError(400, "BAD_REQUEST", u.http().post(base, Map.of("title", "x", "thread_id", "thr_missing")));
        JsonNode updated = u.http()
                .patch("/api/agent-tasks/" + id, Map.of("status", "in_progress", "thread_id", thread))
                .get("agent_task");
        assertEquals("in_progress", updated.get("status").asText());
        assertEquals(thread, updated.get("thread_id").asText());
        Map<String, Object> clear = new HashMap<>();
        clear.put("due_at", null);
        clear.put("description", null);
        JsonNode cleared = u.http().patch("/api/agent-tasks/" + id, clear).get("agent_task");
        assertTrue(cleared.get("due_at").isNull(), cleared.toString());
        assertTrue(cleared.get("description").isNull(), cleared.toString());
        assertEquals("Write the release notes", cleared.get("title").asText());

        // the list: newest first, filtered by status, paginated
        JsonNode all = u.http().get(base).json();
        assertEquals(2, all.get("total").asInt());
        assertEquals(plain.get("id"), all.get("agent_tasks").get(0).get("id"));
        JsonNode inProgress = u.http().get(base + "?status=in_progress").json();
        assertEquals(1, inProgress.get("total").asInt());
        assertEquals(id, inProgress.get("agent_tasks").get(0).get("id").asText());
        assertEquals(
                1,
                u.http()
                        .get(base + "?status=todo&limit=1")
                        .json()
                        .get("agent_tasks")
                        .size());
        assertEquals(0, u.http().get(base + "?status=done").json().get("total").asInt());
        assertEquals(
                1, u.http().get(base + "?priority=high").json().get("total").asInt());
        assertEquals(
                1,
                u.http()
                        .get(base + "?limit=1&offset=1")
                        .json()
                        .get("agent_tasks")
                        .size());

        // bad input: 400 with the spec's body, saying what was wrong
        assertError(400, "BAD_REQUEST", u.http().get(base + "?status=later"));
        assertError(400, "BAD_REQUEST", u.http().get(base + "?limit=0"));
        assertError(400, "BAD_REQUEST", u.http().post(base, Map.of("description", "no title")));
        assertError(400, "BAD_REQUEST", u.http().post(base, Map.of("title", "   ")));
        assertError(400, "BAD_REQUEST", u.http().post(base, Map.of("title", "x".repeat(201))));
        assertError(400, "BAD_REQUEST", u.http().post(base, Map.of("title", "x", "status", "someday")));
        assertError(400, "BAD_REQUEST", u.http().post(base, Map.of("title", "x", "priority", "p1")));
        assertError(400, "BAD_REQUEST", u.http().post(base, Map.of("title", "x", "due_at", "tomorrow")));
        assertError(400, "BAD_REQUEST", u.http().post(base, Map.of("title", "x", "due_at", "2026-12-24")));
        assertError(400, "BAD_REQUEST", u.http().post(base, Map.of("title", 7)));
        assertError(400, "BAD_REQUEST", u.http().post(base, List.of("title")));
        assertError(400, "BAD_REQUEST", u.http().patch("/api/agent-tasks/" + id, Map.of()));
        Map<String, Object> nullTitle = new HashMap<>();
        nullTitle.put("title", null);
        assertError(400, "BAD_REQUEST", u.http().patch("/api/agent-tasks/" + id, nullTitle));
        assertEquals(cleared, u.http().get("/api/agent-tasks/" + id).get("agent_task"));

        assertEquals(200, u.http().delete("/api/agent-tasks/" + id).status());
        assertError(404, "NOT_FOUND", u.http().get("/api/agent-tasks/" + id));
        assertError(404, "NOT_FOUND", u.http().delete("/api/agent-tasks/" + id));
        assertEquals(1, u.http().get(base).json().get("total").asInt());
    }

    @Test
    void aPlanStoresTheStepsTheWorkspacesModelAnswered(AtriumServer server, FakeModelServer models) {
        String model = model();
        models.script(
                model,
                body -> FakeModelServer.openAiText(
                        "```json\n{\"steps\":[{\"title\":\"Collect the changes\",\"detail\":\"git log since 1.9\"},",
                        "{\"title\":\"Write the notes\",\"detail\":\"one line per change\"}]}\n```"));
        User u = withModel(server, model);
        JsonNode task = create(u, Map.of("title", "Write the release notes", "description", "For 2.0"));
        String id = task.get("id").asText();

        Http.Reply planned = u.http().post("/api/agent-tasks/" + id + "/plan", Map.of());
        assertEquals(200, planned.status(), planned.body());
        JsonNode plan = planned.get("agent_task").get("plan");
        assertEquals(model, plan.get("model").asText());
        assertFalse(plan.get("created_at").asText().isEmpty());
        assertEquals(2, plan.get("steps").size());
        assertEquals(
                "Collect the changes", plan.get("steps").get(0).get("title").asText());
        assertEquals("git log since 1.9", plan.get("steps").get(0).get("detail").asText());
        assertFalse(plan.get("steps").get(0).get("done").asBoolean());
        assertEquals("Write the notes", plan.get("steps").get(1).get("title").asText());
        assertEquals(
                plan, u.http().get("/api/agent-tasks/" + id).get("agent_task").get("plan"));

        // the model was asked for JSON steps about this task
        JsonNode asked = models.received(model).get(0);
        String system = asked.path("messages").get(0).path("content").asText();
        assertTrue(system.contains("\"steps\""), system);
        String user = asked.path("messages").get(1).path("content").asText();
        assertTrue(user.contains("Write the release notes") && user.contains("For 2.0"), user);
    }

    @Test
    void aFailingModelIs502WithTheSpecBodyAndLeavesTheTaskAsItWas(AtriumServer server, FakeModelServer models) {
        String failing = model(); // never scripted: the fake answers 500
        User u = withModel(server, failing);
        String id = create(u, Map.of("title", "Plan me")).get("id").asText();
        JsonNode before = u.http().get("/api/agent-tasks/" + id).get("agent_task");
        assertError(502, "MODEL_ERROR", u.http().post("/api/agent-tasks/" + id + "/plan", Map.of()));
        assertEquals(before, u.http().get("/api/agent-tasks/" + id).get("agent_task"));

        // an answer without steps is the same failure
        String chatty = model();
        models.script(chatty, body -> FakeModelServer.openAiText("I would rather not plan this."));
        Http.Reply m = u.http()
                .patch("/api/spaces/" + u.defaultSpaceId() + "/model", Map.of("provider", "openai", "model", chatty));
        assertEquals(200, m.status(), m.body());
        assertError(502, "MODEL_ERROR", u.http().post("/api/agent-tasks/" + id + "/plan", Map.of()));
        assertEquals(before, u.http().get("/api/agent-tasks/" + id).get("agent_task"));

        // a workspace that chose no model: 409, saying how to choose one
        User none = server.newUser();
        String other = create(none, Map.of("title", "No model")).get("id").asText();
        Http.Reply conflict = none.http().post("/api/agent-tasks/" + other + "/plan", Map.of());
        assertError(409, "CONFLICT", conflict);
        assertTrue(conflict.body().contains("/model"), conflict.body());
    }

    @Test
    void aRunStartedForATaskDecidesItsStatus(AtriumServer server, FakeModelServer models) throws Exception {
        String model = model();
        models.script(model, body -> FakeModelServer.openAiText("All ", "done."));
        User u = withModel(server, model);
        String thread = u.http()
                .post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", "task runs"))
                .get("thread")
                .path("id")
                .asText();
        String noThread = create(u, Map.of("title", "Nowhere to run")).get("id").asText();
        assertError(409, "CONFLICT", u.http().post("/api/agent-tasks/" + noThread + "/run", Map.of()));

        String id = create(u, Map.of("title", "Say you are done", "description", "Then stop.", "thread_id", thread))
                .get("id")
                .asText();
        Http.Reply started = u.http().post("/api/agent-tasks/" + id + "/run", Map.of());
        assertEquals(200, started.status(), started.body());
        String runId = started.json().get("run_id").asText();
        assertEquals(runId, started.get("agent_task").get("run_id").asText());
        JsonNode done = awaitRunOutcome(u, id);
        assertEquals("done", done.get("status").asText(), done.toString());
        assertEquals("completed", done.get("last_run_status").asText());
        assertEquals(
                "completed",
                u.http().get("/api/runs/" + runId).get("run").path("status").asText());
        // the run got the task as its input, on the task's thread
        String input = models.received(model).get(0).path("messages").toString();
        assertTrue(input.contains("Say you are done") && input.contains("Then stop."), input);

        // a run that fails puts the task back to todo, saying so
        String failing = model();
        Http.Reply m = u.http()
                .patch("/api/spaces/" + u.defaultSpaceId() + "/model", Map.of("provider", "openai", "model", failing));
        assertEquals(200, m.status(), m.body());
        assertEquals(
                200, u.http().post("/api/agent-tasks/" + id + "/run", Map.of()).status());
        JsonNode failed = awaitRunOutcome(u, id);
        assertEquals("todo", failed.get("status").asText(), failed.toString());
        assertEquals("failed", failed.get("last_run_status").asText());
    }

    @Test
    void aRunThatEndsWhileTheCapabilityIsOffIsReconciledWhenItIsBack(AtriumServer server, FakeModelServer models)
            throws Exception {
        String model = model();
        models.script(model, body -> {
            List<String> frames = new java.util.ArrayList<>(List.of("SLEEP:3000"));
            frames.addAll(FakeModelServer.openAiText("Finished."));
            return frames;
        });
        User u = withModel(server, model);
        String thread = u.http()
                .post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", "slow run"))
                .get("thread")
                .path("id")
                .asText();
        String id = create(u, Map.of("title", "Outlive me", "thread_id", thread))
                .get("id")
                .asText();
        Http.Reply started = u.http().post("/api/agent-tasks/" + id + "/run", Map.of());
        assertEquals(200, started.status(), started.body());
        String runId = started.json().get("run_id").asText();
        // one run at a time: a second start while it streams is refused
        assertError(409, "CONFLICT", u.http().post("/api/agent-tasks/" + id + "/run", Map.of()));
        try {
            Http.Reply off = server.operator().post("/admin/features/agent-tasks/disable", Map.of());
            assertEquals(200, off.status(), off.body());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!"completed"
                    .equals(u.http()
                            .get("/api/runs/" + runId)
                            .get("run")
                            .path("status")
                            .asText())) {
                assertTrue(System.nanoTime() < deadline, "the run did not complete");
                Thread.sleep(100);
            }
        } finally {
            Http.Reply on = server.operator().post("/admin/features/agent-tasks/enable", Map.of());
            assertEquals(200, on.status(), on.body());
        }
        assertEquals(
                200,
                FeatureSwitchTest.await(u.http(), "/api/agent-tasks/" + id, 200).status());
        JsonNode task = awaitRunOutcome(u, id);
        assertEquals("done", task.get("status").asText(), task.toString());
        assertEquals("completed", task.get("last_run_status").asText());
    }

    private static JsonNode awaitRunOutcome(User u, String id) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            JsonNode task = u.http().get("/api/agent-tasks/" + id).get("agent_task");
            if (Set.of("completed", "failed", "cancelled")
                    .contains(task.path("last_run_status").asText())) {
                return task;
            }
            Thread.sleep(100);
        }
        fail("the run of task " + id + " did not end");
        return null;
    }

    @Test
    void aStrangerGetsTheSame404AsForAMissingTaskOnEveryRoute(AtriumServer server) {
        User owner = server.newUser();
        User stranger = server.newUser();
        String id = create(owner, Map.of("title", "Mine")).get("id").asText();
        JsonNode before = owner.http().get("/api/agent-tasks/" + id).get("agent_task");
        for (String target : List.of(id, "task_missing")) {
            String path = "/api/agent-tasks/" + target;
            Http.Reply get = stranger.http().get(path);
            assertError(404, "NOT_FOUND", get);
            for (Http.Reply r : List.of(
                    stranger.http().patch(path, Map.of("title", "theirs")),
                    stranger.http().delete(path),
                    stranger.http().post(path + "/plan", Map.of()),
                    stranger.http().post(path + "/run", Map.of()))) {
                assertError(404, "NOT_FOUND", r);
                assertEquals(get.json().get("error"), r.json().get("error"));
            }
        }
        String space = "/api/spaces/" + owner.defaultSpaceId() + "/agent-tasks";
        assertError(404, "NOT_FOUND", stranger.http().get(space));
        assertError(404, "NOT_FOUND", stranger.http().post(space, Map.of("title", "planted")));
        assertEquals(before, owner.http().get("/api/agent-tasks/" + id).get("agent_task"));
        assertEquals(1, owner.http().get(space).json().get("total").asInt());
    }
}
