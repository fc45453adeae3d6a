package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Model A's outboxes and followers are in PostgreSQL: a server killed with SIGKILL comes back with every activity and
 * follower, and the next push reaches the follower it had, signed with the same key. Both runs publish the same ids
 * (a configured public base URL, as a federating server has).
 */
class StoreInventoryRestartTest {

    private static final String PUBLIC = "http://atrium.test";

    @TempDir
    Path tmp;

    private static List<String> pushes(ApPeer peer) throws Exception {
        List<String> out = new ArrayList<>();
        for (ApPeer.Received r : peer.inbox) {
            JsonNode a = Http.JSON.readTree(r.body());
            if (a.path("type").asText().equals("Push")) {
                out.add(a.get("object").get("orderedItems").get(0).get("hash").asText());
            }
        }
        return out;
    }

    private static void await(ApPeer peer, int pushes) throws Exception {
        long deadline = System.currentTimeMillis() + 30_000;
        while (pushes(peer).size() < pushes) {
            assertTrue(
                    System.currentTimeMillis() < deadline,
                    "push " + pushes + " did not reach the follower: " + pushes(peer));
            Thread.sleep(100);
        }
    }

    @Test
    void activitiesAndFollowersSurviveAKillAndTheNextPushReachesTheFollower() throws Throwable {
        TestDatabase db = TestDatabase.create();
        Path data = tmp.resolve("data");
        Map<String, String> env = Map.of("ATRIUM_PUBLIC_URL", PUBLIC);
        AtriumServer server = AtriumServer.launch(data, db, env);
        AtriumServer restarted = null;
        try (ApPeer peer = new ApPeer(tmp)) {
            User u = server.newUser();
            assertEquals(
                    201,
                    u.http()
                            .post(
                                    "/api/spaces/" + u.defaultSpaceId() + "/repos",
                                    Map.of("name", "kept", "visibility", "public"))
                            .status());
            String owner = u.http()
                    .get("/api/spaces/" + u.defaultSpaceId())
                    .json()
                    .path("space")
                    .path("slug")
                    .asText();
            String actor = PUBLIC + "/ap/repos/" + owner + "/kept";
            String ann = peer.actor("ann");
            String inbox = "/ap/repos/" + owner + "/kept/inbox";
            byte[] follow = ("{\"id\":\"" + peer.base() + "/follows/1\",\"type\":\"Follow\",\"actor\":\"" + ann
                            + "\",\"object\":\"" + actor + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
            String host = server.base().replaceFirst("^https?://", "");
            RawHttp.Response accepted = RawHttp.exchange(
                    server.base(),
                    "127.0.0.1",
                    "POST",
                    inbox,
                    peer.signed("ann", ann + "#main-key", host, inbox, ApPeer.now(), ApPeer.digest(follow)),
                    follow);
            assertEquals(202, accepted.status(), new String(accepted.body(), StandardCharsets.UTF_8));

            GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
            Path work = git.newWorkingCopy(tmp.resolve("w"), "a.txt", "one\n");
            git.ok(work, "push", "-q", server.base() + "/git/" + owner + "/kept.git", "main");
            await(peer, 1);
            JsonNode before = server.anonymous()
                    .get("/ap/repos/" + owner + "/kept/outbox?page=1")
                    .json();
            String key = server.anonymous()
                    .get("/ap/repos/" + owner + "/kept")
                    .json()
                    .get("publicKey")
                    .get("publicKeyPem")
                    .asText();

            server.killHard();
            restarted = AtriumServer.launch(data, db, env);

            JsonNode after = restarted
                    .anonymous()
                    .get("/ap/repos/" + owner + "/kept/outbox?page=1")
                    .json();
            assertEquals(
                    before.get("totalItems").asInt(), after.get("totalItems").asInt());
            assertEquals(
                    before.get("orderedItems"), after.get("orderedItems"), "the same activities under the same ids");
            assertEquals(
                    List.of(ann),
                    List.of(restarted
                            .anonymous()
                            .get("/ap/repos/" + owner + "/kept/followers?page=1")
                            .json()
                            .get("orderedItems")
                            .get(0)
                            .asText()));

            Files.writeString(work.resolve("a.txt"), "two\n");
            git.ok(work, "commit", "-q", "-am", "second");
            String head = git.ok(work, "rev-parse", "HEAD").trim();
            git.ok(work, "push", "-q", restarted.base() + "/git/" + owner + "/kept.git", "main");
            await(peer, 2);
            assertEquals(head, pushes(peer).get(1));
            ApPeer.Received second = null;
            for (ApPeer.Received r : peer.inbox) {
                if (Http.JSON.readTree(r.body()).path("type").asText().equals("Push")) {
                    second = r;
                }
            }
            assertTrue(
                    second.header("Signature").contains("keyId=\"" + actor + "/main-key\""),
                    second.header("Signature"));
            assertTrue(peer.verifies(second, key), "signed with the key the actor had before the restart");
        } finally {
            if (server.process.isAlive()) {
                server.killHard(); // the JVM too, not only the atrium script while it is the JVM's parent
            }
            if (restarted != null) {
                restarted.close();
            } else {
                db.close();
            }
        }
    }
}
