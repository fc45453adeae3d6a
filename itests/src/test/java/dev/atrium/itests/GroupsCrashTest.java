package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A server killed with SIGKILL in the middle of a group's apply: applying again on the next server converges. */
@Timeout(180)
class GroupsCrashTest {

    static final int RESOURCES = 60;

    @Test
    void anApplyCutShortByKillConvergesWithoutDuplicatesWhenAppliedAgain() throws Throwable {
        TestDatabase db = TestDatabase.create();
        Path data = Files.createTempDirectory("atrium-groups-crash-");
        String[] keys = new String[RESOURCES];
        for (int i = 0; i < RESOURCES; i++) {
            keys[i] = "r" + i;
        }
        String manifest = GroupsTest.manifest(keys);
        AtriumServer server = AtriumServer.launch(data, db);
        AtriumServer restarted = null;
        try {
            User u = server.newUser();
            CompletableFuture<Http.Reply> apply = CompletableFuture.supplyAsync(() -> u.http()
                    .post(GroupsTest.groups(u) + "/apply", Map.of("group_name", "shelf", "manifest", manifest)));
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (inventory(db) < 3 && System.nanoTime() < deadline && !apply.isDone()) {
                Thread.sleep(2);
            }
            assertTrue(!apply.isDone(), "the apply finished before the server could be killed: " + apply.getNow(null));
            server.killHard();
            int made = inventory(db);
            assertTrue(made > 0 && made < RESOURCES, made + " of " + RESOURCES + " resources made before the kill");

            restarted = AtriumServer.launch(data, db);
            User same = new User(
                    u.username(),
                    u.principalId(),
                    u.defaultSpaceId(),
                    new Http(restarted.base(), u.http().token()));
            Http.Reply again = same.http()
                    .post(GroupsTest.groups(same) + "/apply", Map.of("group_name", "shelf", "manifest", manifest));
            assertEquals(200, again.status(), again.body());
            assertEquals(RESOURCES, inventory(db));
            Set<String> names = new HashSet<>();
            same.http()
                    .get("/api/resources?limit=100")
                    .get("resources")
                    .forEach(r -> assertTrue(names.add(r.get("name").asText())));
            assertEquals(RESOURCES, names.size(), names.toString());
            Http.Reply plan = same.http().post(GroupsTest.groups(same) + "/plan", Map.of("group_name", "shelf"));
            assertEquals(
                    RESOURCES, plan.get("plan").get("summary").get("unchanged").asInt(), plan.body());
        } finally {
            if (restarted != null) {
                restarted.close();
            }
            server.close();
            db.close();
        }
    }

    static int inventory(TestDatabase db) throws Exception {
        try (Connection c = db.connect();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM app_group_objects")) {
            rs.next();
            return rs.getInt(1);
        } catch (java.sql.SQLException e) {
            return 0; // the table is made when the apps bundle starts
        }
    }
}
