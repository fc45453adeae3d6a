package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Bad input is a 4xx with the spec's error body that says what was wrong, never a 5xx, and changes nothing. */
@SharedServer
class BadInputTest {

    static void assertSpecError(Http.Reply r, int status, String code) {
        assertEquals(status, r.status(), r.body());
        assertTrue(r.json() != null && r.json().size() == 1 && r.json().has("error"), "not the spec body: " + r.body());
        JsonNode error = r.json().get("error");
        assertEquals(code, error.get("code").asText(), r.body());
        assertTrue(
                error.get("message").isTextual()
                        && !error.get("message").asText().isBlank(),
                r.body());
        assertEquals(2, error.size(), r.body());
        assertTrue(r.raw().headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
    }

    private static String snapshot(User u) {
        String space = "/api/spaces/" + u.defaultSpaceId();
        return u.http().get("/api/spaces").body()
                + u.http().get(space + "/memories").body()
                + u.http().get("/api/me/settings").body()
                + u.http().get(space + "/model").body()
                + u.http().get(space + "/common-env").body();
    }

    @Test
    void aMethodAPlainServletDoesNotImplementIs405WithTheSpecBody(AtriumServer server) {
        for (String path : List.of("/healthz", "/admin/console/", "/admin/console/console.js")) {
            for (String method : List.of("PATCH", "FOO")) {
                Http.Reply r =
                        server.operator().send(method, path, method.equals("PATCH") ? "{}" : null, "application/json");
                assertSpecError(r, 405, "METHOD_NOT_ALLOWED");
                assertTrue(r.json().path("error").path("message").asText().contains(method), r.body());
            }
        }
    }

    @Test
    void cxfsOwnServletAndItsServiceListAreNotServed(AtriumServer server) {
        for (String path : List.of("/cxf/services", "/cxf/services/", "/cxf", "/cxf/")) {
            Http.Reply r = server.anonymous().get(path);
            assertEquals(404, r.status(), path + " -> " + r.body());
            assertTrue(!r.body().contains("Service list") && !r.body().contains("RESTful services"), r.body());
        }
        Http.Reply routes = server.operator().get("/admin/routes");
        assertEquals(200, routes.status(), routes.body());
        routes.json()
                .path("routes")
                .forEach(route -> assertTrue(!route.path("path").asText().startsWith("/cxf"), route.toString()));
    }

    @Test
    void malformedJsonWrongTypesAndUnknownValuesAre400AndChangeNothing(AtriumServer server) {
        User u = server.newUser();
        u.http().post("/api/spaces/" + u.defaultSpaceId() + "/memories", Map.of("content", "original"));
        String space = "/api/spaces/" + u.defaultSpaceId();
        String before = snapshot(u);
        List<Http.Reply> replies = List.of(
                u.http().post("/api/spaces", "{\"name\":"),
                u.http().post("/api/spaces", "not json at all"),
                u.http().post("/api/spaces", "[\"a list\"]"),
                u.http().post("/api/spaces", "\"a string\""),
                u.http().post("/api/spaces", ""),
                u.http().post("/api/spaces", Map.of("name", 42)),
                u.http().post("/api/spaces", Map.of("name", List.of("x"))),
                u.http().post("/api/spaces", Map.of("name", "ok", "description", false)),
                u.http().post("/api/spaces", Map.of("name", "ok", "security_posture", "wide_open")),
                u.http().post("/api/spaces", Map.of("name", "")),
                u.http().post("/api/spaces", Map.of("name", "\t \n")),
                u.http().patch(space, "{\"name\": \"x\", }"),
                u.http().patch(space, Map.of("name", Map.of("nested", true))),
                u.http().patch(space, Map.of("security_posture", 1)),
                u.http().patch(space + "/model", Map.of("provider", true)),
                u.http().patch("/api/me/settings", Map.of("auto_update_enabled", "sometimes")),
                u.http().patch("/api/me/settings", Map.of("activity_visibility", "friends")),
                u.http().put(space + "/common-env", Map.of("name", "A")),
                u.http().post(space + "/memories", Map.of("content", "")),
                u.http().post(space + "/memories", Map.of("content", 12)),
                u.http().post(space + "/memories", "{\"content\": \"unterminated}"),
                u.http().post("/api/me/personal-access-tokens", Map.of("name", "t", "scopes", 5)));
        for (Http.Reply r : replies) {
            assertSpecError(r, 400, "BAD_REQUEST");
        }
        assertEquals(before, snapshot(u));
    }

    @Test
    void aBodyOverOneMebibyteIs413AndStoresNothing(AtriumServer server) throws Exception {
        User u = server.newUser();
        String before = snapshot(u);
        String big = "{\"name\":\"" + "x".repeat(1024 * 1024 + 10) + "\"}";
        assertSpecError(u.http().post("/api/spaces", big), 413, "PAYLOAD_TOO_LARGE");
        String memories = "/api/spaces/" + u.defaultSpaceId() + "/memories";
        assertSpecError(
                u.http().post(memories, "{\"content\":\"" + "y".repeat(2 * 1024 * 1024) + "\"}"),
                413,
                "PAYLOAD_TOO_LARGE");

        // chunked, without a Content-Length: refused while reading
        HttpRequest chunked = HttpRequest.newBuilder(URI.create(server.base() + memories))
                .header("Authorization", "Bearer " + tokenOf(u))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() ->
                        new ByteArrayInputStream(("{\"content\":\"" + "z".repeat(1536 * 1024) + "\"}").getBytes())))
                .build();
        HttpResponse<String> r = HttpClient.newHttpClient().send(chunked, HttpResponse.BodyHandlers.ofString());
        assertEquals(413, r.statusCode(), r.body());
        assertEquals(
                "PAYLOAD_TOO_LARGE",
                Http.JSON.readTree(r.body()).path("error").path("code").asText());
        assertEquals(before, snapshot(u));
        assertEquals(
                201,
                u.http().post("/api/spaces", Map.of("name", "n".repeat(100))).status(),
                "a normal body still works");
    }

    private static String tokenOf(User u) {
        return u.http()
                .get("/api/me")
                .raw()
                .request()
                .headers()
                .firstValue("Authorization")
                .orElseThrow()
                .substring(7);
    }

    @Test
    void unknownRoutesAndWrongMethodsAnswerTheSpecBody(AtriumServer server) {
        User u = server.newUser();
        assertSpecError(u.http().get("/api/no-such-thing"), 404, "NOT_FOUND");
        assertSpecError(u.http().get("/api/spaces/" + u.defaultSpaceId() + "/no-such-thing"), 404, "NOT_FOUND");
        assertSpecError(server.anonymous().get("/api/nothing/here"), 404, "NOT_FOUND");
        assertSpecError(server.operator().get("/admin/nothing"), 404, "NOT_FOUND");
        assertSpecError(u.http().put("/api/me", Map.of()), 405, "METHOD_NOT_ALLOWED");
        assertSpecError(u.http().send("DELETE", "/api/spaces", null, "application/json"), 405, "METHOD_NOT_ALLOWED");
        assertSpecError(
                server.anonymous().send("POST", "/healthz", "{}", "application/json"), 405, "METHOD_NOT_ALLOWED");
        assertSpecError(
                u.http().send("POST", "/api/spaces", "name=x", "application/x-www-form-urlencoded"),
                415,
                "UNSUPPORTED_MEDIA_TYPE");
        Http.Reply notFound = u.http().get("/api/no-such-thing");
        assertTrue(
                notFound.json().path("error").path("message").asText().contains("/api/no-such-thing"), notFound.body());
        assertTrue(notFound.raw().headers().firstValue("X-Request-Id").isPresent());
    }
}
