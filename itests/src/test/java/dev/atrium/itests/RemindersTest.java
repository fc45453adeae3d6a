package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Reminders end to end on two instances of one database: a due reminder fires exactly once whichever instance claims
 * it, one missed while no instance ran fires once after the restart, one whose owner is suspended never fires, and
 * every route refuses strangers and bad input without changing anything.
 */
@Timeout(300)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RemindersTest {

    static TestDatabase db;
    static Path oneData;
    static AtriumServer one;
    static AtriumServer two;

    @BeforeAll
    static void start() throws Exception {
        db = TestDatabase.create();
        oneData = Files.createTempDirectory("atrium-remind-one-");
        one = AtriumServer.launch(oneData, db);
        two = AtriumServer.launch(Files.createTempDirectory("atrium-remind-two-"), db);
    }

    @AfterAll
    static void stop() throws Throwable {
        if (two != null && two.process.isAlive()) {
            two.stop();
        }
        if (one != null && one.process.isAlive()) {
            one.stop();
        }
        // each data directory holds its framework cache: ~90 MB left in /tmp per run
        if (two != null) {
            AtriumServer.deleteTree(two.data.toFile());
        }
        if (oneData != null) {
            AtriumServer.deleteTree(oneData.toFile());
        }
        if (db != null) {
            db.close();
        }
    }

    static String reminders(User u) {
        return "/api/spaces/" + u.defaultSpaceId() + "/reminders";
    }

    static JsonNode create(User u, Map<String, Object> body) {
        Http.Reply r = u.http().post(reminders(u), body);
        assertEquals(201, r.status(), r.body());
        return r.get("reminder");
    }

    /** The reminder.fired notifications of {@code principalId} per reminder id, as the database has them. */
    static Map<String, Integer> firedNotices(String principalId) throws Exception {
        Map<String, Integer> out = new HashMap<>();
        try (var c = db.connect();
                var ps = c.prepareStatement(
                        "SELECT data->>'reminder_id' AS reminder, count(*) AS n FROM notifications WHERE principal_id = ? AND type = 'reminder.fired' GROUP BY 1")) {
            ps.setString(1, principalId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString("reminder"), rs.getInt("n"));
                }
            }
        }
        return out;
    }

    static Map<String, Object> row(String reminderId) throws Exception {
        try (var c = db.connect();
                var ps = c.prepareStatement(
                        "SELECT fire_count, last_outcome, next_fire_at FROM reminders WHERE id = ?")) {
            ps.setString(1, reminderId);
            try (ResultSet rs = ps.executeQuery()) {
                assertTrue(rs.next(), reminderId);
                Map<String, Object> m = new HashMap<>();
                m.put("fire_count", rs.getInt("fire_count"));
                m.put("last_outcome", rs.getString("last_outcome"));
                m.put("next_fire_at", rs.getTimestamp("next_fire_at"));
                return m;
            }
        }
    }

    @Test
    @Order(1)
    void remindersDueIn2SecondsFireExactlyOnceOnTwoInstances() throws Exception {
        User u = one.newUser();
        Instant due = Instant.now().plusSeconds(2).truncatedTo(ChronoUnit.SECONDS);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            ids.add(create(u, Map.of("title", "Stand-up " + i, "body", "in room 4", "at", due.toString()))
                    .path("id")
                    .asText());
        }
        JsonNode first = u.http().get("/api/reminders/" + ids.get(0)).get("reminder");
        assertEquals(due.toString(), first.path("next_fire_at").asText());
        assertEquals("UTC", first.path("time_zone").asText());
        long deadline = System.currentTimeMillis() + 15_000;
        while (firedNotices(u.principalId()).size() < ids.size() && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        long firedAt = System.currentTimeMillis();
        assertTrue(firedAt - due.toEpochMilli() < 5_000, "fired within 5 s of the due time");
        Thread.sleep(3_000); // both instances poll every second: a second firing would have happened by now
        Map<String, Integer> fired = firedNotices(u.principalId());
        for (String id : ids) {
            assertEquals(1, fired.getOrDefault(id, 0), "reminder " + id + " fired once: " + fired);
            JsonNode r = u.http().get("/api/reminders/" + id).get("reminder");
            assertEquals(1, r.path("fire_count").asInt());
            assertEquals("fired", r.path("last_outcome").asText());
            assertTrue(r.path("next_fire_at").isNull(), "a one-off is done: " + r);
        }
        JsonNode notice = u.http()
                .get("/api/notifications?type=reminder.fired&limit=1")
                .get("notifications")
                .get(0);
        assertEquals("in room 4", notice.path("body").asText());
        assertEquals(u.defaultSpaceId(), notice.path("space_id").asText());
        assertTrue(notice.path("link").asText().startsWith("/api/reminders/rem_"), notice.toString());
    }

    @Test
    @Order(2)
    void aRecurringReminderFiresEachOccurrenceOnceAndTriggerFiresNowLeavingTheScheduleAlone() throws Exception {
        User u = one.newUser();
        LocalDateTime start = LocalDateTime.ofInstant(Instant.now().plusSeconds(2), ZoneOffset.UTC)
                .truncatedTo(ChronoUnit.SECONDS);
        JsonNode r = create(
                u,
                Map.of(
                        "title",
                        "Every minute",
                        "rrule",
                        "RRULE:freq=minutely",
                        "starts_at",
                        start.toString(),
                        "time_zone",
                        "UTC"));
        assertEquals("FREQ=MINUTELY", r.path("rrule").asText());
        assertEquals(start.toString(), r.path("starts_at").asText());
        String id = r.path("id").asText();
        long deadline = System.currentTimeMillis() + 15_000;
        while (firedNotices(u.principalId()).getOrDefault(id, 0) < 1 && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        JsonNode after = u.http().get("/api/reminders/" + id).get("reminder");
        assertEquals(1, after.path("fire_count").asInt(), after.toString());
        assertEquals(
                start.plusMinutes(1).toInstant(ZoneOffset.UTC).toString(),
                after.path("next_fire_at").asText());

        Http.Reply triggered = u.http().post("/api/reminders/" + id + "/trigger", null);
        assertEquals(200, triggered.status(), triggered.body());
        assertTrue(triggered.get("notification_id").asText().startsWith("ntf_"), triggered.body());
        assertEquals(2, triggered.get("reminder").path("fire_count").asInt());
        assertEquals(after.path("next_fire_at"), triggered.get("reminder").path("next_fire_at"));
        assertEquals(2, firedNotices(u.principalId()).get(id));

        // paused: nothing is due; enabled again: the next occurrence after now
        JsonNode paused =
                u.http().patch("/api/reminders/" + id, Map.of("enabled", false)).get("reminder");
        assertFalse(paused.path("enabled").asBoolean());
        assertTrue(paused.path("next_fire_at").isNull());
        JsonNode resumed = u.http()
                .patch("/api/reminders/" + id, Map.of("enabled", true, "title", "Renamed"))
                .get("reminder");
        assertEquals("Renamed", resumed.path("title").asText());
        assertTrue(Instant.parse(resumed.path("next_fire_at").asText()).isAfter(Instant.now()));
        assertEquals(1, u.http().get(reminders(u)).get("total").asInt());
        assertEquals(200, u.http().delete("/api/reminders/" + id).status());
        BadInputTest.assertSpecError(u.http().get("/api/reminders/" + id), 404, "NOT_FOUND");
    }

    @Test
    @Order(2)
    void aReminderThatAsksForARunStartsOneOnItsThreadForItsOwnerAndNeverOnAStrangersThread() throws Exception {
        User u = one.newUser();
        User other = one.newUser();
        String thread = u.http()
                .post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", "Daily digest"))
                .get("thread")
                .path("id")
                .asText();
        String theirs = other.http()
                .post("/api/spaces/" + other.defaultSpaceId() + "/threads", Map.of("title", "theirs"))
                .get("thread")
                .path("id")
                .asText();
        String id = create(
                        u,
                        Map.of(
                                "title",
                                "Digest",
                                "at",
                                Instant.now().plusSeconds(2).toString(),
                                "thread_id",
                                thread,
                                "run_input",
                                "Summarize today's news."))
                .path("id")
                .asText();
        long deadline = System.currentTimeMillis() + 15_000;
        JsonNode r = u.http().get("/api/reminders/" + id).get("reminder");
        while (r.path("last_run_id").isNull() && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
            r = u.http().get("/api/reminders/" + id).get("reminder");
        }
        String runId = r.path("last_run_id").asText(null);
        assertNotNull(runId, r.toString());
        JsonNode run = u.http().get("/api/runs/" + runId).get("run");
        assertEquals(thread, run.path("thread_id").asText(), run.toString());
        assertTrue(u.http().get("/api/threads/" + thread + "/messages").body().contains("Summarize today's news."));

        Http.Reply triggered = u.http().post("/api/reminders/" + id + "/trigger", null);
        assertEquals(200, triggered.status(), triggered.body());
        assertTrue(triggered.get("run_id").asText().startsWith("run_"), triggered.body());
        assertEquals(triggered.get("run_id"), triggered.get("reminder").path("last_run_id"));

        // another Principal's thread: the reminder fires, the kernel refuses the run
        JsonNode pointed = u.http()
                .patch("/api/reminders/" + id, Map.of("thread_id", theirs))
                .get("reminder");
        assertEquals(theirs, pointed.path("thread_id").asText());
        Http.Reply refused = u.http().post("/api/reminders/" + id + "/trigger", null);
        assertEquals(200, refused.status(), refused.body());
        assertTrue(refused.get("run_id").isNull(), refused.body());
        assertTrue(refused.get("run_error").asText().contains("not found"), refused.body());
        assertTrue(
                other.http().get("/api/threads/" + theirs + "/runs").get("runs").isEmpty());
        assertFalse(
                other.http().get("/api/threads/" + theirs + "/messages").body().contains("Summarize"));
        Map<String, Object> none = new HashMap<>();
        none.put("thread_id", null);
        assertTrue(u.http()
                .patch("/api/reminders/" + id, none)
                .get("reminder")
                .path("run_input")
                .isNull());
    }

    @Test
    @Order(3)
    void aSuspendedPrincipalsReminderNeverFiresAndNorDoesOneWhoseOwnerWitnessIsSuspended() throws Exception {
        User suspended = one.newUser();
        User witnessless = one.newUser();
        String at = Instant.now().plusSeconds(2).toString();
        String a =
                create(suspended, Map.of("title", "never", "at", at)).path("id").asText();
        String b = create(witnessless, Map.of("title", "never either", "at", at))
                .path("id")
                .asText();
        assertEquals(
                200,
                one.operator()
                        .post("/admin/users/" + suspended.username() + "/suspend", Map.of())
                        .status());
        db.execute(
                "UPDATE owner_witnesses SET status = 'suspended' WHERE workspace_id = ?", witnessless.defaultSpaceId());
        long deadline = System.currentTimeMillis() + 15_000;
        while (!"skipped_inactive".equals(row(b).get("last_outcome")) && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        Thread.sleep(2_000);
        for (String id : List.of(a, b)) {
            Map<String, Object> r = row(id);
            assertEquals("skipped_inactive", r.get("last_outcome"), id);
            assertEquals(0, r.get("fire_count"), id);
        }
        assertTrue(firedNotices(suspended.principalId()).isEmpty());
        assertTrue(firedNotices(witnessless.principalId()).isEmpty());
    }

    @Test
    @Order(4)
    void everyRouteGivesAStrangerTheSame404AsAMissingReminder() {
        User owner = one.newUser();
        User stranger = two.newUser();
        String id = create(
                        owner,
                        Map.of(
                                "title",
                                "mine",
                                "at",
                                Instant.now().plusSeconds(3600).toString()))
                .path("id")
                .asText();
        String before = owner.http().get("/api/reminders/" + id).body();
        String missing = "rem_" + SweepFixtures.random(id.length() - 4);
        for (String target : List.of(id, missing)) {
            BadInputTest.assertSpecError(stranger.http().get("/api/reminders/" + target), 404, "NOT_FOUND");
            BadInputTest.assertSpecError(
                    stranger.http().patch("/api/reminders/" + target, Map.of("title", "theirs")), 404, "NOT_FOUND");
            BadInputTest.assertSpecError(
                    stranger.http().post("/api/reminders/" + target + "/trigger", null), 404, "NOT_FOUND");
            BadInputTest.assertSpecError(stranger.http().delete("/api/reminders/" + target), 404, "NOT_FOUND");
        }
        assertEquals(
                stranger.http().get("/api/reminders/" + missing).body(),
                stranger.http().get("/api/reminders/" + id).body());
        BadInputTest.assertSpecError(stranger.http().get(reminders(owner)), 404, "NOT_FOUND");
        BadInputTest.assertSpecError(
                stranger.http().post(reminders(owner), Map.of("title", "x", "at", "2099-01-01T00:00:00Z")),
                404,
                "NOT_FOUND");
        assertEquals(before, owner.http().get("/api/reminders/" + id).body());
        assertEquals(1, owner.http().get(reminders(owner)).get("total").asInt());
    }

    @Test
    @Order(5)
    void badInputIsA400SayingWhatIsWrongAndChangesNothing() {
        User u = one.newUser();
        String future = Instant.now().plusSeconds(3600).toString();
        String id = create(u, Map.of("title", "kept", "at", future, "time_zone", "Europe/Paris"))
                .path("id")
                .asText();
        String before = u.http().get("/api/reminders/" + id).body();
        List<Object> bodies = new ArrayList<>();
        bodies.add(Map.of());
        bodies.add(Map.of("title", "x"));
        bodies.add(Map.of("title", "", "at", future));
        bodies.add(Map.of("title", "x".repeat(201), "at", future));
        bodies.add(Map.of("title", 7, "at", future));
        bodies.add(Map.of("title", "x", "at", "2001-01-01T00:00:00Z"));
        bodies.add(Map.of("title", "x", "at", "tomorrow"));
        bodies.add(Map.of("title", "x", "at", future, "rrule", "FREQ=DAILY"));
        bodies.add(Map.of("title", "x", "rrule", "FREQ=DAILY;COUNT=3"));
        bodies.add(Map.of("title", "x", "rrule", "FREQ=FORTNIGHTLY"));
        bodies.add(Map.of("title", "x", "rrule", "FREQ=DAILY", "starts_at", "soon"));
        bodies.add(Map.of("title", "x", "at", future, "time_zone", "Mars/Olympus"));
        bodies.add(Map.of("title", "x", "at", future, "time_zone", "+05:00"));
        bodies.add(Map.of("title", "x", "at", future, "enabled", "yes"));
        bodies.add(Map.of("title", "x", "at", future, "thread_id", "thr_x"));
        bodies.add(Map.of("title", "x", "at", future, "run_input", "hello"));
        bodies.add(Map.of("title", "x", "at", future, "thread_id", "thr_x", "run_input", ""));
        bodies.add(Map.of("title", "x", "at", future, "colour", "red"));
        bodies.add(Map.of("title", "x", "at", "+999999999-12-31T23:59:59Z"));
        bodies.add(Map.of("title", "x", "body", "y".repeat(4001), "at", future));
        bodies.add("[1]");
        bodies.add("{\"title\":");
        for (Object body : bodies) {
            Http.Reply r = u.http().post(reminders(u), body);
            assertTrue(r.status() == 400, body + " → " + r.status() + " " + r.body());
            BadInputTest.assertSpecError(r, 400, "BAD_REQUEST");
        }
        List<Object> patches = new ArrayList<>(bodies.subList(2, bodies.size()));
        patches.set(0, Map.of());
        Map<String, Object> nullTitle = new LinkedHashMap<>();
        nullTitle.put("title", null);
        patches.add(nullTitle);
        for (Object body : patches) {
            Http.Reply r = u.http().patch("/api/reminders/" + id, body);
            BadInputTest.assertSpecError(r, 400, "BAD_REQUEST");
        }
        assertEquals(before, u.http().get("/api/reminders/" + id).body());
        assertEquals(1, u.http().get(reminders(u)).get("total").asInt());
        BadInputTest.assertSpecError(u.http().get(reminders(u) + "?limit=0"), 400, "BAD_REQUEST");
    }

    @Test
    @Order(99)
    void remindersMissedWhileNoInstanceRanFireOnceAfterTheRestart() throws Exception {
        User u = one.newUser();
        String oneOff = create(
                        u,
                        Map.of(
                                "title",
                                "while down",
                                "at",
                                Instant.now().plusSeconds(3600).toString()))
                .path("id")
                .asText();
        // hourly since five hours ago
        String hourly = create(
                        u,
                        Map.of(
                                "title",
                                "hourly",
                                "rrule",
                                "FREQ=HOURLY",
                                "starts_at",
                                LocalDateTime.now(ZoneOffset.UTC)
                                        .minusHours(5)
                                        .truncatedTo(ChronoUnit.SECONDS)
                                        .toString()))
                .path("id")
                .asText();
        two.stop();
        one.stop();
        // as if every instance had been down for three hours: the one-off came due two minutes ago, the hourly one
        // missed three occurrences
        assertEquals(
                1,
                db.execute(
                        "UPDATE reminders SET fire_at = now() - interval '2 minutes', next_fire_at = now() - interval '2 minutes' WHERE id = ?",
                        oneOff));
        assertEquals(
                1,
                db.execute(
                        "UPDATE reminders SET next_fire_at = next_fire_at - interval '3 hours' WHERE id = ?", hourly));
        assertTrue(firedNotices(u.principalId()).isEmpty(), "nothing fired while down");
        one = AtriumServer.launch(oneData, db);
        Http http = new Http(one.base(), u.http().token());
        long deadline = System.currentTimeMillis() + 15_000;
        while (firedNotices(u.principalId()).size() < 2 && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        Thread.sleep(3_000);
        assertEquals(
                Map.of(oneOff, 1, hourly, 1),
                firedNotices(u.principalId()),
                "each fired once, not once per missed occurrence");
        JsonNode h = http.get("/api/reminders/" + hourly).get("reminder");
        assertEquals(1, h.path("fire_count").asInt());
        Instant next = Instant.parse(h.path("next_fire_at").asText());
        assertTrue(next.isAfter(Instant.now()) && next.isBefore(Instant.now().plusSeconds(3601)), h.toString());
        assertNotNull(http.get("/api/reminders/" + oneOff)
                .get("reminder")
                .path("last_fired_at")
                .textValue());
    }
}
