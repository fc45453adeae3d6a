package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

@SharedServer
class MemoriesTest {

    @Test
    void memoriesAreCreatedReadUpdatedAndDeleted(AtriumServer server) {
        User u = server.newUser();
        String base = "/api/spaces/" + u.username() + "/memories";
        Http.Reply created = u.http().post(base, Map.of("content", "  Deploys happen on Tuesdays  "));
        assertEquals(201, created.status(), created.body());
        JsonNode memory = created.get("memory");
        assertEquals(Set.of("id", "space_id", "content", "created_at", "updated_at"), WorkspacesTest.fields(memory));
        assertEquals("Deploys happen on Tuesdays", memory.get("content").asText());
        assertEquals(u.defaultSpaceId(), memory.get("space_id").asText());
        String id = memory.get("id").asText();
        assertEquals(memory, u.http().get("/api/memories/" + id).get("memory"));
        JsonNode updated = u.http()
                .patch("/api/memories/" + id, Map.of("content", "Deploys happen on Thursdays"))
                .get("memory");
        assertEquals("Deploys happen on Thursdays", updated.get("content").asText());
        assertEquals(200, u.http().delete("/api/memories/" + id).status());
        assertEquals(404, u.http().get("/api/memories/" + id).status());
        assertEquals(404, u.http().delete("/api/memories/" + id).status());
    }

    @Test
    void listsArePaginatedNewestFirst(AtriumServer server) {
        User u = server.newUser();
        String base = "/api/spaces/" + u.defaultSpaceId() + "/memories";
        for (int i = 0; i < 25; i++) {
            assertEquals(
                    201, u.http().post(base, Map.of("content", "note " + i)).status());
        }
        JsonNode first = u.http().get(base).json();
        assertEquals(25, first.get("total").asInt());
        assertEquals(20, first.get("memories").size());
        assertEquals("note 24", first.get("memories").get(0).get("content").asText());
        JsonNode last = u.http().get(base + "?limit=10&offset=20").json();
        assertEquals(5, last.get("memories").size());
        assertEquals("note 0", last.get("memories").get(4).get("content").asText());
        assertEquals(400, u.http().get(base + "?offset=-1").status());
        assertEquals(400, u.http().get(base + "?limit=0").status());
    }

    @Test
    void searchUsesPostgresFullTextAndStaysInsideTheWorkspace(AtriumServer server) {
        User u = server.newUser();
        User other = server.newUser();
        String base = "/api/spaces/" + u.defaultSpaceId() + "/memories";
        u.http().post(base, Map.of("content", "The deploy key rotates every Monday"));
        u.http().post(base, Map.of("content", "Lunch is at noon"));
        String otherSpace = other.http()
                .post("/api/spaces", Map.of("name", "elsewhere"))
                .get("space")
                .get("id")
                .asText();
        other.http().post("/api/spaces/" + otherSpace + "/memories", Map.of("content", "rotating keys is a chore"));
        JsonNode hits = u.http().get(base + "/search?q=rotating%20keys").get("memories");
        assertEquals(1, hits.size(), hits.toString());
        assertTrue(hits.get(0).get("content").asText().contains("rotates"));
        assertEquals(0, u.http().get(base + "/search?q=dinner").get("memories").size());
        assertEquals(
                0,
                u.http()
                        .get(base + "/search?q=%22key%20every%22%20-monday")
                        .get("memories")
                        .size());
        assertEquals(400, u.http().get(base + "/search").status());
        assertEquals(400, u.http().get(base + "/search?q=%20").status());
    }
}
