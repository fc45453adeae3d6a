package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Notifications end to end, on two instances of one database (each with its providers pointed at the fake model
 * server): a run's end reaches its requester's stream on the other instance, the inbox and its unread count agree,
 * streams resume after Last-Event-ID, preferences and settings decide what is stored and how.
 */
@Timeout(180)
class NotificationsTest {

    static FakeModelServer fake;
    static TestDatabase db;
    static AtriumServer one;
    static AtriumServer two;
    static int models;

    @BeforeAll
    static void start() throws Exception {
        fake = new FakeModelServer();
        db = TestDatabase.create();
        Map<String, String> env = Map.of(
                "ATRIUM_OPENAI_BASE_URL",
                fake.openAiBase(),
                "ATRIUM_OPENAI_API_KEY",
                "sk-test-openai",
                "ATRIUM_RUNS_POLL_MS",
                "200");
        one = AtriumServer.launch(Files.createTempDirectory("atrium-notify-one-"), db, env);
        two = AtriumServer.launch(Files.createTempDirectory("atrium-notify-two-"), db, env);
    }

    @AfterAll
    static void stop() throws Throwable {
        if (two != null) {
            two.stop();
            AtriumServer.deleteTree(two.data.toFile());
        }
        if (one != null) {
            one.stop();
            AtriumServer.deleteTree(one.data.toFile());
        }
        if (db != null) {
            db.close();
        }
        if (fake != null) {
            fake.close();
        }
    }

    /** A live SSE connection: events as they arrive, each with the moment it did. */
    static final class Stream implements AutoCloseable {
        record Event(long id, String type, JsonNode data, long arrivedMillis) {}

        final int status;
        final String contentType;
        final String body;
        final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
        private final HttpResponse<java.io.InputStream> response;
        private final Thread reader;

        Stream(String url, String token, String lastEventId) throws Exception {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).header("Accept", "text/event-stream");
            if (token != null) {
                b.header("Authorization", "Bearer " + token);
            }
            if (lastEventId != null) {
                b.header("Last-Event-ID", lastEventId);
            }
            response = HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
            status = response.statusCode();
            contentType = response.headers().firstValue("Content-Type").orElse("");
            if (status != 200) {
                body = new String(response.body().readAllBytes(), StandardCharsets.UTF_8);
                reader = null;
                return;
            }
            body = null;
            reader = new Thread(this::read, "sse-reader");
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try (BufferedReader in =
                    new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
                String line;
                long id = -1;
                String type = null;
                String data = null;
                while ((line = in.readLine()) != null) {
                    if (line.isEmpty()) {
                        if (data != null) {
                            events.add(new Event(id, type, Http.JSON.readTree(data), System.currentTimeMillis()));
                        }
                        id = -1;
                        type = null;
                        data = null;
                    } else if (line.startsWith("id:")) {
                        id = Long.parseLong(line.substring(3).trim());
                    } else if (line.startsWith("event:")) {
                        type = line.substring(6).trim();
                    } else if (line.startsWith("data:")) {
                        data = line.substring(5).trim();
                    }
                }
            } catch (Exception e) {
                // closed
            }
        }

        Event next(long millis) throws InterruptedException {
            return events.poll(millis, TimeUnit.MILLISECONDS);
        }

        /** Whether the server ended the response within {@code millis}. */
        boolean ended(long millis) throws InterruptedException {
            reader.join(millis);
            return !reader.isAlive();
        }

