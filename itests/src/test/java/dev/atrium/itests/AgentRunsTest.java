package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.atrium.itests.AtriumServer.User;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Agent runs end to end against scripted model servers on loopback that speak OpenAI's and Anthropic's streaming
 * protocols. One server of its own (its providers point at the fakes), on a database the test can also read.
 */
@Timeout(120)
class AgentRunsTest {

    static FakeModelServer fake;
    static TestDatabase db;
    static AtriumServer server;
    static final AtomicInteger MODELS = new AtomicInteger();

    @BeforeAll
    static void start() throws Exception {
        fake = new FakeModelServer();
        db = TestDatabase.create();
        server = AtriumServer.launch(Files.createTempDirectory("atrium-runs-"), db, env());
    }

    static Map<String, String> env() {
        return Map.of(
                "ATRIUM_OPENAI_BASE_URL",
                fake.openAiBase(),
                "ATRIUM_OPENAI_API_KEY",
                "sk-test-openai",
                "ATRIUM_ANTHROPIC_BASE_URL",
                fake.anthropicBase(),
                "ATRIUM_ANTHROPIC_API_KEY",
                "sk-test-anthropic",
                "ATRIUM_RUNS_HEARTBEAT_MS",
                "300",
                "ATRIUM_RUNS_POLL_MS",
                "200",
                "ATRIUM_RUNS_FETCH_TIMEOUT_S",
                "4",
                "ATRIUM_RUNS_TURN_TIMEOUT_S",
                "8");
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

    static String model() {
        return "model-" + MODELS.incrementAndGet();
    }

    static User user(String provider, String model) {
        return user(server, provider, model, null);
    }

    /** A new user whose default workspace (or a new one with {@code posture}) uses {@code provider}/{@code model}. */
    static User user(AtriumServer on, String provider, String model, String posture) {
        User u = on.newUser();
        String space = u.defaultSpaceId();
        if (posture != null) {
            Http.Reply s =
                    u.http().post("/api/spaces", Map.of("name", "Restricted " + model, "security_posture", posture));
            assertEquals(201, s.status(), s.body());
            space = s.json().path("space").path("id").asText();
        }
        Http.Reply m = u.http().patch("/api/spaces/" + space + "/model", Map.of("provider", provider, "model", model));
        assertEquals(200, m.status(), m.body());
        return new User(u.username(), u.principalId(), space, u.http());
    }

    static String thread(User u) {
        Http.Reply t = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", "Agent test"));
        assertEquals(201, t.status(), t.body());
        return t.json().path("thread").path("id").asText();
    }

    static String run(User u, String threadId, String input) {
        Http.Reply r = u.http().post("/api/threads/" + threadId + "/runs", Map.of("input", input));
        assertEquals(201, r.status(), r.body());
        assertEquals("queued", r.json().path("run").path("status").asText());
        return r.json().path("run").path("id").asText();
    }

    static JsonNode awaitFinished(Http http, String runId) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            JsonNode run = http.get("/api/runs/" + runId).get("run");
            if (Set.of("completed", "failed", "cancelled")
                    .contains(run.path("status").asText())) {
                return run;
            }
            Thread.sleep(50);
        }
        fail("run " + runId + " did not finish");
        return null;
    }

    static List<JsonNode> events(Http http, String runId) {
        List<JsonNode> out = new ArrayList<>();
        http.get("/api/runs/" + runId + "/events").json().path("events").forEach(out::add);
        return out;
    }

    static List<String> types(List<JsonNode> events) {
        return events.stream().map(e -> e.path("type").asText()).toList();
    }

    static List<String> toolNames(JsonNode request, boolean anthropic) {
        List<String> names = new ArrayList<>();
        for (JsonNode t : request.path("tools")) {
            names.add(
                    anthropic
                            ? t.path("name").asText()
                            : t.path("function").path("name").asText());
        }
        return names;
    }

    /** A long thread is not sent whole: the model sees its system messages and the newest turns that fit the window. */
    @Test
    void theThreadsContextWindowBoundsWhatTheModelSees() throws Exception {
        String model = model();
        User u = user("openai", model);
        fake.script(model, body -> FakeModelServer.openAiText("D'accord."));
        String threadId = thread(u);
        assertEquals(
                200,
                u.http()
                        .patch("/api/threads/" + threadId, Map.of("context_window", 50))
                        .status());
        String old = "An old question. " + "x".repeat(400);
        for (Object[] m :
                new Object[][] {{"system", "Answer in French."}, {"user", old}, {"assistant", "An old answer."}}) {
            Http.Reply r =
                    u.http().post("/api/threads/" + threadId + "/messages", Map.of("role", m[0], "content", m[1]));
            assertEquals(201, r.status(), r.body());
        }
        String runId = run(u, threadId, "A new question?");
        assertEquals("completed", awaitFinished(u.http(), runId).path("status").asText());

        JsonNode sent = fake.received(model).get(0).path("messages");
        List<String> contents = new ArrayList<>();
        sent.forEach(m ->
                contents.add(m.path("role").asText() + ": " + m.path("content").asText()));
        assertTrue(
                contents.get(0).startsWith("system: ") && contents.get(0).contains("Answer in French."),
                contents.toString());
        assertEquals("user: A new question?", contents.get(contents.size() - 1), contents.toString());
        assertFalse(contents.stream().anyMatch(c -> c.contains("An old question")), "over the window: " + contents);
        assertFalse(
                contents.stream().anyMatch(c -> c.startsWith("assistant: ")),
                "a conversation starts with the user's turn, so the answer to a dropped question goes too: "
                        + contents);

        assertEquals(
                200,
                u.http()
                        .patch("/api/threads/" + threadId, Map.of("context_window", 100_000))
                        .status());
        fake.script(model, body -> FakeModelServer.openAiText("Oui."));
        String second = run(u, threadId, "And again?");
        assertEquals("completed", awaitFinished(u.http(), second).path("status").asText());
        JsonNode all = fake.received(model).get(0).path("messages");
        assertTrue(
                all.toString().contains("An old question") && all.toString().contains("An old answer."),
                all.toString());
    }

    /** The skills capability's context (the workspace's enabled skills) is part of a run's system prompt. */
    @Test
    void aRunsSystemPromptHoldsTheWorkspacesEnabledSkillsOnly() throws Exception {
        String model = model();
        User u = user("openai", model);
        String skills = "/api/spaces/" + u.defaultSpaceId() + "/skills";
        assertEquals(
                201,
                u.http()
                        .post(
                                skills,
                                Map.of("name", "pirate", "description", "Tone", "instructions", "Talk like a pirate."))
                        .status());
        assertEquals(
                201,
                u.http()
                        .post(
                                skills,
                                Map.of(
                                        "name",
                                        "off",
                                        "description",
                                        "Unused",
                                        "instructions",
                                        "Never shown.",
                                        "enabled",
                                        false))
                        .status());
        fake.script(model, body -> FakeModelServer.openAiText("Arr."));
        String runId = run(u, thread(u), "Hello?");
        assertEquals("completed", awaitFinished(u.http(), runId).path("status").asText());
        JsonNode system = fake.received(model).get(0).path("messages").get(0);
        assertEquals("system", system.path("role").asText());
        String prompt = system.path("content").asText();
        assertTrue(
                prompt.contains(u.http()
                        .get("/api/spaces/" + u.defaultSpaceId() + "/skills-context")
                        .get("context")
                        .asText()),
                prompt);
        assertTrue(prompt.contains("## pirate") && prompt.contains("Talk like a pirate."), prompt);
        assertFalse(prompt.contains("Never shown."), prompt);
    }

    /** queue.write (DESIGN §2): the queue_write tool sends to a queue of the run's own workspace, and to no other. */
    @Test
    void theQueueWriteToolSendsToAQueueOfTheRunsWorkspaceOnly() throws Exception {
        String model = model();
        User u = user("openai", model);
        User other = server.newUser();
        Http.Reply created = u.http().post("/api/resources", Map.of("name", "outbox", "type", "queue"));
        assertEquals(201, created.status(), created.body());
        String queueId = created.get("resource").get("id").asText();
        assertEquals(
                201,
                other.http()
                        .post("/api/resources", Map.of("name", "theirs", "type", "queue"))
                        .status());
        fake.script(
                model,
                body -> FakeModelServer.openAiToolCall(
                        "call_1", "queue_write", "{\"queue\":\"outbox\",\"message\":\"build #42 passed\"}"),
                body -> FakeModelServer.openAiToolCall(
                        "call_2", "queue_write", "{\"queue\":\"theirs\",\"message\":\"sneaky\"}"),
                body -> FakeModelServer.openAiText("Sent."));
        String runId = run(u, thread(u), "Tell the outbox that build 42 passed");
        assertEquals("completed", awaitFinished(u.http(), runId).path("status").asText());
        List<JsonNode> received = fake.received(model);
        assertTrue(
                toolNames(received.get(0), false).contains("queue_write"),
                received.get(0).toString());
        List<JsonNode> results = events(u.http(), runId).stream()
                .filter(e -> e.path("type").asText().equals("tool.result"))
                .toList();
        assertFalse(
                results.get(0).path("data").path("is_error").asBoolean(),
                results.get(0).toString());
        assertTrue(
                results.get(1).path("data").path("is_error").asBoolean(),
                "another workspace's queue is not found: " + results.get(1));
        try (java.sql.Connection c = db.connect();
                java.sql.PreparedStatement q = c.prepareStatement(
                        "SELECT convert_from(body, 'UTF8'), resource_id FROM resource_queue_messages")) {
            java.sql.ResultSet rs = q.executeQuery();
            List<String> bodies = new java.util.ArrayList<>();
            while (rs.next()) {
                bodies.add(rs.getString(1) + "@" + rs.getString(2));
            }
            assertEquals(List.of("build #42 passed@" + queueId), bodies);
        }
    }

    @Test
    void anOpenAiRunStreamsTextAndItsToolCallResultReachesTheModel() throws Exception {
        String model = model();
        User u = user("openai", model);
        fake.script(
                model,
                body -> FakeModelServer.openAiToolCall(
                        "call_1", "memory_add", "{\"content\":\"Deploys happen on Tuesdays\"}"),
                body -> FakeModelServer.openAiText("Noted", ": deploys ", "are on Tuesdays."));
        String threadId = thread(u);
        String runId = run(u, threadId, "Remember that deploys happen on Tuesdays");
        JsonNode run = awaitFinished(u.http(), runId);
        assertEquals("completed", run.path("status").asText(), run.toString());

        List<JsonNode> received = fake.received(model);
        assertEquals(2, received.size());
        JsonNode first = received.get(0);
        assertTrue(first.path("stream").asBoolean());
        assertTrue(
                toolNames(first, false).containsAll(List.of("memory_add", "memory_search", "http_fetch")),
                first.toString());
        JsonNode last = first.path("messages").get(first.path("messages").size() - 1);
        assertEquals("user", last.path("role").asText());
        assertEquals(
                "Remember that deploys happen on Tuesdays", last.path("content").asText());
        // the second request carries the assistant's tool call and the tool's result for it
        JsonNode msgs = received.get(1).path("messages");
        JsonNode assistant = msgs.get(msgs.size() - 2);
        JsonNode tool = msgs.get(msgs.size() - 1);
        assertEquals("call_1", assistant.path("tool_calls").get(0).path("id").asText());
        assertEquals(
                "{\"content\":\"Deploys happen on Tuesdays\"}",
                assistant
                        .path("tool_calls")
                        .get(0)
                        .path("function")
                        .path("arguments")
                        .asText());
        assertEquals("tool", tool.path("role").asText());
        assertEquals("call_1", tool.path("tool_call_id").asText());
        assertTrue(tool.path("content").asText().contains("Deploys happen on Tuesdays"), tool.toString());
        assertTrue(fake.apiKeys.contains("Bearer sk-test-openai"));

        List<JsonNode> events = events(u.http(), runId);
        List<String> types = types(events);
        assertEquals("run.queued", types.get(0));
        assertEquals("run.started", types.get(1));
        assertEquals("run.completed", types.get(types.size() - 1));
        assertTrue(
                types.containsAll(List.of("tool.call", "tool.result", "message.delta", "message.completed")),
                types.toString());
        for (int i = 0; i < events.size(); i++) {
            assertEquals(i + 1, events.get(i).path("id").asLong());
        }
        JsonNode result = events.stream()
                .filter(e -> e.path("type").asText().equals("tool.result"))
                .findFirst()
                .orElseThrow();
        assertFalse(result.path("data").path("is_error").asBoolean(), result.toString());
        StringBuilder streamed = new StringBuilder();
        events.stream()
                .filter(e -> e.path("type").asText().equals("message.delta"))
                .forEach(e -> streamed.append(e.path("data").path("text").asText()));
        assertEquals("Noted: deploys are on Tuesdays.", streamed.toString());

        // the tool really wrote a memory, and the answer joined the thread
        JsonNode memories =
                u.http().get("/api/spaces/" + u.defaultSpaceId() + "/memories").json();
        assertEquals(
                "Deploys happen on Tuesdays",
                memories.path("memories").get(0).path("content").asText());
        JsonNode messages =
                u.http().get("/api/threads/" + threadId + "/messages").json().path("messages");
        assertEquals("assistant", messages.get(messages.size() - 1).path("role").asText());
        assertEquals(
                "Noted: deploys are on Tuesdays.",
                messages.get(messages.size() - 1).path("content").asText());
        assertEquals(runId, messages.get(messages.size() - 1).path("run_id").asText());
    }

    @Test
    void anAnthropicRunStreamsTextAndItsToolUseResultReachesTheModel() throws Exception {
        String model = model();
        User u = user("anthropic", model);
        assertEquals(
                201,
                u.http()
                        .post(
                                "/api/spaces/" + u.defaultSpaceId() + "/memories",
                                Map.of("content", "The staging database is called heron"))
                        .status());
        fake.script(
                model,
                body -> FakeModelServer.anthropic(
                        List.of("Let me ", "look."), "toolu_01", "memory_search", "{\"query\": \"staging database\"}"),
                body -> FakeModelServer.anthropic(List.of("It is ", "called heron."), null, null, null));
        String threadId = thread(u);
        String runId = run(u, threadId, "What is the staging database called?");
        JsonNode run = awaitFinished(u.http(), runId);
        assertEquals("completed", run.path("status").asText(), run.toString());

        List<JsonNode> received = fake.received(model);
        assertEquals(2, received.size());
        assertTrue(toolNames(received.get(0), true).contains("memory_search"));
        assertNotNull(received.get(0).path("tools").get(0).get("input_schema"));
        assertTrue(fake.apiKeys.contains("sk-test-anthropic"));
        JsonNode msgs = received.get(1).path("messages");
        JsonNode assistant = msgs.get(msgs.size() - 2);
        JsonNode user = msgs.get(msgs.size() - 1);
        assertEquals("assistant", assistant.path("role").asText());
        assertEquals(
                "Let me look.", assistant.path("content").get(0).path("text").asText());
        JsonNode toolUse = assistant.path("content").get(1);
        assertEquals("tool_use", toolUse.path("type").asText());
        assertEquals("toolu_01", toolUse.path("id").asText());
        assertEquals("staging database", toolUse.path("input").path("query").asText());
        assertEquals("user", user.path("role").asText());
        JsonNode toolResult = user.path("content").get(0);
        assertEquals("tool_result", toolResult.path("type").asText());
        assertEquals("toolu_01", toolResult.path("tool_use_id").asText());
        assertTrue(toolResult.path("content").asText().contains("heron"), toolResult.toString());

        JsonNode messages =
                u.http().get("/api/threads/" + threadId + "/messages").json().path("messages");
        assertEquals(
                "It is called heron.",
                messages.get(messages.size() - 1).path("content").asText());
        List<String> types = types(events(u.http(), runId));
        assertEquals(
                List.of("tool.call", "tool.result"),
                types.stream().filter(t -> t.startsWith("tool.")).toList());
    }

    @Test
    void sseDeliversEventsInOrderAndResumesFromLastEventIdWithoutGapsOrDuplicates() throws Exception {
        String model = model();
        User u = user("openai", model);
        String[] parts = new String[40];
        for (int i = 0; i < parts.length; i++) {
            parts[i] = "w" + i + " ";
        }
        fake.script(model, body -> FakeModelServer.paced(25, FakeModelServer.openAiText(parts)));
        String threadId = thread(u);
        String runId = run(u, threadId, "Count");
        String token = token(u);
        String url = server.base() + "/api/runs/" + runId + "/sse";

        SseClient.Result first = SseClient.read(url, token, null, 12, Duration.ofSeconds(30));
        assertEquals(200, first.status());
        assertTrue(first.contentType().startsWith("text/event-stream"), first.contentType());
        assertEquals(12, first.events().size());
        long lastSeen = first.events().get(11).id();
        SseClient.Result rest = SseClient.read(url, token, lastSeen, Integer.MAX_VALUE, Duration.ofSeconds(30));
        List<SseClient.Event> all = new ArrayList<>(first.events());
        all.addAll(rest.events());
        for (int i = 0; i < all.size(); i++) {
            assertEquals(i + 1, all.get(i).id(), "event ids must run 1, 2, 3, … without gaps or duplicates");
            assertEquals(all.get(i).id(), all.get(i).data().path("id").asLong());
            assertEquals(all.get(i).type(), all.get(i).data().path("type").asText());
        }
        assertEquals("run.completed", all.get(all.size() - 1).type(), "the stream ends with the terminal event");
        assertTrue(rest.comments() > 0, "heartbeats arrive as SSE comments while the run streams");

        // the stored events, a replay in pages, and the stream are the same sequence
        List<JsonNode> stored = events(u.http(), runId);
        assertEquals(stored, replayed(u.http(), runId));
        assertEquals(stored.size(), all.size());
        for (int i = 0; i < all.size(); i++) {
            assertEquals(stored.get(i), all.get(i).data());
        }
        // after the end, a reconnect from the last id gets nothing more and the stream closes at once
        SseClient.Result after =
                SseClient.read(url, token, all.get(all.size() - 1).id(), Integer.MAX_VALUE, Duration.ofSeconds(10));
        assertEquals(200, after.status());
        assertTrue(after.events().isEmpty());
        // the query parameter is the same as the header; last_event_id on /events too
        JsonNode tail = u.http()
                .get("/api/runs/" + runId + "/events?last_event_id=" + (all.size() - 2))
                .json();
        assertEquals(2, tail.path("events").size());
    }

    /** A run's events through {@code /replay}, a page of 7 at a time. */
    static List<JsonNode> replayed(Http http, String runId) {
        List<JsonNode> replayed = new ArrayList<>();
        String cursor = "";
        do {
            JsonNode page = http.get("/api/runs/" + runId + "/replay?limit=7&cursor=" + cursor)
                    .json();
            page.path("events").forEach(replayed::add);
            cursor = page.path("next_cursor").isNull()
                    ? null
                    : page.path("next_cursor").asText();
        } while (cursor != null);
        return replayed;
    }

    /** Reads a run's WebSocket: text messages until the server closes or {@code max} arrived (then the client closes). */
    static List<JsonNode> webSocket(String url, String token, int max, int[] closeCode) throws Exception {
        List<JsonNode> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.CompletableFuture<Integer> closed = new java.util.concurrent.CompletableFuture<>();
        StringBuilder partial = new StringBuilder();
        java.net.http.WebSocket ws = java.net.http.HttpClient.newHttpClient()
                .newWebSocketBuilder()
                .header("Authorization", "Bearer " + token)
                .buildAsync(java.net.URI.create(url), new java.net.http.WebSocket.Listener() {
                    @Override
                    public java.util.concurrent.CompletionStage<?> onText(
                            java.net.http.WebSocket w, CharSequence data, boolean last) {
                        if (got.size() >= max) {
                            // a message the client asked for before it had enough (its request of one more) may
                            // still arrive while it closes: not counted
                            return null;
                        }
                        partial.append(data);
                        if (last) {
                            try {
                                got.add(Http.JSON.readTree(partial.toString()));
                            } catch (java.io.IOException e) {
                                closed.completeExceptionally(e);
                            }
                            partial.setLength(0);
                            if (got.size() >= max) {
                                w.sendClose(1000, "enough");
                                closed.complete(-1);
                                return null;
                            }
                        }
                        w.request(1);
                        return null;
                    }

                    @Override
                    public java.util.concurrent.CompletionStage<?> onClose(
                            java.net.http.WebSocket w, int status, String reason) {
                        closed.complete(status);
                        return null;
                    }

                    @Override
                    public void onError(java.net.http.WebSocket w, Throwable error) {
                        closed.completeExceptionally(error);
                    }
                })
                .get(10, TimeUnit.SECONDS);
        closeCode[0] = closed.get(30, TimeUnit.SECONDS);
        ws.abort();
        return got;
    }

    @Test
    void aWebSocketDeliversEventsInOrderAndResumesAfterTheLastEventId() throws Exception {
        String model = model();
        User u = user("openai", model);
        String[] parts = new String[30];
        for (int i = 0; i < parts.length; i++) {
            parts[i] = "ws" + i + " ";
        }
        fake.script(model, body -> FakeModelServer.paced(25, FakeModelServer.openAiText(parts)));
        String runId = run(u, thread(u), "Stream over a WebSocket");
        String url = "ws://127.0.0.1:" + server.port + "/api/runs/" + runId + "/ws";
        int[] code = new int[1];
        List<JsonNode> first = webSocket(url, token(u), 10, code);
        assertEquals(10, first.size());
        long last = first.get(9).path("id").asLong();
        List<JsonNode> rest = webSocket(url + "?last_event_id=" + last, token(u), Integer.MAX_VALUE, code);
        assertEquals(1000, code[0], "the server closes normally after the terminal event");
        List<JsonNode> all = new ArrayList<>(first);
        all.addAll(rest);
        for (int i = 0; i < all.size(); i++) {
            assertEquals(i + 1, all.get(i).path("id").asLong(), "no gaps, no duplicates");
        }
        assertEquals("run.completed", all.get(all.size() - 1).path("type").asText());
        assertEquals(events(u.http(), runId), all, "the WebSocket carries exactly the stored events");
        assertEquals(replayed(u.http(), runId), all, "and a replay is the same sequence");

        // a stranger's handshake is refused as for a missing run; no token is 401
        User stranger = server.newUser();
        java.util.concurrent.ExecutionException refused = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class, () -> webSocket(url, token(stranger), 1, code));
        java.net.http.HttpResponse<?> notFound =
                ((java.net.http.WebSocketHandshakeException) refused.getCause()).getResponse();
        assertEquals(404, notFound.statusCode());
        assertTrue(notFound.headers().firstValue("X-Request-Id").isPresent(), "a refused handshake has a request id");
        refused = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class, () -> webSocket(url, "atp_wrong", 1, code));
        assertEquals(
                401,
                ((java.net.http.WebSocketHandshakeException) refused.getCause())
                        .getResponse()
                        .statusCode());
        // the other run routes still reach JAX-RS through the filter
        assertEquals(200, u.http().get("/api/runs/" + runId + "/events").status());
    }

    @Test
    void aWebSocketHandshakeGoesThroughTheKernelsEnvelope() throws Exception {
        String model = model();
        User u = user("openai", model);
        fake.script(model, body -> FakeModelServer.openAiText("done"));
        String runId = run(u, thread(u), "A short run");
        try (java.net.Socket socket = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), server.port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream()
                    .write(("GET /api/runs/" + runId + "/ws HTTP/1.1\r\nHost: 127.0.0.1:" + server.port
                                    + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer " + token(u)
                                    + "\r\nX-Request-Id: ws-handshake-1\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            java.io.BufferedReader in = new java.io.BufferedReader(
                    new java.io.InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            String status = in.readLine();
            List<String> headers = new ArrayList<>();
            for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
                headers.add(line.toLowerCase(java.util.Locale.ROOT));
            }
            assertTrue(status.startsWith("HTTP/1.1 101"), status + " " + headers);
            assertTrue(headers.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="), headers.toString());
            assertTrue(
                    headers.contains("x-request-id: ws-handshake-1"),
                    "the kernel's envelope saw the handshake: " + headers);
        }
    }

    @Test
    void aWebSocketClientThatStopsReadingDoesNotStallAnotherClientsStream() throws Exception {
        String model = model();
        User u = user("openai", model);
        String[] parts = new String[3000];
        String filler = "x".repeat(300);
        for (int i = 0; i < parts.length; i++) {
            parts[i] = i + filler;
        }
        fake.script(model, body -> {
            List<String> frames = new ArrayList<>(FakeModelServer.openAiText(parts));
            frames.add(0, "SLEEP:1500"); // both clients are subscribed before the stream starts
            return frames;
        });
        String runId = run(u, thread(u), "Stream a lot");
        // a client that completes the handshake and then never reads, on a tiny receive buffer
        try (java.net.Socket stalled = new java.net.Socket()) {
            stalled.setReceiveBufferSize(1024);
            stalled.connect(new InetSocketAddress("127.0.0.1", server.port), 5_000);
            stalled.getOutputStream()
                    .write(("GET /api/runs/" + runId + "/ws HTTP/1.1\r\nHost: 127.0.0.1:" + server.port
                                    + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                    + "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer " + token(u) + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            byte[] head = new byte[12];
            assertEquals(12, stalled.getInputStream().readNBytes(head, 0, 12));
            assertTrue(
                    new String(head, StandardCharsets.US_ASCII).contains("101"),
                    new String(head, StandardCharsets.US_ASCII));

            SseClient.Result all = SseClient.read(
                    server.base() + "/api/runs/" + runId + "/sse",
                    token(u),
                    null,
                    Integer.MAX_VALUE,
                    Duration.ofSeconds(60));
            long ended = System.nanoTime();
            assertEquals(
                    "run.completed", all.events().get(all.events().size() - 1).type());
            for (int i = 0; i < all.events().size(); i++) {
                assertEquals(i + 1, all.events().get(i).id(), "no gaps, no duplicates");
            }
            JsonNode run = u.http().get("/api/runs/" + runId).json().path("run");
            long lag = java.time.Duration.between(
                                    java.time.Instant.parse(
                                            run.path("finished_at").asText()),
                                    java.time.Instant.now())
                            .toMillis()
                    - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ended);
            assertTrue(lag < 5_000, "the SSE client got the end " + lag + " ms after the run finished");
        }
    }

    @Test
    void anEventStreamIsChunkedHttpThatLeavesItsConnectionReadyForTheNextRequest() throws Exception {
        String model = model();
        User u = user("openai", model);
        String[] parts = new String[400];
        for (int i = 0; i < parts.length; i++) {
            parts[i] = i + " grüße ".repeat(70); // chunk sizes count bytes, not characters
        }
        fake.script(model, body -> {
            List<String> frames = new ArrayList<>(FakeModelServer.openAiText(parts));
            frames.add(0, "SLEEP:1000"); // subscribed before the stream starts
            return frames;
        });
        String runId = run(u, thread(u), "Stream a long answer");
        String auth = "Authorization: Bearer " + token(u) + "\r\n";
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", server.port), 5_000);
            socket.setSoTimeout(10_000);
            java.io.OutputStream out = socket.getOutputStream();
            java.io.InputStream in = new java.io.BufferedInputStream(socket.getInputStream());
            out.write(("GET /api/runs/" + runId + "/sse HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            RawHttp.Response stream = RawHttp.read(in);
            assertEquals(200, stream.status());
            assertEquals("chunked", stream.header("transfer-encoding"));
            List<JsonNode> got = sseData(stream.body());
            assertEquals(
                    events(u.http(), runId),
                    got,
                    "every event, once, in order, in well-formed chunks ending with the last chunk");
            assertTrue(got.size() > parts.length);

            // the same connection serves the next request
            out.write(("GET /api/runs/" + runId + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            RawHttp.Response next = RawHttp.read(in);
            assertEquals(200, next.status());
            assertEquals(
                    runId,
                    Http.JSON.readTree(next.body()).path("run").path("id").asText());

            // a client that closes after the response gets the stream without chunks, ended by the connection's end
            out.write(("GET /api/runs/" + runId + "/sse?last_event_id=" + (got.size() - 2)
                            + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Connection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            RawHttp.Response last = RawHttp.read(in);
            assertEquals(200, last.status());
            assertEquals(null, last.header("transfer-encoding"));
            assertEquals(got.subList(got.size() - 2, got.size()), sseData(last.body()));
        }
    }

    @Test
    void anSseClientThatStopsReadingIsDisconnectedAtTheIdleTimeout() throws Exception {
        Map<String, String> env = new java.util.HashMap<>(env());
        env.put(
                "ATRIUM_JAVA_OPTS",
                "-XX:TieredStopAtLevel=1 -Dorg.apache.felix.http.timeout=3000"); // connections idle out after 3 s
        AtriumServer quick = AtriumServer.launch(Files.createTempDirectory("atrium-runs-idle-"), db, env);
        try (java.net.Socket stalled = new java.net.Socket()) {
            String model = model();
            User u = user(quick, "openai", model, null);
            // 5 MB: more than the sockets hold, the rest waits in the server. In 500 deltas, not 2,500: each is a
            // commit, and 2,500 of them took over the 60 s below while the suite's other class loaded the machine's
            // disk
            String[] parts = new String[500];
            for (int i = 0; i < parts.length; i++) {
                parts[i] = i + "y".repeat(10_000);
            }
            fake.script(model, body -> FakeModelServer.openAiText(parts));
            String runId = run(u, thread(u), "Stream to a client that reads nothing");
            stalled.setReceiveBufferSize(4096);
            stalled.connect(new InetSocketAddress("127.0.0.1", quick.port), 5_000);
            stalled.getOutputStream()
                    .write(("GET /api/runs/" + runId + "/sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                                    + token(u) + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!u.http()
                    .get("/api/runs/" + runId)
                    .json()
                    .path("run")
                    .path("status")
                    .asText()
                    .equals("completed")) {
                assertTrue(System.nanoTime() < deadline, "the run completes whatever its watchers do");
                Thread.sleep(100);
            }
            Thread.sleep(5_000); // the stalled write makes no progress for longer than the idle timeout
            // what the sockets held is still there to read, and then the connection's end: the server closed it with
            // the response unfinished, instead of holding the write until the client read again and then ending it
            stalled.setSoTimeout(20_000);
            java.io.InputStream in = stalled.getInputStream();
            java.io.ByteArrayOutputStream tail = new java.io.ByteArrayOutputStream();
            byte[] buffer = new byte[65536];
            try {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    tail.reset();
                    tail.write(buffer, Math.max(0, n - 16), Math.min(n, 16));
                }
            } catch (java.net.SocketException reset) {
                // closed with data unread: a reset is an end too
            }
            assertFalse(
                    tail.toString(StandardCharsets.US_ASCII).endsWith("\r\n0\r\n\r\n"),
                    "the response was cut off at the idle timeout, not finished after the client came back");
        } finally {
            quick.stop(); // not close(): that would drop the shared database
            AtriumServer.deleteTree(quick.data.toFile());
        }
    }

    /** The {@code data} of each SSE event in a stream's body. */
    static List<JsonNode> sseData(byte[] body) throws java.io.IOException {
        List<JsonNode> data = new ArrayList<>();
        for (String frame : new String(body, StandardCharsets.UTF_8).split("\n\n")) {
            for (String line : frame.split("\n")) {
                if (line.startsWith("data: ")) {
                    data.add(Http.JSON.readTree(line.substring(6)));
                }
            }
        }
        return data;
    }

    static String token(User u) {
        try {
            var f = Http.class.getDeclaredField("token");
            f.setAccessible(true);
            return (String) f.get(u.http());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void suspendingThePrincipalMidRunStopsItAndNoFurtherToolCallRuns() throws Exception {
        User[] suspended = new User[1];
        Ended ended = aToolCallRunsThenAuthorityEnds(u -> {
            suspended[0] = u;
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/users/" + u.username() + "/suspend", Map.of())
                            .status());
        });
        assertTrue(
                ended.run().path("error").asText().contains("requester"),
                ended.run().toString());
        assertEquals(401, suspended[0].http().get("/api/runs/" + ended.runId()).status());
    }

    @Test
    void revokingTheOwnerWitnessMidRunStopsItAndNoFurtherToolCallRuns() throws Exception {
        Ended ended = aToolCallRunsThenAuthorityEnds(u -> db.execute(
                "UPDATE owner_witnesses SET status = 'suspended' WHERE workspace_id = ?", u.defaultSpaceId()));
        assertTrue(
                ended.run().path("error").asText().contains("requester"),
                ended.run().toString());
    }

    /**
     * A run whose first tool call runs; while the model answers the next turn (with another tool call), {@code end}
     * takes the requester's authority away. The run fails and the second tool call never runs.
     */
    private Ended aToolCallRunsThenAuthorityEnds(AuthorityEnd end) throws Exception {
        String model = model();
        User u = user("openai", model);
        CountDownLatch ended = new CountDownLatch(1);
        fake.script(
                model,
                body -> FakeModelServer.openAiToolCall(
                        "call_1", "memory_add", "{\"content\":\"written while allowed\"}"),
                body -> {
                    try {
                        ended.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return FakeModelServer.openAiToolCall(
                            "call_2", "memory_add", "{\"content\":\"written after the end\"}");
                },
                body -> FakeModelServer.openAiText("should never be asked"));
        String runId = run(u, thread(u), "Remember two things");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (fake.received(model).size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(2, fake.received(model).size(), "the model is answering the second turn");
        assertEquals(
                1,
                count("SELECT count(*) FROM memories WHERE space_id = ?", u.defaultSpaceId()),
                "the first tool call ran");
        end.end(u);
        ended.countDown();

        JsonNode run = awaitFinishedInDb(runId);
        assertEquals("failed", run.path("status").asText());
        assertEquals(1, count("SELECT count(*) FROM run_events WHERE run_id = ? AND type = 'tool.call'", runId));
        assertEquals(
                1,
                count("SELECT count(*) FROM memories WHERE space_id = ?", u.defaultSpaceId()),
                "the second one did not");
        assertEquals(2, fake.received(model).size(), "the model is not asked again");
        return new Ended(runId, run);
    }

    /** A run that ended, as the database has it. */
    record Ended(String runId, JsonNode run) {}

    /** Takes a user's authority away (suspension, a revoked witness). */
    interface AuthorityEnd {
        void end(User u) throws Exception;
    }

    /** The run as the database has it (the suspended requester can no longer read it through the API). */
    static JsonNode awaitFinishedInDb(String runId) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            try (Connection c = db.connect();
                    PreparedStatement ps = c.prepareStatement("SELECT status, error FROM runs WHERE id = ?")) {
                ps.setString(1, runId);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (Set.of("completed", "failed", "cancelled").contains(rs.getString(1))) {
                        return Http.JSON
                                .createObjectNode()
                                .put("status", rs.getString(1))
                                .put("error", rs.getString(2));
                    }
                }
            }
            Thread.sleep(50);
        }
        fail("run " + runId + " did not finish");
        return null;
    }

    static long count(String sql, Object... args) throws Exception {
        try (Connection c = db.connect();
                PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Test
    void aQueuedRunWithoutARequesterIsNeverDispatched() throws Exception {
        String model = model();
        User u = user("openai", model);
        String threadId = thread(u);
        assertEquals(
                201,
                u.http()
                        .post("/api/threads/" + threadId + "/messages", Map.of("content", "hello"))
                        .status());
        // a legacy row, as written before requesters were recorded
        db.execute(
                "INSERT INTO runs (id, thread_id, space_id, status, provider, model) VALUES (?, ?, ?, 'queued', 'openai', ?)",
                "run_legacy" + model.replace("-", ""),
                threadId,
                u.defaultSpaceId(),
                model);
        String legacy = "run_legacy" + model.replace("-", "");
        fake.script(model, body -> FakeModelServer.openAiText("only this one"));
        String later = run(u, threadId, "a run with a requester, queued after the legacy one");
        assertEquals("completed", awaitFinished(u.http(), later).path("status").asText());
        Thread.sleep(1_000);
        JsonNode stale = u.http().get("/api/runs/" + legacy).get("run");
        assertEquals("queued", stale.path("status").asText());
        assertEquals(0, stale.path("last_event_id").asLong());
        assertEquals(1, fake.received(model).size(), "the model saw only the run with a requester");
        assertEquals(
                0,
                count(
                        "SELECT count(*) FROM runs WHERE id = ? AND (requester_principal_id IS NOT NULL OR instance_id IS NOT NULL)",
                        legacy));
    }

    @Test
    void aMalformedToolCallABinaryFetchAndNulTextFromTheModelDoNotFailTheRun() throws Exception {
        HttpServer target = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        target.createContext("/blob", ex -> {
            byte[] b = {'P', 'K', 0, 0, 3, 4, (byte) 0xff, 0, 'z'};
            ex.getResponseHeaders().set("Content-Type", "application/octet-stream");
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        target.start();
        try {
            String model = model();
            User u = user("openai", model);
            String args = "{\"url\":\"http://127.0.0.1:" + target.getAddress().getPort() + "/blob\"}";
            fake.script(
                    model,
                    body -> FakeModelServer.openAiToolCall(null, null, "{not json"),
                    body -> FakeModelServer.openAiToolCall("call_bad_args", "memory_search", "[1, 2"),
                    body -> FakeModelServer.openAiToolCall("call_blob", "http_fetch", args),
                    body -> FakeModelServer.openAiText("binary\u0000 seen"));
            String threadId = thread(u);
            String runId = run(u, threadId, "fetch the blob");
            JsonNode run = awaitFinished(u.http(), runId);
            assertEquals("completed", run.path("status").asText(), run.toString());
            List<JsonNode> results = events(u.http(), runId).stream()
                    .filter(e -> e.path("type").asText().equals("tool.result"))
                    .toList();
            assertEquals(3, results.size(), results.toString());
            assertTrue(
                    results.get(0).path("data").path("is_error").asBoolean(),
                    results.get(0).toString());
            assertFalse(results.get(0).path("data").path("id").asText().isEmpty(), "a call without an id gets one");
            assertTrue(
                    results.get(1).path("data").path("is_error").asBoolean(),
                    results.get(1).toString());
            assertTrue(
                    results.get(1).path("data").path("result").asText().contains("not valid JSON"),
                    results.get(1).toString());
            String fetched = results.get(2).path("data").path("result").asText();
            assertFalse(results.get(2).path("data").path("is_error").asBoolean(), fetched);
            assertTrue(fetched.contains("PK\uFFFD\uFFFD"), fetched);
            JsonNode messages = u.http()
                    .get("/api/threads/" + threadId + "/messages")
                    .json()
                    .path("messages");
            assertEquals(
                    "binary\uFFFD seen",
                    messages.get(messages.size() - 1).path("content").asText());

            Http.Reply artifact =
                    u.http().post("/api/runs/" + runId + "/artifacts", Map.of("name", "a\u0000", "content", "x"));
            assertEquals(400, artifact.status(), artifact.body());
        } finally {
            target.stop(0);
        }
    }

    @Test
    void aTricklingFetchBodyAndAStalledModelTurnEndAtTheirDeadlinesInsteadOfLeavingTheRunRunning() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        HttpServer target = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        target.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        target.createContext("/slow", ex -> {
            ex.sendResponseHeaders(200, 0);
            try {
                for (int i = 0; i < 60 && release.getCount() > 0; i++) {
                    ex.getResponseBody().write('x');
                    ex.getResponseBody().flush();
                    release.await(1, TimeUnit.SECONDS);
                }
            } catch (Exception e) {
                // the client went away
            }
            ex.close();
        });
        target.start();
        try {
            String model = model();
            User u = user("openai", model);
            String args = "{\"url\":\"http://127.0.0.1:" + target.getAddress().getPort() + "/slow\"}";
            fake.script(
                    model,
                    body -> FakeModelServer.openAiToolCall("call_slow", "http_fetch", args),
                    body -> { // the second turn stalls after its first frame
                        List<String> frames = new ArrayList<>(FakeModelServer.openAiText("thinking", "never"));
                        frames.add(2, "SLEEP:30000");
                        return frames;
                    });
            long start = System.nanoTime();
            String runId = run(u, thread(u), "fetch the slow page");
            JsonNode run = awaitFinished(u.http(), runId);
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
            assertEquals("failed", run.path("status").asText(), run.toString());
            assertTrue(run.path("error").asText().contains("model turn took longer"), run.toString());
            JsonNode result = events(u.http(), runId).stream()
                    .filter(e -> e.path("type").asText().equals("tool.result"))
                    .findFirst()
                    .orElseThrow();
            assertTrue(result.path("data").path("is_error").asBoolean(), result.toString());
            assertTrue(result.path("data").path("result").asText().contains("took longer"), result.toString());
            assertTrue(seconds < 25, "ended after " + seconds + " s");
        } finally {
            release.countDown();
            target.stop(0);
        }
    }

    @Test
    void aRestrictedEgressWorkspaceRunCannotUseTheFetchTool() throws Exception {
        AtomicInteger hits = new AtomicInteger();
        HttpServer target = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        target.createContext("/page", ex -> {
            hits.incrementAndGet();
            byte[] b = "the secret page".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        target.createContext("/moved", ex -> {
            ex.getResponseHeaders().set("Location", "/page");
            ex.sendResponseHeaders(302, -1);
            ex.close();
        });
        target.start();
        try {
            String url = "http://127.0.0.1:" + target.getAddress().getPort() + "/moved";
            String args = "{\"url\":\"" + url + "\"}";

            // a standard workspace may fetch (loopback is allowed on this test server), redirects followed
            String open = model();
            User standard = user(server, "openai", open, null);
            fake.script(
                    open,
                    body -> FakeModelServer.openAiToolCall("call_f", "http_fetch", args),
                    body -> FakeModelServer.openAiText("fetched"));
            String ok = run(standard, thread(standard), "fetch it");
            assertEquals(
                    "completed",
                    awaitFinished(standard.http(), ok).path("status").asText());
            assertEquals(1, hits.get());
            JsonNode toolMsg = fake.received(open).get(1).path("messages");
            assertTrue(toolMsg.get(toolMsg.size() - 1).path("content").asText().contains("the secret page"));

            // a restricted_egress workspace is neither offered the tool nor allowed to call it
            String closed = model();
            User restricted = user(server, "openai", closed, "restricted_egress");
            fake.script(
                    closed,
                    body -> FakeModelServer.openAiToolCall("call_r", "http_fetch", args),
                    body -> FakeModelServer.openAiText("could not fetch"));
            String denied = run(restricted, thread(restricted), "fetch it");
            assertEquals(
                    "completed",
                    awaitFinished(restricted.http(), denied).path("status").asText());
            List<String> offered = toolNames(fake.received(closed).get(0), false);
            assertFalse(offered.contains("http_fetch"), offered.toString());
            assertTrue(offered.contains("memory_search"), offered.toString());
            JsonNode result = events(restricted.http(), denied).stream()
                    .filter(e -> e.path("type").asText().equals("tool.result"))
                    .findFirst()
                    .orElseThrow();
            assertTrue(result.path("data").path("is_error").asBoolean());
            assertTrue(result.path("data").path("result").asText().contains("not available"), result.toString());
            assertEquals(1, hits.get(), "the restricted run reached nothing");
        } finally {
            target.stop(0);
        }
    }

    @Test
    void aRunningRunIsCancelledMidStreamAndRunsAreListedWithActiveOnlyAndACursor() throws Exception {
        String model = model();
        User u = user("openai", model);
        List<String> frames = new ArrayList<>(FakeModelServer.openAiText("first ", "never"));
        frames.add(2, "SLEEP:15000"); // after the first fragment the model stalls
        fake.script(model, body -> frames);
        String threadId = thread(u);
        String runId = run(u, threadId, "a long answer please");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!types(events(u.http(), runId)).contains("message.delta") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        JsonNode active = u.http()
                .get("/api/threads/" + threadId + "/runs?active_only=true")
                .json();
        assertEquals(1, active.path("runs").size());
        long started = System.nanoTime();
        assertEquals(
                200, u.http().post("/api/runs/" + runId + "/cancel", Map.of()).status());
        JsonNode run = awaitFinished(u.http(), runId);
        assertEquals("cancelled", run.path("status").asText(), run.toString());
        assertTrue(
                System.nanoTime() - started < TimeUnit.SECONDS.toNanos(10), "cancelling does not wait for the model");
        List<String> types = types(events(u.http(), runId));
        assertEquals("run.cancelled", types.get(types.size() - 1));
        assertEquals(
                409, u.http().post("/api/runs/" + runId + "/cancel", Map.of()).status());
        assertEquals(
                0,
                u.http()
                        .get("/api/threads/" + threadId + "/runs?active_only=true")
                        .json()
                        .path("runs")
                        .size());

        // listing pages newest first with a cursor
        fake.script(model);
        for (int i = 0; i < 2; i++) {
            run(u, threadId, "more " + i);
        }
        JsonNode page1 =
                u.http().get("/api/threads/" + threadId + "/runs?limit=2").json();
        assertEquals(2, page1.path("runs").size());
        JsonNode page2 = u.http()
                .get("/api/threads/" + threadId + "/runs?limit=2&cursor="
                        + page1.path("next_cursor").asText())
                .json();
        assertEquals(1, page2.path("runs").size());
        assertEquals(runId, page2.path("runs").get(0).path("id").asText());
        assertTrue(page2.path("next_cursor").isNull());
        assertEquals(
                400,
                u.http().get("/api/threads/" + threadId + "/runs?cursor=%25%25").status());
    }

    @Test
    void aQueuedRunIsCancelledAtOnceAndNeverDispatched() throws Exception {
        int workers = 4; // ATRIUM_RUNS_WORKERS's default: the test server's workers, every one held by a stalled run
        String model = model();
        User u = user("openai", model);
        FakeModelServer.Turn stall = body -> {
            List<String> frames = new ArrayList<>(FakeModelServer.openAiText("busy ", "never"));
            frames.add(2, "SLEEP:20000");
            return frames;
        };
        fake.script(model, java.util.Collections.nCopies(workers, stall).toArray(FakeModelServer.Turn[]::new));
        List<String> stalled = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            stalled.add(run(u, thread(u), "stall " + i));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (fake.received(model).size() < workers && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(workers, fake.received(model).size(), "every worker is busy");

        String queued = run(u, thread(u), "wait your turn");
        assertEquals(
                200, u.http().post("/api/runs/" + queued + "/cancel", Map.of()).status());
        assertEquals(
                "cancelled",
                u.http()
                        .get("/api/runs/" + queued)
                        .json()
                        .path("run")
                        .path("status")
                        .asText(),
                "at once");
        for (String id : stalled) {
            assertEquals(
                    200, u.http().post("/api/runs/" + id + "/cancel", Map.of()).status());
        }
        for (String id : stalled) {
            assertEquals("cancelled", awaitFinished(u.http(), id).path("status").asText());
        }
        Thread.sleep(1_000); // the workers are free again
        assertEquals(workers, fake.received(model).size(), "the cancelled run never reached the model");
        List<String> types = types(events(u.http(), queued));
        assertEquals("run.cancelled", types.get(types.size() - 1));
        assertFalse(types.contains("message.delta") || types.contains("tool.call"), types.toString());
    }

    @Test
    void aRunStopsAtTheStepLimit() throws Exception {
        int limit = 8; // ATRIUM_RUNS_STEP_LIMIT's default
        String model = model();
        User u = user("openai", model);
        FakeModelServer.Turn again =
                body -> FakeModelServer.openAiToolCall("call_again", "memory_search", "{\"query\":\"once more\"}");
        fake.script(model, java.util.Collections.nCopies(limit + 1, again).toArray(FakeModelServer.Turn[]::new));
        String runId = run(u, thread(u), "search for ever");
        JsonNode run = awaitFinished(u.http(), runId);
        assertEquals("failed", run.path("status").asText(), run.toString());
        assertTrue(run.path("error").asText().contains("step limit of " + limit), run.toString());
        assertEquals(limit, fake.received(model).size(), "the model is asked " + limit + " times, not more");
        assertEquals(limit, count("SELECT count(*) FROM run_events WHERE run_id = ? AND type = 'tool.result'", runId));
    }

    @Test
    void twoExecutingInstancesRunEveryQueuedRunExactlyOnce() throws Exception {
        AtriumServer second = AtriumServer.launch(Files.createTempDirectory("atrium-runs-3-"), db, env());
        try {
            int runs = 12; // more than one instance's four workers take at once
            String model = model();
            User u = user("openai", model);
            FakeModelServer.Turn answer =
                    body -> FakeModelServer.paced(150, FakeModelServer.openAiText("done ", "here"));
            fake.script(model, java.util.Collections.nCopies(runs, answer).toArray(FakeModelServer.Turn[]::new));
            List<String> ids = new ArrayList<>();
            List<String> prompts = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                prompts.add("job " + i);
                ids.add(run(u, thread(u), "job " + i));
            }
            for (String id : ids) {
                assertEquals(
                        "completed", awaitFinished(u.http(), id).path("status").asText());
            }
            // a run claimed twice would ask the model twice (and find its script used up)
            List<String> asked = fake.received(model).stream()
                    .map(b -> {
                        JsonNode messages = b.path("messages");
                        return messages.get(messages.size() - 1).path("content").asText();
                    })
                    .sorted()
                    .toList();
            assertEquals(prompts.stream().sorted().toList(), asked, "every run reached the model exactly once");
            assertEquals(
                    2,
                    count("SELECT count(DISTINCT instance_id) FROM runs WHERE space_id = ?", u.defaultSpaceId()),
                    "both instances executed runs");
        } finally {
            second.stop(); // not close(): that would drop the shared database
            AtriumServer.deleteTree(second.data.toFile());
        }
    }

    /** storage_write, storage_list and storage_read act on the run's workspace storage, as the API then shows. */
    @Test
    void theStorageToolsWriteListAndReadTheWorkspacesFiles() throws Exception {
        String model = model();
        User u = user("openai", model);
        fake.script(
                model,
                body -> FakeModelServer.openAiToolCall(
                        "call_1", "storage_write", "{\"path\":\"notes/plan.md\",\"content\":\"# Plan\\nship it\"}"),
                body -> FakeModelServer.openAiToolCall("call_2", "storage_list", "{\"path\":\"notes\"}"),
                body -> FakeModelServer.openAiToolCall("call_3", "storage_read", "{\"path\":\"notes/plan.md\"}"),
                body -> FakeModelServer.openAiText("Written."));
        String threadId = thread(u);
        JsonNode run = awaitFinished(u.http(), run(u, threadId, "Write the plan"));
        assertEquals("completed", run.path("status").asText(), run.toString());
        List<JsonNode> received = fake.received(model);
        assertTrue(toolNames(received.get(0), false)
                .containsAll(List.of("storage_read", "storage_list", "storage_write")));
        JsonNode listed = received.get(2).path("messages");
        assertTrue(listed.get(listed.size() - 1).path("content").asText().contains("notes/plan.md"), listed.toString());
        JsonNode read = received.get(3).path("messages");
        assertEquals(
                "# Plan\nship it", read.get(read.size() - 1).path("content").asText());
        JsonNode files = u.http()
                .get("/api/spaces/" + u.defaultSpaceId() + "/storage?path=notes")
                .get("files");
        assertEquals(1, files.size(), files.toString());
        String id = files.get(0).path("id").asText();
        assertEquals(
                "# Plan\nship it",
                u.http()
                        .get("/api/spaces/" + u.defaultSpaceId() + "/storage/" + id + "/content")
                        .body());
    }

    @Test
    void theMemoryToolsAreAbsentWhileTheMemoriesCapabilityIsDisabled() throws Exception {
        String model = model();
        User u = user("openai", model);
        fake.script(
                model,
                body -> FakeModelServer.openAiText("with memories"),
                body -> FakeModelServer.openAiText("without"));
        String threadId = thread(u);
        assertEquals(
                "completed",
                awaitFinished(u.http(), run(u, threadId, "one")).path("status").asText());
        assertTrue(toolNames(fake.received(model).get(0), false).containsAll(List.of("memory_add", "memory_search")));
        String memories = "/api/spaces/" + u.defaultSpaceId() + "/memories";
        assertEquals(
                200,
                server.operator()
                        .post("/admin/features/memories/disable", Map.of())
                        .status());
        try {
            assertEquals(404, FeatureSwitchTest.await(u.http(), memories, 404).status());
            assertEquals(
                    "completed",
                    awaitFinished(u.http(), run(u, threadId, "two"))
                            .path("status")
                            .asText());
            List<String> offered = toolNames(fake.received(model).get(1), false);
            assertFalse(offered.contains("memory_add") || offered.contains("memory_search"), offered.toString());
            assertTrue(offered.contains("http_fetch"), offered.toString());
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/memories/enable", Map.of())
                            .status());
            assertEquals(200, FeatureSwitchTest.await(u.http(), memories, 200).status());
        }
    }

    @Test
    void aRunCreatedOnOneInstanceStreamsToAnSseClientOnAnother() throws Exception {
        Map<String, String> env = new java.util.HashMap<>(env());
        env.put("ATRIUM_RUNS_WORKERS", "0"); // the second instance serves the API only: the run executes on the first
        AtriumServer second = AtriumServer.launch(Files.createTempDirectory("atrium-runs-2-"), db, env);
        try {
            String model = model();
            User u = user("openai", model);
            String[] parts = new String[20];
            for (int i = 0; i < parts.length; i++) {
                parts[i] = "p" + i;
            }
            fake.script(model, body -> FakeModelServer.paced(40, FakeModelServer.openAiText(parts)));
            String runId = run(u, thread(u), "stream across instances");
            SseClient.Result r = SseClient.read(
                    second.base() + "/api/runs/" + runId + "/sse",
                    token(u),
                    null,
                    Integer.MAX_VALUE,
                    Duration.ofSeconds(30));
            assertEquals(200, r.status());
            List<SseClient.Event> evs = r.events();
            for (int i = 0; i < evs.size(); i++) {
                assertEquals(i + 1, evs.get(i).id());
            }
            assertEquals("run.completed", evs.get(evs.size() - 1).type());
            assertEquals(
                    20,
                    evs.stream().filter(e -> e.type().equals("message.delta")).count());
        } finally {
            second.stop(); // not close(): that would drop the shared database
            AtriumServer.deleteTree(second.data.toFile());
        }
    }
}
