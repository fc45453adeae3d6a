package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Another Principal's workspace or memory is indistinguishable from a missing one, and only the kernel's proof grants access. */
@SharedServer
class IsolationTest {

    record Call(String method, String path, Object body) {
        Http.Reply send(Http http) {
            return http.send(method, path, body, "application/json");
        }
    }

    static List<Call> workspaceCalls(String space, String memory) {
        List<Call> calls = new ArrayList<>();
        String s = "/api/spaces/" + space;
        calls.add(new Call("GET", s, null));
        calls.add(new Call("PATCH", s, Map.of("name", "taken over")));
        calls.add(new Call("DELETE", s, null));
        calls.add(new Call("GET", s + "/model", null));
        calls.add(new Call("PATCH", s + "/model", Map.of("model", "m")));
        calls.add(new Call("GET", s + "/sidebar-items", null));
        calls.add(new Call("GET", s + "/export", null));
        calls.add(new Call("GET", s + "/members", null));
        calls.add(new Call("POST", s + "/members", Map.of("email", "e@example.org", "role", "admin")));
        calls.add(new Call("GET", s + "/common-env", null));
        calls.add(new Call("PUT", s + "/common-env", Map.of("name", "X", "value", "y")));
        calls.add(new Call("DELETE", s + "/common-env/KEEP", null));
        calls.add(new Call("GET", s + "/memories", null));
        calls.add(new Call("GET", s + "/memories/search?q=secret", null));
        calls.add(new Call("POST", s + "/memories", Map.of("content", "planted")));
        calls.add(new Call("GET", "/api/memories/" + memory, null));
        calls.add(new Call("PATCH", "/api/memories/" + memory, Map.of("content", "changed")));
        calls.add(new Call("DELETE", "/api/memories/" + memory, null));
        return calls;
    }

    @Test
    void aStrangerGetsTheSame404AsForAMissingObjectOnEveryRoute(AtriumServer server) {
        User owner = server.newUser();
        User stranger = server.newUser();
        String space = owner.http()
                .post("/api/spaces", Map.of("name", "private"))
                .get("space")
                .get("id")
                .asText();
        String slug = owner.http()
                .get("/api/spaces/" + space)
                .get("space")
                .get("slug")
                .asText();
        owner.http().put("/api/spaces/" + space + "/common-env", Map.of("name", "KEEP", "value", "v"));
        String memory = owner.http()
                .post("/api/spaces/" + space + "/memories", Map.of("content", "the secret plan"))
                .get("memory")
                .get("id")
                .asText();

        List<Call> missing = workspaceCalls("sp_doesnotexist0000000", "mem_doesnotexist000000");
        for (String ref : List.of(space, slug, owner.defaultSpaceId())) {
            List<Call> foreign = workspaceCalls(ref, memory);
            for (int i = 0; i < foreign.size(); i++) {
                Http.Reply theirs = foreign.get(i).send(stranger.http());
                Http.Reply none = missing.get(i).send(stranger.http());
                assertEquals(404, theirs.status(), foreign.get(i) + " " + theirs.body());
                assertEquals(none.body(), theirs.body(), foreign.get(i).toString());
            }
        }
        assertEquals(
                "the secret plan",
                owner.http()
                        .get("/api/memories/" + memory)
                        .get("memory")
                        .get("content")
                        .asText());
        assertEquals(
                "private",
                owner.http()
                        .get("/api/spaces/" + space)
                        .get("space")
                        .get("name")
                        .asText());
        assertEquals(
                1,
                owner.http()
                        .get("/api/spaces/" + space + "/memories")
                        .get("total")
                        .asInt());
        assertEquals(
                1,
                owner.http()
                        .get("/api/spaces/" + space + "/common-env")
                        .get("variables")
                        .size());
        assertEquals(1, stranger.http().get("/api/spaces").get("total").asInt());
    }

