package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * queue resources over /api/resources on the real runtime: PostgreSQL by default, NATS JetStream (127.0.0.1:4222)
 * when named; config validated against the provider's schema; 503 naming the provider while it is gone; a stranger
 * gets the missing-id answer. (The spec gives queues no data routes: they are used through the agent tool and
 * bindings; the provider contract tests cover send/receive/ack on both backends.)
 */
@SharedServer
class QueueResourcesTest {

    private static JsonNode create(User u, Map<String, Object> body) {
        Http.Reply r = u.http().post("/api/resources", body);
        assertEquals(201, r.status(), r.body());
        return r.get("resource");
    }

    @Test
    void aQueueIsOnPostgresByDefaultOnNatsWhenNamedAndItsConfigIsValidated(AtriumServer server) {
        User u = server.newUser();
        JsonNode pg = create(u, Map.of("name", "jobs", "type", "queue"));
        JsonNode pgDetail =
                u.http().get("/api/resources/" + pg.get("id").asText()).get("resource");
        assertEquals("postgres", pgDetail.get("backend").asText());
        assertEquals(5, pgDetail.get("config").get("max_deliveries").asInt(), pgDetail.toString());
        assertTrue(pgDetail.get("provider").get("healthy").asBoolean(), pgDetail.toString());
        assertTrue(pgDetail.get("provider").get("facets").toString().contains("queue"), pgDetail.toString());

        JsonNode nats = create(
                u, Map.of("name", "events", "type", "queue", "backend", "nats", "config", Map.of("max_deliveries", 3)));
        String id = nats.get("id").asText();
        JsonNode detail = u.http().get("/api/resources/" + id).get("resource");
        assertEquals("nats", detail.get("backend").asText());
        assertEquals(3, detail.get("config").get("max_deliveries").asInt());
        assertTrue(detail.get("provider").get("healthy").asBoolean(), detail.toString());
        Http.Reply connection = u.http().get("/api/resources/" + id + "/connection");
        assertEquals(200, connection.status(), connection.body());
        assertTrue(connection.body().contains("nats"), connection.body());

        Http.Reply changed = u.http().patch("/api/resources/" + id, Map.of("config", Map.of("max_deliveries", 7)));
        assertEquals(200, changed.status(), changed.body());
        assertEquals(
                7,
                u.http()
                        .get("/api/resources/" + id)
                        .get("resource")
                        .get("config")
                        .get("max_deliveries")
                        .asInt());

        int before = u.http().get("/api/resources").get("resources").size();
        for (Object config : List.of(
                Map.of("max_deliveries", 0),
                Map.of("max_deliveries", "3"),
                Map.of("visibility", 5),
                Map.of("max_message_bytes", 2_000_000))) {
            Http.Reply bad = u.http()
                    .post(
                            "/api/resources",
                            Map.of("name", "bad-" + UUID.randomUUID(), "type", "queue", "config", config));
            BadInputTest.assertSpecError(bad, 400, "BAD_REQUEST");
            Http.Reply badUpdate = u.http().patch("/api/resources/" + id, Map.of("config", config));
            BadInputTest.assertSpecError(badUpdate, 400, "BAD_REQUEST");
        }
        assertEquals(before, u.http().get("/api/resources").get("resources").size(), "no bad queue was stored");
        assertEquals(
                7,
                u.http()
                        .get("/api/resources/" + id)
                        .get("resource")
                        .get("config")
                        .get("max_deliveries")
                        .asInt());

        assertEquals(200, u.http().delete("/api/resources/" + id).status());
        assertEquals(404, u.http().get("/api/resources/" + id).status());
    }

    @Test
    void aNatsQueueAnswers503NamingItsProviderWhileItIsDisabledAndWorksAgainAfter(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        String id = create(u, Map.of("name", "durable", "type", "queue", "backend", "nats"))
                .get("id")
                .asText();
        String onPostgres = "/api/resources/"
                + create(u, Map.of("name", "alongside", "type", "queue"))
                        .get("id")
                        .asText() + "/connection";
        String connection = "/api/resources/" + id + "/connection";
        assertEquals(200, u.http().get(connection).status());
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/resource-queue-nats/disable", Map.of())
                            .status());
            Http.Reply down = FeatureSwitchTest.await(u.http(), connection, 503);
            BadInputTest.assertSpecError(down, 503, "SERVICE_UNAVAILABLE");
            assertTrue(down.json().get("error").get("message").asText().contains("queue/nats"), down.body());
            JsonNode detail = u.http().get("/api/resources/" + id).get("resource");
            assertEquals("provider_missing", detail.get("status").asText(), detail.toString());
            assertEquals(200, u.http().get(onPostgres).status(), "queues on PostgreSQL go on");
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/resource-queue-nats/enable", Map.of())
                            .status());
        }
        assertEquals(200, FeatureSwitchTest.await(u.http(), connection, 200).status());
        assertEquals(
                "ready",
                u.http()
                        .get("/api/resources/" + id)
                        .get("resource")
                        .get("status")
                        .asText());
    }

    @Test
    void aStrangerGetsTheMissingIdAnswerForAQueueAndChangesNothing(AtriumServer server) {
        User a = server.newUser();
        User b = server.newUser();
        String id = create(a, Map.of("name", "private-queue", "type", "queue", "backend", "nats"))
                .get("id")
                .asText();
        String missing = "res_" + "x".repeat(20);
        for (String[] route : List.of(
                new String[] {"GET", ""},
                new String[] {"GET", "/connection"},
                new String[] {"PATCH", "", "{\"config\":{\"max_deliveries\":9}}"},
                new String[] {"DELETE", ""},
                new String[] {"GET", "/tokens"},
                new String[] {"GET", "/access"})) {
            String body = route.length > 2 ? route[2] : null;
            Http.Reply onA = b.http().send(route[0], "/api/resources/" + id + route[1], body, "application/json");
            Http.Reply onMissing =
                    b.http().send(route[0], "/api/resources/" + missing + route[1], body, "application/json");
            assertEquals(404, onA.status(), route[0] + " " + route[1] + ": " + onA.body());
            assertEquals(onMissing.body().replace(missing, id), onA.body(), route[0] + " " + route[1]);
        }
        assertEquals(404, b.http().get("/api/resources/by-name/private-queue").status());
        JsonNode detail = a.http().get("/api/resources/" + id).get("resource");
        assertEquals(5, detail.get("config").get("max_deliveries").asInt(), "the stranger's PATCH changed nothing");
    }
}
