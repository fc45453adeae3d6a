package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code vectorize} and {@code analyticsEngine} resources through {@code /api/resources} on the real runtime (the spec
 * gives them no facet routes: they are used through bindings and agent tools, see docs/decisions.md). Their configs
 * are validated, the fixed parts of a vector index cannot change, strangers get the missing-id answer, and a stopped
 * provider makes them answer 503 naming it until it returns.
 */
@SharedServer
class VectorizeAnalyticsResourcesTest {

    @Test
    void vectorizeAndAnalyticsResourcesAreCreatedDescribedAndDeleted(AtriumServer server) {
        User u = server.newUser();
        Http http = u.http();
        Http.Reply created = http.post(
                "/api/resources",
                Map.of(
                        "name",
                        "embeddings",
                        "type",
                        "vectorize",
                        "config",
                        Map.of("dimensions", 3, "metric", "dot", "index", "hnsw")));
        assertEquals(201, created.status(), created.body());
        String hnsw = created.get("resource").get("id").asText();
        JsonNode detail = http.get("/api/resources/" + hnsw).get("resource");
        assertEquals("vectorize", detail.get("type").asText());
        assertEquals("local", detail.get("backend").asText());
        assertEquals("ready", detail.get("status").asText());
        JsonNode info = http.get("/api/resources/" + hnsw + "/connection")
                .get("connection")
                .get("connection");
        assertEquals("hnsw", info.get("index").asText(), info.toString());
        assertEquals(3, info.get("dimensions").asInt());
        assertEquals("dot", info.get("metric").asText());
        assertEquals(0, info.get("vectors").asInt());
        // the server's JVM has JDK 17's Vector API (the atrium script adds the module, the framework boot-delegates
        // it): the bundle computes the HNSW distances with it, and says so
        assertTrue(info.get("scorer").asText().startsWith("simd (jdk.incubator.vector, "), info.toString());

        Http.Reply plain = http.post("/api/resources", Map.of("name", "small", "type", "vectorize"));
        assertEquals(201, plain.status(), plain.body());
        JsonNode defaults = plain.get("resource").get("config");
        assertEquals(384, defaults.get("dimensions").asInt(), plain.body());
        assertEquals("cosine", defaults.get("metric").asText());
        assertEquals("exact", defaults.get("index").asText());

        Http.Reply events = http.post("/api/resources", Map.of("name", "events", "type", "analyticsEngine"));
        assertEquals(201, events.status(), events.body());
        String ae = events.get("resource").get("id").asText();
        assertEquals("postgres", events.get("resource").get("backend").asText());
        assertTrue(http.get("/api/resources/" + ae + "/connection").body().contains("double1"));
        // neither has the SQL, object or kv facet routes
        BadInputTest.assertSpecError(http.get("/api/resources/" + hnsw + "/kv/entries"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(http.get("/api/resources/" + ae + "/sql/tables"), 400, "BAD_REQUEST");

        assertEquals(3, http.get("/api/resources").json().get("total").asInt());
        assertEquals(
                2, http.get("/api/resources/type/vectorize").json().get("total").asInt());
        assertEquals(200, http.delete("/api/resources/" + hnsw).status());
        assertEquals(404, http.get("/api/resources/" + hnsw).status());
        assertEquals(200, http.delete("/api/resources/by-name/small").status());
        assertEquals(200, http.delete("/api/resources/" + ae).status());
        assertEquals(0, http.get("/api/resources").json().get("total").asInt());
    }

    @Test
    void badConfigsAndChangesToAVectorIndexsFixedPartsAreRefusedWithTheSpecBodyAndChangeNothing(AtriumServer server) {
        User u = server.newUser();
        Http http = u.http();
        for (Map<String, Object> config : List.<Map<String, Object>>of(
                Map.of("dimensions", 0),
                Map.of("dimensions", 5000),
                Map.of("dimensions", "three"),
                Map.of("metric", "manhattan"),
                Map.of("index", "ivf"),
                Map.of("shards", 2))) {
            Http.Reply r = http.post("/api/resources", Map.of("name", "bad", "type", "vectorize", "config", config));
            BadInputTest.assertSpecError(r, 400, "BAD_REQUEST");
        }
        BadInputTest.assertSpecError(
                http.post(
                        "/api/resources",
                        Map.of("name", "bad", "type", "analyticsEngine", "config", Map.of("retention", 1))),
                400,
                "BAD_REQUEST");
        assertEquals(0, http.get("/api/resources").json().get("total").asInt());

        String id = http.post(
                        "/api/resources",
                        Map.of("name", "fixed", "type", "vectorize", "config", Map.of("dimensions", 8)))
                .get("resource")
                .get("id")
                .asText();
        Http.Reply change = http.patch("/api/resources/" + id, Map.of("config", Map.of("dimensions", 16)));
        BadInputTest.assertSpecError(change, 400, "BAD_REQUEST");
        assertTrue(change.body().contains("fixed"), change.body());
        assertEquals(
                8,
                http.get("/api/resources/" + id)
                        .get("resource")
                        .get("config")
                        .get("dimensions")
                        .asInt());
    }

    @Test
    void aStrangerGetsTheMissingIdAnswerOnEveryRouteOfTheseResources(AtriumServer server) {
        User owner = server.newUser();
        User stranger = server.newUser();
        String vec = owner.http()
                .post("/api/resources", Map.of("name", "mine", "type", "vectorize"))
                .get("resource")
                .get("id")
                .asText();
        String ae = owner.http()
                .post("/api/resources", Map.of("name", "stats", "type", "analyticsEngine"))
                .get("resource")
                .get("id")
                .asText();
        for (String id : List.of(vec, ae)) {
            Http.Reply missing = stranger.http().get("/api/resources/res_doesnotexist");
            for (Http.Reply r : List.of(
                    stranger.http().get("/api/resources/" + id),
                    stranger.http().get("/api/resources/" + id + "/connection"),
                    stranger.http().patch("/api/resources/" + id, Map.of("name", "taken")),
                    stranger.http().delete("/api/resources/" + id))) {
                BadInputTest.assertSpecError(r, 404, "NOT_FOUND");
                assertEquals(
                        missing.json().get("error").get("code").asText(),
                        r.json().get("error").get("code").asText());
            }
        }
        assertEquals(
                "mine",
                owner.http()
                        .get("/api/resources/" + vec)
                        .get("resource")
                        .get("name")
                        .asText());
    }

    @Test
    void whileTheirProvidersAreStoppedTheResourcesAnswer503NamingThemAndWorkAgainWhenTheyReturn(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        String vec = u.http()
                .post(
                        "/api/resources",
                        Map.of(
                                "name",
                                "vectors",
                                "type",
                                "vectorize",
                                "config",
                                Map.of("index", "hnsw", "dimensions", 4)))
                .get("resource")
                .get("id")
                .asText();
        String ae = u.http()
                .post("/api/resources", Map.of("name", "points", "type", "analyticsEngine"))
                .get("resource")
                .get("id")
                .asText();
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/resource-vectorize/disable", Map.of())
                            .status());
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/resource-analytics/disable", Map.of())
                            .status());
            Http.Reply down = FeatureSwitchTest.await(u.http(), "/api/resources/" + vec + "/connection", 503);
            BadInputTest.assertSpecError(down, 503, "SERVICE_UNAVAILABLE");
            assertTrue(down.json().get("error").get("message").asText().contains("vectorize/local"), down.body());
            Http.Reply aeDown = FeatureSwitchTest.await(u.http(), "/api/resources/" + ae + "/connection", 503);
            assertTrue(
                    aeDown.json().get("error").get("message").asText().contains("analyticsEngine/postgres"),
                    aeDown.body());
            JsonNode detail = u.http().get("/api/resources/" + vec).get("resource");
            assertEquals("provider_missing", detail.get("status").asText());
            assertFalse(detail.get("provider").get("available").asBoolean());
            BadInputTest.assertSpecError(u.http().delete("/api/resources/" + vec), 503, "SERVICE_UNAVAILABLE");
            BadInputTest.assertSpecError(
                    u.http().post("/api/resources", Map.of("name", "later", "type", "vectorize")),
                    503,
                    "SERVICE_UNAVAILABLE");
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/resource-vectorize/enable", Map.of())
                            .status());
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/resource-analytics/enable", Map.of())
                            .status());
        }
        Http.Reply back = FeatureSwitchTest.await(u.http(), "/api/resources/" + vec + "/connection", 200);
        assertEquals(
                "hnsw", back.get("connection").get("connection").get("index").asText(), back.body());
        FeatureSwitchTest.await(u.http(), "/api/resources/" + ae + "/connection", 200);
        assertEquals(200, u.http().delete("/api/resources/" + vec).status());
    }
}
