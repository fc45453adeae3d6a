package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * secretRef resources over HTTP: the value goes in through config and never comes out of any route, nor sits in the
 * database in plain text; a new value replaces it; the operator lists and rotates the keys.
 */
@SharedServer
class SecretRefTest {

    @Test
    void aSecretIsWrittenButNeverShownAndIsStoredOnlyEncrypted(AtriumServer server) throws Exception {
        User u = server.newUser();
        String value = "sk_test_" + UUID.randomUUID();
        Http.Reply created = u.http()
                .post(
                        "/api/resources",
                        Map.of("name", "stripe-key", "type", "secretRef", "config", Map.of("value", value)));
        assertEquals(201, created.status(), created.body());
        JsonNode resource = created.get("resource");
        String id = resource.get("id").asText();
        assertEquals("local", resource.get("backend").asText());
        assertEquals(0, resource.get("config").size(), resource.toString());
        assertTrue(resource.get("provider").get("facets").toString().contains("secret"), resource.toString());
        for (String path : new String[] {
            "/api/resources/" + id,
            "/api/resources",
            "/api/resources/by-name/stripe-key",
            "/api/resources/" + id + "/connection",
            "/api/resources/type/secretRef"
        }) {
            Http.Reply r = u.http().get(path);
            assertFalse(r.body().contains(value), path + " shows the secret: " + r.body());
        }
        assertFalse(server.operator().get("/admin/resources/secret-keys").body().contains(value));
        assertFalse(inDatabase(server, value), "the plain value is in the database");

        String second = "sk_test_" + UUID.randomUUID();
        Http.Reply updated = u.http().patch("/api/resources/" + id, Map.of("config", Map.of("value", second)));
        assertEquals(200, updated.status(), updated.body());
        assertFalse(updated.body().contains(second));
        assertFalse(inDatabase(server, second));
    }

    @Test
    void aSecretWithoutAValueOrWithAWrongOneIsRefusedAndNothingIsKept(AtriumServer server) {
        User u = server.newUser();
        BadInputTest.assertSpecError(
                u.http().post("/api/resources", Map.of("name", "empty", "type", "secretRef")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                u.http()
                        .post(
                                "/api/resources",
                                Map.of("name", "number", "type", "secretRef", "config", Map.of("value", 42))),
                400,
                "BAD_REQUEST");
        BadInputTest.assertSpecError(
                u.http()
                        .post(
                                "/api/resources",
                                Map.of("name", "blank", "type", "secretRef", "config", Map.of("value", ""))),
                400,
                "BAD_REQUEST");
        BadInputTest.assertSpecError(
                u.http()
                        .post(
                                "/api/resources",
                                Map.of(
                                        "name",
                                        "huge",
                                        "type",
                                        "secretRef",
                                        "config",
                                        Map.of("value", "x".repeat(70_000)))),
                400,
                "BAD_REQUEST");
        assertEquals(
                0,
                u.http()
                        .get("/api/resources?type=secretRef")
                        .json()
                        .get("resources")
                        .size());
        String id = u.http()
                .post("/api/resources", Map.of("name", "kept", "type", "secretRef", "config", Map.of("value", "v")))
                .get("resource")
                .get("id")
                .asText();
        Http.Reply noValue = u.http().patch("/api/resources/" + id, Map.of("config", Map.of()));
        BadInputTest.assertSpecError(noValue, 400, "BAD_REQUEST");
        assertTrue(noValue.body().contains("config.value"), noValue.body());
    }

    @Test
    void theOperatorListsAndRotatesTheKeysAndNobodyElseMay(AtriumServer server) {
        User u = server.newUser();
        assertEquals(
                201,
                u.http()
                        .post(
                                "/api/resources",
                                Map.of("name", "before-rotation", "type", "secretRef", "config", Map.of("value", "v")))
                        .status());
        JsonNode keys =
                server.operator().get("/admin/resources/secret-keys").json().get("keys");
        assertTrue(keys.size() >= 1, keys.toString());
        String current = keys.get(keys.size() - 1).get("id").asText();
        Http.Reply rotated = server.operator().post("/admin/resources/secret-keys/rotate", Map.of());
        assertEquals(200, rotated.status(), rotated.body());
        assertNotEquals(current, rotated.json().get("key_id").asText());
        JsonNode after =
                server.operator().get("/admin/resources/secret-keys").json().get("keys");
        assertEquals(
                rotated.json().get("key_id").asText(),
                after.get(after.size() - 1).get("id").asText());
        assertTrue(after.get(after.size() - 1).get("current").asBoolean());
        assertFalse(after.toString().contains("\"key\""), "key material is never listed");
        int refused =
                u.http().post("/admin/resources/secret-keys/rotate", Map.of()).status();
        assertTrue(refused == 401 || refused == 403 || refused == 404, "a user rotated the keys: " + refused);
    }

    private static boolean inDatabase(AtriumServer server, String value) throws Exception {
        try (Connection c = server.db.connect();
                PreparedStatement s = c.prepareStatement(
                        "SELECT (SELECT count(*) FROM resources WHERE config::text LIKE ? OR state::text LIKE ?)"
                                + " + (SELECT count(*) FROM resource_secret_values WHERE position(convert_to(?, 'UTF8') in ciphertext) > 0)")) {
            s.setString(1, "%" + value + "%");
            s.setString(2, "%" + value + "%");
            s.setString(3, value);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1) > 0;
            }
        }
    }
}
