package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What one instance proves about a caller is kept for the next request (the access cache), yet a revocation made on
 * another instance of the same database is honoured within a second: token deleted, Principal suspended, workspace
 * deleted, owner witness revoked, OAuth grant revoked. With its listener connection killed an instance keeps nothing.
 */
class AccessInvalidationTest {

    private static final long WITHIN_MILLIS = 1_000;

    @TempDir
    Path tmp;

    @Test
    void aRevocationOnOneInstanceIsHonouredOnTheOtherWithinASecond() throws Throwable {
        TestDatabase db = TestDatabase.create();
        AtriumServer one = null;
        AtriumServer two = null;
        try {
            one = AtriumServer.launch(tmp.resolve("one"), db);
            two = AtriumServer.launch(tmp.resolve("two"), db);
            List<String> timings = new ArrayList<>();

            // a personal access token deleted on instance 1
            User u = one.newUser();
            Http onTwo = new Http(two.base(), u.http().token());
            String space = "/api/spaces/" + u.defaultSpaceId();
            warm(onTwo, space);
            String tokenId = u.http()
                    .get("/api/me/personal-access-tokens")
                    .get("tokens")
                    .get(0)
                    .get("id")
                    .asText();
            warm(u.http(), space);
            assertEquals(
                    200,
                    u.http()
                            .send("DELETE", "/api/me/personal-access-tokens/" + tokenId, null, null)
                            .status());
            // on the instance that made the change, at once (it forgets before it answers), not a notification later
            assertEquals(401, u.http().get(space).status());
            timings.add("token deleted: " + refusedWithin(onTwo, space, 401));

            // a Principal suspended on instance 1
            User v = one.newUser();
            Http vOnTwo = new Http(two.base(), v.http().token());
            warm(vOnTwo, "/api/spaces/" + v.defaultSpaceId());
            warm(v.http(), "/api/spaces/" + v.defaultSpaceId());
            assertEquals(
                    200,
                    one.operator()
                            .post("/admin/users/" + v.username() + "/suspend", Map.of())
                            .status());
            assertEquals(401, v.http().get("/api/spaces/" + v.defaultSpaceId()).status());
            timings.add("Principal suspended: " + refusedWithin(vOnTwo, "/api/spaces/" + v.defaultSpaceId(), 401));

            // a workspace deleted on instance 1 (the token still works; the workspace is gone)
            User w = one.newUser();
            String extra = w.http()
                    .post("/api/spaces", Map.of("name", "Extra"))
                    .get("space")
                    .get("id")
                    .asText();
            Http wOnTwo = new Http(two.base(), w.http().token());
            warm(wOnTwo, "/api/spaces/" + extra);
            assertEquals(
                    200,
                    w.http().send("DELETE", "/api/spaces/" + extra, null, null).status());
            timings.add("workspace deleted: " + refusedWithin(wOnTwo, "/api/spaces/" + extra, 404));

            // an owner witness revoked (an operator's statement in the database: no API writes witnesses)
            User x = one.newUser();
            Http xOnTwo = new Http(two.base(), x.http().token());
            warm(xOnTwo, "/api/spaces/" + x.defaultSpaceId());
            try (Connection c = db.connect();
                    Statement st = c.createStatement()) {
                st.executeUpdate("UPDATE owner_witnesses SET status = 'suspended' WHERE workspace_id = '"
                        + x.defaultSpaceId() + "'");
            }
            timings.add("witness revoked: " + refusedWithin(xOnTwo, "/api/spaces/" + x.defaultSpaceId(), 404));

            System.out.println("access revoked on instance 1, refused on instance 2 after: " + timings);

            // the listener connection killed: nothing is kept until it is back, so a revocation it cannot hear holds
            User y = one.newUser();
            Http yOnTwo = new Http(two.base(), y.http().token());
            String ySpace = "/api/spaces/" + y.defaultSpaceId();
            warm(yOnTwo, ySpace);
            try (Connection c = db.connect();
                    Statement st = c.createStatement()) {
                int killed = 0;
                List<Integer> killedPids = new ArrayList<>();
                try (ResultSet rs = st.executeQuery("SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity "
                        + "WHERE application_name = 'atrium-listener' AND datname = current_database()")) {
                    while (rs.next()) {
                        killedPids.add(rs.getInt(1));
                        killed += rs.getBoolean(2) ? 1 : 0;
                    }
                }
                assertEquals(2, killed, "each instance has one database listener");
                // revoked behind every listener's back, in the same instant: no instance hears this notification
                st.executeUpdate("UPDATE owner_witnesses SET status = 'suspended' WHERE workspace_id = '"
                        + y.defaultSpaceId() + "'");
                // asked once the listeners are back, so only forgetting what was kept (the grant's TTL is 30 s) refuses
                // it; asked at once, the answer raced the listener noticing its death, as any revocation races its
                // notification by a few milliseconds
                long deadline = System.currentTimeMillis() + 15_000;
                int listeners = 0;
                while (listeners < 2 && System.currentTimeMillis() < deadline) {
                    Thread.sleep(50);
                    listeners = 0;
                    try (ResultSet rs = st.executeQuery("SELECT pid FROM pg_stat_activity "
                            + "WHERE application_name = 'atrium-listener' AND datname = current_database()")) {
                        while (rs.next()) {
                            listeners += killedPids.contains(rs.getInt(1)) ? 0 : 1;
                        }
                    }
                }
                assertEquals(2, listeners, "new database listeners came back");
            }
            Http.Reply r = yOnTwo.get(ySpace);
            assertEquals(404, r.status(), "a cached grant was used while the listener was gone: " + r.body());
        } finally {
            if (two != null) {
                two.stop();
            }
            if (one != null) {
                one.stop();
            }
            db.close();
        }
    }

    /** Asks until the instance answers 200 several times in a row: the proof is kept. */
    private static void warm(Http http, String path) {
        for (int i = 0; i < 5; i++) {
            Http.Reply r = http.get(path);
            assertEquals(200, r.status(), r.body());
        }
    }

    /** Milliseconds until {@code path} answers {@code status}; fails after {@link #WITHIN_MILLIS}. */
    private static long refusedWithin(Http http, String path, int status) throws InterruptedException {
        long started = System.nanoTime();
        Http.Reply last = null;
        while ((System.nanoTime() - started) / 1_000_000 <= WITHIN_MILLIS) {
            last = http.get(path);
            if (last.status() == status) {
                return (System.nanoTime() - started) / 1_000_000;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("still " + (last == null ? "unasked" : last.status() + " " + last.body()) + " after "
                + WITHIN_MILLIS + " ms, expected " + status);
    }
}