    @Test
    void aForgedWitnessGrantsNothing(AtriumServer server) throws Exception {
        User owner = server.newUser();
        User forger = server.newUser();
        server.db.execute(
                "INSERT INTO owner_witnesses (workspace_id, principal_id) VALUES (?, ?)",
                owner.defaultSpaceId(),
                forger.principalId());
        assertEquals(
                404, forger.http().get("/api/spaces/" + owner.defaultSpaceId()).status());
        assertEquals(
                404,
                forger.http()
                        .get("/api/spaces/" + owner.defaultSpaceId() + "/memories")
                        .status());
        assertEquals(1, forger.http().get("/api/spaces").get("total").asInt());
        assertEquals(
                200, owner.http().get("/api/spaces/" + owner.defaultSpaceId()).status());
    }

    @Test
    void aWitnessThatNoLongerAgreesDeniesTheOwner(AtriumServer server) throws Exception {
        User owner = server.newUser();
        String path = "/api/spaces/" + owner.defaultSpaceId();
        // changes made in the database behind the API: honoured once the access cache hears the trigger's notification
        server.db.execute(
                "UPDATE owner_witnesses SET status = 'suspended' WHERE workspace_id = ?", owner.defaultSpaceId());
        assertEquals(404, soon(owner.http(), path, 404));
        server.db.execute(
                "UPDATE owner_witnesses SET status = 'active' WHERE workspace_id = ?", owner.defaultSpaceId());
        assertEquals(200, soon(owner.http(), path, 200));
        server.db.execute("DELETE FROM owner_witnesses WHERE workspace_id = ?", owner.defaultSpaceId());
        assertEquals(404, soon(owner.http(), path, 404));
        assertEquals(404, owner.http().get(path + "/memories").status());
    }

    @Test
    void aSuspendedWorkspaceIsDenied(AtriumServer server) throws Exception {
        User owner = server.newUser();
        String space = owner.http()
                .post("/api/spaces", Map.of("name", "frozen"))
                .get("space")
                .get("id")
                .asText();
        String memory = owner.http()
                .post("/api/spaces/" + space + "/memories", Map.of("content", "kept"))
                .get("memory")
                .get("id")
                .asText();
        server.db.execute("UPDATE workspaces SET status = 'suspended' WHERE id = ?", space);
        assertEquals(404, soon(owner.http(), "/api/spaces/" + space, 404));
        assertEquals(404, owner.http().get("/api/memories/" + memory).status());
        assertEquals(
                404,
                owner.http()
                        .post("/api/spaces/" + space + "/memories", Map.of("content", "x"))
                        .status());
        server.db.execute("UPDATE workspaces SET status = 'active' WHERE id = ?", space);
        assertEquals(200, soon(owner.http(), "/api/spaces/" + space, 200));
        assertEquals(
                "kept",
                owner.http()
                        .get("/api/memories/" + memory)
                        .get("memory")
                        .get("content")
                        .asText());
    }

    @Test
    void aSuspendedPrincipalIsDenied(AtriumServer server) {
        User u = server.newUser();
        assertEquals(
                200,
                server.operator()
                        .post("/admin/users/" + u.username() + "/suspend", Map.of())
                        .status());
        Http.Reply denied = u.http().get("/api/spaces/" + u.defaultSpaceId());
        assertEquals(401, denied.status());
        assertEquals("UNAUTHORIZED", denied.errorCode());
        assertTrue(
                denied.raw().headers().firstValue("WWW-Authenticate").orElse("").contains("error=\"invalid_token\""),
                denied.raw().headers().map().toString());
        assertEquals(401, u.http().get("/api/me").status());
        assertEquals(
                200,
                server.operator()
                        .post("/admin/users/" + u.username() + "/activate", Map.of())
                        .status());
        assertEquals(200, u.http().get("/api/spaces/" + u.defaultSpaceId()).status());
    }

    /**
     * The status of {@code GET path} once it is {@code expected}, or the last one after a second: a change made in the
     * database rather than through the API reaches the kernel's access cache by a notification, in milliseconds.
     */
    private static int soon(Http http, String path, int expected) throws InterruptedException {
        int status = http.get(path).status();
        for (long until = System.currentTimeMillis() + 1_000;
                status != expected && System.currentTimeMillis() < until; ) {
            Thread.sleep(10);
            status = http.get(path).status();
        }
        return status;
    }
}