        @Override
        public void close() throws Exception {
            response.body().close();
        }
    }

    static Stream sse(AtriumServer on, User u, String lastEventId) throws Exception {
        return new Stream(on.base() + "/api/notifications/sse", u.http().token(), lastEventId);
    }

    /** A user whose workspace's model is {@code model} of the fake server's OpenAI side. */
    static User user(String model) {
        return AgentRunsTest.user(one, "openai", model, null);
    }

    /** A run that fails at once: the fake server has no script for an unknown model. */
    static String failingRun(User u) throws InterruptedException {
        String runId = AgentRunsTest.run(u, AgentRunsTest.thread(u), "fail, please");
        assertEquals(
                "failed",
                AgentRunsTest.awaitFinished(u.http(), runId).path("status").asText());
        return runId;
    }

    static JsonNode awaitNotifications(Http http, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        JsonNode list = null;
        while (System.nanoTime() < deadline) {
            list = http.get("/api/notifications").json();
            if (list.path("total").asInt() >= count) {
                return list;
            }
            Thread.sleep(50);
        }
        fail("fewer than " + count + " notifications: " + list);
        return null;
    }

    @Test
    void aFinishedRunIsSeenOnTheOtherInstancesStreamWithinASecond() throws Exception {
        String model = "notify-ok-" + (++models);
        fake.script(model, body -> FakeModelServer.openAiText("Done."));
        User u = user(model);
        Http onTwo = new Http(two.base(), u.http().token());
        User onTwoUser = new User(u.username(), u.principalId(), u.defaultSpaceId(), onTwo);
        try (Stream stream = sse(two, onTwoUser, null)) {
            assertEquals(200, stream.status, stream.body);
            assertTrue(stream.contentType.startsWith("text/event-stream"), stream.contentType);
            String runId = AgentRunsTest.run(u, AgentRunsTest.thread(u), "Say done.");
            Stream.Event e = stream.next(30_000);
            assertNotNull(e, "no notification on the other instance's stream");
            JsonNode run = AgentRunsTest.awaitFinished(u.http(), runId);
            assertEquals("completed", run.path("status").asText());
            long finished = Instant.parse(run.path("finished_at").asText()).toEpochMilli();
            long after = e.arrivedMillis() - finished;
            System.out.println(
                    "run finished on instance 1, its notification arrived on instance 2's SSE after " + after + " ms");
            assertTrue(after <= 1_000, "arrived " + after + " ms after the run finished");
            assertEquals("notification", e.type());
            assertEquals("run.finished", e.data().path("type").asText());
            assertEquals(runId, e.data().path("data").path("run_id").asText());
            assertEquals(u.defaultSpaceId(), e.data().path("space_id").asText());
            assertEquals("/api/runs/" + runId, e.data().path("link").asText());
            assertFalse(e.data().path("read").asBoolean());
            assertEquals(e.id(), e.data().path("seq").asLong());
            // the same notification in the inbox of either instance
            JsonNode listed = onTwo.get("/api/notifications").json();
            assertEquals(1, listed.path("total").asInt(), listed.toString());
            assertEquals(
                    e.data().path("id").asText(),
                    listed.path("notifications").get(0).path("id").asText());
        }
    }

    @Test
    void aFailedRunIsNotifiedWithItsReason() throws Exception {
        User u = user("notify-unscripted-" + (++models));
        String runId = failingRun(u);
        JsonNode n = awaitNotifications(u.http(), 1).path("notifications").get(0);
        assertEquals("run.failed", n.path("type").asText());
        assertEquals("Run failed", n.path("title").asText());
        assertEquals(runId, n.path("data").path("run_id").asText());
        assertFalse(n.path("body").asText().isBlank(), "the reason: " + n);
    }

    @Test
    void unreadCountAndMarkReadAgree() throws Exception {
        User u = user("notify-unscripted-" + (++models));
        for (int i = 0; i < 4; i++) {
            failingRun(u);
        }
        JsonNode list = awaitNotifications(u.http(), 4);
        assertEquals(4, list.path("unread_count").asInt());
        assertEquals(
                4,
                u.http()
                        .get("/api/notifications/unread-count")
                        .json()
                        .path("unread_count")
                        .asInt());
        List<String> ids = new ArrayList<>();
        list.path("notifications").forEach(n -> ids.add(n.path("id").asText()));
        // newest first
        assertTrue(list.path("notifications").get(0).path("seq").asLong()
                > list.path("notifications").get(3).path("seq").asLong());

        Http.Reply one = u.http().patch("/api/notifications/" + ids.get(0) + "/read", null);
        assertEquals(200, one.status(), one.body());
        assertTrue(one.get("notification").path("read").asBoolean());
        assertNotNull(Instant.parse(one.get("notification").path("read_at").asText()));
        assertEquals(3, one.get("unread_count").asInt());
        assertEquals(
                3,
                u.http()
                        .get("/api/notifications/unread-count")
                        .json()
                        .path("unread_count")
                        .asInt());
        assertEquals(
                1,
                u.http()
                        .get("/api/notifications?read=true")
                        .json()
                        .path("total")
                        .asInt());
        assertEquals(
                3,
                u.http()
                        .get("/api/notifications?read=false")
                        .json()
                        .path("total")
                        .asInt());
        // marked read twice keeps its first read_at; read: false marks it unread again
        String readAt = one.get("notification").path("read_at").asText();
        assertEquals(
                readAt,
                u.http()
                        .patch("/api/notifications/" + ids.get(0) + "/read", Map.of("read", true))
                        .get("notification")
                        .path("read_at")
                        .asText());
        assertEquals(
                4,
                u.http()
                        .patch("/api/notifications/" + ids.get(0) + "/read", Map.of("read", false))
                        .get("unread_count")
                        .asInt());

        Http.Reply several = u.http().post("/api/notifications/read", Map.of("ids", List.of(ids.get(1), ids.get(2))));
        assertEquals(200, several.status(), several.body());
        assertEquals(2, several.get("updated").asInt());
        assertEquals(2, several.get("unread_count").asInt());
        assertEquals(
                2,
                u.http()
                        .get("/api/notifications/unread-count")
                        .json()
                        .path("unread_count")
                        .asInt());

        assertEquals(
                0,
                u.http()
                        .get("/api/notifications?type=run.finished")
                        .json()
                        .path("total")
                        .asInt());
        assertEquals(
                4,
                u.http()
                        .get("/api/notifications?type=run.failed")
                        .json()
                        .path("total")
                        .asInt());
        assertEquals(
                2,
                u.http()
                        .get("/api/notifications/unread-count?type=run.failed")
                        .json()
                        .path("unread_count")
                        .asInt());

        Http.Reply all = u.http().post("/api/notifications/read", Map.of("all", true));
        assertEquals(200, all.status(), all.body());
        assertEquals(2, all.get("updated").asInt());
        assertEquals(0, all.get("unread_count").asInt());
        assertEquals(
                0,
                u.http()
                        .get("/api/notifications/unread-count")
                        .json()
                        .path("unread_count")
                        .asInt());
        assertEquals(
                4,
                u.http()
                        .get("/api/notifications?read=true")
                        .json()
                        .path("total")
                        .asInt());
        JsonNode page = u.http().get("/api/notifications?limit=3&offset=3").json();
        assertEquals(1, page.path("notifications").size());
        assertEquals(4, page.path("total").asInt());
    }

    @Test
    void aStreamResumesAfterLastEventIdAndANewOneStartsAtThePresent() throws Exception {
        User u = user("notify-unscripted-" + (++models));
        for (int i = 0; i < 3; i++) {
            failingRun(u);
        }
        awaitNotifications(u.http(), 3);
        try (Stream resumed = sse(one, u, "1")) {
            Stream.Event a = resumed.next(5_000);
            Stream.Event b = resumed.next(5_000);
            assertNotNull(a);
            assertNotNull(b);
            assertEquals(2, a.id());
            assertEquals(3, b.id());
            assertEquals(null, resumed.next(300), "nothing after the last one");
        }
        try (Stream fresh = sse(
                        two,
                        new User(
                                u.username(),
                                u.principalId(),
                                u.defaultSpaceId(),
                                new Http(two.base(), u.http().token())),
                        null);
                Stream query = new Stream(
                        one.base() + "/api/notifications/sse?last_event_id=2",
                        u.http().token(),
                        null)) {
            assertEquals(3, query.next(5_000).id());
            assertEquals(null, fresh.next(300), "a new stream carries no backlog");
            failingRun(u);
            Stream.Event live = fresh.next(5_000);
            assertNotNull(live);
            assertEquals(4, live.id());
            assertEquals(4, query.next(5_000).id());
        }
        // a Last-Event-ID past the last position (another database's) resumes from the present, not from that id
        try (Stream ahead = sse(one, u, "99999")) {
            assertEquals(200, ahead.status, ahead.body);
            assertEquals(null, ahead.next(300));
            failingRun(u);
            Stream.Event next = ahead.next(5_000);
            assertNotNull(next, "a stream resumed past the end stayed silent");
            assertEquals(5, next.id());
        }
        // the WebSocket resumes the same way
        int[] close = new int[1];
        List<JsonNode> ws = AgentRunsTest.webSocket(
                two.base().replace("http", "ws") + "/api/notifications/ws?last_event_id=2",
                u.http().token(),
                3,
                close);
        assertEquals(
                List.of(3L, 4L, 5L),
                ws.stream().map(n -> n.path("seq").asLong()).toList());
        assertEquals(5, u.http().get("/api/notifications").json().path("total").asInt());
        assertEquals("run.failed", ws.get(0).path("type").asText());
    }

    @Test
    void updatingTheStreamingBundleEndsOpenStreamsAndAResumedOneMissesNothing() throws Exception {
        User u = one.newUser();
        Path jar = AtriumServer.ROOT.resolve("bundles/streams/target/streams-0.1.0-SNAPSHOT.jar");
        try (Stream before = sse(one, u, null)) {
            assertEquals(
                    201,
                    u.http()
                            .post("/api/notifications/test", Map.of("title", "before"))
                            .status());
            Stream.Event first = before.next(5_000);
            assertNotNull(first);
            Http.Reply updated = one.operator()
                    .send(
                            "POST",
                            "/admin/bundles/dev.atrium.streams/update",
                            Jars.withQualifier(jar, "streamsA"),
                            "application/java-archive");
            assertEquals(200, updated.status(), updated.body());
            assertTrue(before.ended(10_000), "the open stream ends, so that its client reconnects to the new version");
            assertEquals(
                    201,
                    u.http()
                            .post("/api/notifications/test", Map.of("title", "meanwhile"))
                            .status());
            try (Stream resumed = sse(one, u, String.valueOf(first.id()))) {
                assertEquals(200, resumed.status, resumed.body);
                Stream.Event missed = resumed.next(5_000);
                assertNotNull(missed, "what was posted while no stream was open");
                assertEquals(first.id() + 1, missed.id());
                assertEquals("meanwhile", missed.data().path("title").asText());
                assertEquals(
                        201,
                        u.http()
                                .post("/api/notifications/test", Map.of("title", "after"))
                                .status());
                Stream.Event live = resumed.next(5_000);
                assertNotNull(live, "the new version's hub fans out live notifications");
                assertEquals(first.id() + 2, live.id());
            }
        } finally {
            assertEquals(
                    200,
                    one.operator()
                            .send(
                                    "POST",
                                    "/admin/bundles/dev.atrium.streams/update",
                                    Files.readAllBytes(jar),
                                    "application/java-archive")
                            .status(),
                    "restore the original build");
        }
    }

    @Test
    void aTestNotificationGoesThroughTheServiceToTheCallersStreams() throws Exception {
        User u = one.newUser();
        try (Stream stream = sse(one, u, null)) {
            Http.Reply posted = u.http()
                    .post("/api/notifications/test", Map.of("title", "Hello", "body", "from the settings page"));
            assertEquals(201, posted.status(), posted.body());
            JsonNode n = posted.get("notification");
            assertEquals("notification.test", n.path("type").asText());
            assertEquals("Hello", n.path("title").asText());
            Stream.Event e = stream.next(5_000);
            assertNotNull(e);
            assertEquals(n.path("id").asText(), e.data().path("id").asText());
            assertEquals(n.path("seq").asLong(), e.id());
        }
        assertEquals(
                201,
                u.http().send("POST", "/api/notifications/test", null, null).status(),
                "the body is optional");
        assertEquals(
                200,
                u.http()
                        .patch("/api/notifications/preferences", Map.of("enabled", false))
                        .status());
        Http.Reply off = u.http().post("/api/notifications/test", Map.of());
        assertEquals(200, off.status(), off.body());
        assertTrue(off.get("notification").isNull(), "notifications turned off: nothing stored");
        assertEquals(2, u.http().get("/api/notifications").json().path("total").asInt());
        for (Object body : List.of(
                Map.of("title", ""), Map.of("title", 5), Map.of("colour", "red"), Map.of("body", "x".repeat(4_001)))) {
            BadInputTest.assertSpecError(u.http().post("/api/notifications/test", body), 400, "BAD_REQUEST");
        }
        BadInputTest.assertSpecError(
                u.http().send("POST", "/api/notifications/test", "{", "application/json"), 400, "BAD_REQUEST");
        assertEquals(2, u.http().get("/api/notifications").json().path("total").asInt());
    }

    @Test
    void preferencesDecideWhatIsStoredAndAMuteMakesItSilent() throws Exception {
        User u = user("notify-unscripted-" + (++models));
        JsonNode prefs = u.http().get("/api/notifications/preferences").get("preferences");
        assertTrue(prefs.path("enabled").asBoolean());
        assertTrue(prefs.path("types").path("run.failed").asBoolean());
        JsonNode settings = u.http().get("/api/notifications/settings").get("settings");
        assertTrue(settings.has("muted_until") && settings.path("muted_until").isNull(), settings.toString());

        Http.Reply off = u.http().patch("/api/notifications/preferences", Map.of("types", Map.of("run.failed", false)));
        assertEquals(200, off.status(), off.body());
        assertFalse(off.get("preferences").path("types").path("run.failed").asBoolean());
        assertTrue(off.get("preferences").path("types").path("run.finished").asBoolean());
        failingRun(u);
        Thread.sleep(300);
        assertEquals(
                0, u.http().get("/api/notifications").json().path("total").asInt(), "a type turned off is not stored");

        assertEquals(
                200,
                u.http()
                        .patch("/api/notifications/preferences", Map.of("types", Map.of("run.failed", true)))
                        .status());
        String until = Instant.now()
                .plusSeconds(3600)
                .truncatedTo(java.time.temporal.ChronoUnit.MILLIS)
                .toString();
        Http.Reply muted = u.http().patch("/api/notifications/settings", Map.of("muted_until", until));
        assertEquals(200, muted.status(), muted.body());
        assertEquals(
                Instant.parse(until),
                Instant.parse(muted.get("settings").path("muted_until").asText()));
        assertTrue(muted.get("settings").path("muted").asBoolean());
        failingRun(u);
        JsonNode n = awaitNotifications(u.http(), 1).path("notifications").get(0);
        assertTrue(n.path("silent").asBoolean(), "posted while muted: kept, but silent " + n);

        Map<String, Object> unmute = new java.util.HashMap<>();
        unmute.put("muted_until", null);
        JsonNode unmuted = u.http().patch("/api/notifications/settings", unmute).get("settings");
        assertTrue(unmuted.path("muted_until").isNull());
        assertFalse(unmuted.path("muted").asBoolean());
        failingRun(u);
        assertFalse(awaitNotifications(u.http(), 2)
                .path("notifications")
                .get(0)
                .path("silent")
                .asBoolean());
    }

    @Test
    void anotherPrincipalsNotificationIsTheSame404AsAMissingOneOnEveryRoute() throws Exception {
        User u = user("notify-unscripted-" + (++models));
        User stranger = one.newUser();
        failingRun(u);
        String id = awaitNotifications(u.http(), 1)
                .path("notifications")
                .get(0)
                .path("id")
                .asText();
        String missing = SweepFixtures.missingLike(id);

        Http.Reply foreign = stranger.http().patch("/api/notifications/" + id + "/read", null);
        Http.Reply absent = stranger.http().patch("/api/notifications/" + missing + "/read", null);
        BadInputTest.assertSpecError(foreign, 404, "NOT_FOUND");
        assertEquals(absent.status(), foreign.status());
        assertEquals(
                absent.json().path("error").path("message"),
                foreign.json().path("error").path("message"));

        Http.Reply foreignMany = stranger.http().post("/api/notifications/read", Map.of("ids", List.of(id)));
        Http.Reply absentMany = stranger.http().post("/api/notifications/read", Map.of("ids", List.of(missing)));
        BadInputTest.assertSpecError(foreignMany, 404, "NOT_FOUND");
        assertEquals(absentMany.body(), foreignMany.body());
        // a list mixing one's own and another's changes nothing
        User own = user("notify-unscripted-" + (++models));
        failingRun(own);
        String ownId = awaitNotifications(own.http(), 1)
                .path("notifications")
                .get(0)
                .path("id")
                .asText();
        BadInputTest.assertSpecError(
                own.http().post("/api/notifications/read", Map.of("ids", List.of(ownId, id))), 404, "NOT_FOUND");
        assertEquals(
                1,
                own.http()
                        .get("/api/notifications/unread-count")
                        .json()
                        .path("unread_count")
                        .asInt());

        assertEquals(
                0,
                stranger.http().get("/api/notifications").json().path("total").asInt());
        assertEquals(
                0,
                stranger.http()
                        .get("/api/notifications/unread-count")
                        .json()
                        .path("unread_count")
                        .asInt());
        assertEquals(
                1,
                u.http()
                        .get("/api/notifications/unread-count")
                        .json()
                        .path("unread_count")
                        .asInt(),
                "the stranger changed nothing");
        try (Stream s = new Stream(
                one.base() + "/api/notifications/sse?last_event_id=0",
                stranger.http().token(),
                null)) {
            assertEquals(200, s.status);
            assertEquals(null, s.next(500), "a stranger's stream carries nobody else's notifications");
        }
    }

    @Test
    void badInputIsA4xxWithTheSpecBodyAndChangesNothing() throws Exception {
        User u = user("notify-unscripted-" + (++models));
        failingRun(u);
        String id = awaitNotifications(u.http(), 1)
                .path("notifications")
                .get(0)
                .path("id")
                .asText();
        String settingsBefore = u.http().get("/api/notifications/settings").body();
        for (String q :
                List.of("?read=maybe", "?type=Run%20Failed", "?limit=0", "?limit=101", "?offset=-1", "?limit=x")) {
            BadInputTest.assertSpecError(u.http().get("/api/notifications" + q), 400, "BAD_REQUEST");
        }
        BadInputTest.assertSpecError(u.http().get("/api/notifications/unread-count?type=..."), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                u.http().patch("/api/notifications/" + id + "/read", Map.of("read", "yes")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                u.http().send("PATCH", "/api/notifications/" + id + "/read", "[1]", "application/json"),
                400,
                "BAD_REQUEST");
        for (Object body : List.of(
                Map.of(),
                Map.of("all", true, "ids", List.of(id)),
                Map.of("ids", List.of()),
                Map.of("ids", "x"),
                Map.of("ids", List.of(1)),
                Map.of("ids", List.of(id), "type", "run.failed"),
                Map.of("all", "yes"))) {
            BadInputTest.assertSpecError(u.http().post("/api/notifications/read", body), 400, "BAD_REQUEST");
        }
        BadInputTest.assertSpecError(
                u.http().send("POST", "/api/notifications/read", "{\"all\":", "application/json"), 400, "BAD_REQUEST");
        for (Object body : List.of(
                Map.of("muted_until", "tomorrow"),
                Map.of("muted_until", 5),
                Map.of("enabled", "no"),
                Map.of("types", List.of("run.failed")),
                Map.of("types", Map.of("Run Failed", false)),
                Map.of("types", Map.of("run.failed", "off")),
                Map.of("colour", "red"),
                Map.of("muted_until", "+99999-01-01T00:00:00Z"))) {
            BadInputTest.assertSpecError(u.http().patch("/api/notifications/settings", body), 400, "BAD_REQUEST");
        }
        BadInputTest.assertSpecError(
                u.http().patch("/api/notifications/preferences", Map.of("muted_until", "2030-01-01T00:00:00Z")),
                400,
                "BAD_REQUEST");
        Map<String, Object> many = new java.util.HashMap<>();
        for (int i = 0; i < 101; i++) {
            many.put("custom.type" + i, false);
        }
        BadInputTest.assertSpecError(
                u.http().patch("/api/notifications/preferences", Map.of("types", many)), 400, "BAD_REQUEST");
        assertEquals(settingsBefore, u.http().get("/api/notifications/settings").body());
        assertEquals(
                1,
                u.http()
                        .get("/api/notifications/unread-count")
                        .json()
                        .path("unread_count")
                        .asInt());
        try (Stream s =
                new Stream(one.base() + "/api/notifications/sse", u.http().token(), "-1")) {
            assertEquals(400, s.status, s.body);
            assertTrue(s.body.contains("BAD_REQUEST"), s.body);
        }
        try (Stream s = new Stream(one.base() + "/api/notifications/sse", null, null)) {
            assertEquals(401, s.status, s.body);
        }
        Http.Reply post = u.http().post("/api/notifications/sse", Map.of());
        BadInputTest.assertSpecError(post, 405, "METHOD_NOT_ALLOWED");
        BadInputTest.assertSpecError(u.http().get("/api/notifications/ws"), 426, "UPGRADE_REQUIRED");
    }
}
