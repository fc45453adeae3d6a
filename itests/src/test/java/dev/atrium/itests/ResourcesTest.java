package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code /api/resources…} on the real runtime: kv on PostgreSQL and r2 on the filesystem BlobStore, persisted by the
 * core with EclipseLink JPA. Strangers get the missing-id answer everywhere, tokens are held to their permission,
 * grants work only between one Principal's workspaces and stop at once when revoked, bad input changes nothing, and a
 * resource whose provider stops answers 503 naming it and works again when it is back.
 */
@SharedServer
class ResourcesTest {

    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static String create(User u, String name, String type) {
        Http.Reply r = u.http().post("/api/resources", Map.of("name", name, "type", type));
        assertEquals(201, r.status(), r.body());
        return r.get("resource").get("id").asText();
    }

    /** A new service of {@code u} in {@code spaceId} (no deployment: binding needs none). */
    static String service(User u, String name, String spaceId) {
        Http.Reply r = u.http().post("/api/services", Map.of("name", name, "space_id", spaceId));
        assertEquals(201, r.status(), r.body());
        return r.get("service").get("id").asText();
    }

    /** What the database holds for a service: its binding rows and its config revision (each redeploy bumps it). */
    static List<Long> bindingRowsAndRevision(AtriumServer server, String serviceId) throws Exception {
        try (java.sql.Connection c = server.db.connect();
                java.sql.PreparedStatement ps =
                        c.prepareStatement("SELECT (SELECT count(*) FROM resource_bindings WHERE service_id = ?),"
                                + " (SELECT config_revision FROM services WHERE id = ?)")) {
            ps.setString(1, serviceId);
            ps.setString(2, serviceId);
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                rs.next();
                return List.of(rs.getLong(1), rs.getLong(2));
            }
        }
    }

    static Http.Reply putBytes(Http http, String path, String value) {
        return http.send("PUT", path, value.getBytes(StandardCharsets.UTF_8), "application/octet-stream");
    }

    /** A request authenticated only by a resource token (no Authorization header). */
    static HttpResponse<String> withToken(AtriumServer server, String method, String path, String token, String body)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.base() + path))
                .header("X-Resource-Token", token)
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/octet-stream");
        }
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void anObjectIsServedSoThatABrowserNeverRunsItOnTheApiOrigin(AtriumServer server) {
        User u = server.newUser();
        String objects = "/api/resources/" + create(u, "pages", "r2") + "/objects";
        Http http = u.http();
        assertEquals(
                200,
                http.send(
                                "PUT",
                                objects + "/site/evil.html",
                                "<script>alert(1)</script>".getBytes(StandardCharsets.UTF_8),
                                "text/html")
                        .status());
        assertEquals(
                200,
                http.send("PUT", objects + "/notes.txt", "plain".getBytes(StandardCharsets.UTF_8), "text/plain")
                        .status());
        var html = http.get(objects + "/site/evil.html").raw().headers();
        assertEquals("nosniff", html.firstValue("X-Content-Type-Options").orElse(null));
        assertEquals(
                "default-src 'none'; sandbox",
                html.firstValue("Content-Security-Policy").orElse(null));
        assertEquals(
                "attachment; filename=\"evil.html\"; filename*=UTF-8''evil.html",
                html.firstValue("Content-Disposition").orElse(null));
        var text = http.get(objects + "/notes.txt").raw().headers();
        assertEquals("nosniff", text.firstValue("X-Content-Type-Options").orElse(null));
        assertTrue(
                text.firstValue("Content-Disposition").orElse("").startsWith("inline;"),
                text.map().toString());
    }

    @Test
    void kvAndR2ResourcesAreCreatedUsedListedRenamedAndDeleted(AtriumServer server) {
        User u = server.newUser();
        Http http = u.http();
        String kv = create(u, "cache", "kv");
        JsonNode detail = http.get("/api/resources/" + kv).get("resource");
        assertEquals("kv", detail.get("type").asText());
        assertEquals("postgres", detail.get("backend").asText());
        assertEquals(u.defaultSpaceId(), detail.get("space_id").asText());
        assertEquals("ready", detail.get("status").asText());
        assertTrue(detail.get("access").isArray() && detail.get("bindings").isArray(), detail.toString());

        String entries = "/api/resources/" + kv + "/kv/entries";
        assertEquals(200, putBytes(http, entries + "/users/1", "ada").status());
        assertEquals(200, putBytes(http, entries + "/users/2", "grace").status());
        assertEquals(200, putBytes(http, entries + "/other", "x").status());
        assertEquals(
                200,
                putBytes(http, entries + "/users/3?expiration_ttl=3600", "ttl").status());
        assertEquals("ada", http.get(entries + "/users/1").body());
        JsonNode page = http.get(entries + "?prefix=users/&limit=2").json();
        assertEquals(List.of("users/1", "users/2"), names(page.get("keys")));
        assertFalse(page.get("list_complete").asBoolean());
        JsonNode rest = http.get(entries + "?prefix=users/&limit=2&cursor="
                        + page.get("cursor").asText())
                .json();
        assertEquals(List.of("users/3"), names(rest.get("keys")));
        assertTrue(rest.get("keys").get(0).get("expires_at").isTextual());
        assertTrue(rest.get("list_complete").asBoolean());
        assertEquals(200, http.delete(entries + "/users/1").status());
        assertEquals(404, http.get(entries + "/users/1").status());
        assertEquals(404, http.delete(entries + "/users/1").status());

        String r2 = create(u, "files", "r2");
        String objects = "/api/resources/" + r2 + "/objects";
        Http.Reply put =
                http.send("PUT", objects + "/docs/a.txt", "hello world".getBytes(StandardCharsets.UTF_8), "text/plain");
        assertEquals(200, put.status(), put.body());
        assertEquals(11, put.get("object").get("size").asInt());
        assertEquals("hello world", http.get(objects + "/docs/a.txt").body());
        assertEquals(
                List.of("docs/a.txt"),
                http.get(objects + "?prefix=docs/").json().get("objects").findValuesAsText("key"));
        assertEquals(
                1,
                http.get("/api/resources/" + r2 + "/objects-stats")
                        .json()
                        .get("stats")
                        .get("object_count")
                        .asInt());
        // a kv resource has no object routes, an r2 one no kv routes
        BadInputTest.assertSpecError(http.get("/api/resources/" + kv + "/objects"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(http.get("/api/resources/" + r2 + "/kv/entries"), 400, "BAD_REQUEST");

        assertEquals(
                2,
                http.get("/api/resources?space_id=" + u.defaultSpaceId())
                        .json()
                        .get("total")
                        .asInt());
        assertEquals(1, http.get("/api/resources/type/r2").json().get("total").asInt());
        assertEquals(
                kv,
                http.get("/api/resources/by-name/cache")
                        .get("resource")
                        .get("id")
                        .asText());
        assertEquals(
                "kv",
                http.get("/api/resources/by-name/cache/connection")
                        .get("connection")
                        .get("type")
                        .asText());
        assertEquals(
                kv,
                http.get("/api/resources/" + kv + "/connection")
                        .get("connection")
                        .get("resource_id")
                        .asText());

        String web = service(u, "web", u.defaultSpaceId());
        assertEquals(
                201,
                http.post("/api/resources/" + kv + "/bind", Map.of("service_id", web, "binding", "CACHE"))
                        .status());
        assertEquals(
                "CACHE",
                http.get("/api/resources/" + kv)
                        .get("resource")
                        .get("bindings")
                        .get(0)
                        .get("binding")
                        .asText());
        assertEquals(
                200, http.delete("/api/resources/by-name/cache/bind/" + web).status());
        assertEquals(404, http.delete("/api/resources/" + kv + "/bind/" + web).status());

        JsonNode renamed =
                http.patch("/api/resources/" + kv, Map.of("name", "sessions")).get("resource");
        assertEquals("sessions", renamed.get("name").asText());
        assertEquals(404, http.get("/api/resources/by-name/cache").status());
        BadInputTest.assertSpecError(
                http.post("/api/resources", Map.of("name", "files", "type", "kv")), 409, "CONFLICT");

        assertEquals(200, http.delete("/api/resources/by-name/files").status());
        assertEquals(404, http.get("/api/resources/" + r2).status());
        assertEquals(200, http.delete("/api/resources/" + kv).status());
        assertEquals(0, http.get("/api/resources").json().get("total").asInt());
    }

    /** What a user's resources hold, without the usage counters (reads move them). */
    private static String state(User u, String id) {
        return (u.http().get("/api/resources").body()
                        + u.http().get("/api/resources/" + id).body()
                        + u.http().get("/api/resources/" + id + "/kv/entries").body()
                        + u.http().get("/api/resources/" + id + "/access").body()
                        + u.http().get("/api/resources/" + id + "/tokens").body())
                .replaceAll("\"usage\":\\{[^}]*}", "");
    }

    /**
     * The kv contract every kv backend passes, over HTTP: put/get/replace, prefix listing with cursors in key order,
     * TTLs (a live entry shows its expiry), delete of a live and of a missing key, keys with '/', spaces and non-ASCII.
     */
    static void kvContract(Http http, String id) {
        String entries = "/api/resources/" + id + "/kv/entries";
        for (String key : List.of("b/2", "b/1", "a", "b/3", "c d", "b/\u00e9t\u00e9")) {
            assertEquals(
                    200,
                    putBytes(
                                    http,
                                    entries + "/"
                                            + java.net.URLEncoder.encode(key, StandardCharsets.UTF_8)
                                                    .replace("+", "%20")
                                                    .replace("%2F", "/"),
                                    "v:" + key)
                            .status(),
                    key);
        }
        assertEquals("v:a", http.get(entries + "/a").body());
        assertEquals(200, putBytes(http, entries + "/a", "replaced").status());
        assertEquals("replaced", http.get(entries + "/a").body());
        assertEquals("v:c d", http.get(entries + "/c%20d").body());
        JsonNode first = http.get(entries + "?prefix=b/&limit=2").json();
        assertEquals(List.of("b/1", "b/2"), names(first.get("keys")));
        assertFalse(first.get("list_complete").asBoolean());
        JsonNode second = http.get(entries + "?prefix=b/&limit=2&cursor="
                        + first.get("cursor").asText())
                .json();
        assertEquals(List.of("b/3", "b/\u00e9t\u00e9"), names(second.get("keys")));
        assertTrue(second.get("list_complete").asBoolean(), second.toString());
        assertEquals(
                List.of("a", "b/1", "b/2", "b/3", "b/\u00e9t\u00e9", "c d"),
                names(http.get(entries).json().get("keys")));
        assertEquals(
                200, putBytes(http, entries + "/ttl?expiration_ttl=3600", "t").status());
        JsonNode ttl = http.get(entries + "?prefix=ttl").json().get("keys").get(0);
        assertTrue(
                java.time.Instant.parse(ttl.get("expires_at").asText())
                        .isAfter(java.time.Instant.now().plusSeconds(3000)),
                ttl.toString());
        assertEquals(200, http.delete(entries + "/ttl").status());
        assertEquals(404, http.delete(entries + "/ttl").status());
        assertEquals(404, http.get(entries + "/ttl").status());
        assertEquals(404, http.get(entries + "/never-written").status());
    }

    @Test
    void theKvContractHoldsOnPostgres(AtriumServer server) {
        User u = server.newUser();
        kvContract(u.http(), create(u, "contract-pg", "kv"));
    }

    @Test
    void theKvContractHoldsOnRedisWhichIsChosenPerResource(AtriumServer server) {
        User u = server.newUser();
        Http.Reply created =
                u.http().post("/api/resources", Map.of("name", "contract-redis", "type", "kv", "backend", "redis"));
        assertEquals(201, created.status(), created.body());
        String id = created.get("resource").get("id").asText();
        JsonNode detail = u.http().get("/api/resources/" + id).get("resource");
        assertEquals("redis", detail.get("backend").asText());
        assertTrue(detail.get("provider").get("healthy").asBoolean(), detail.toString());
        kvContract(u.http(), id);
        // PostgreSQL stays the default backend: the operator ranks Redis higher to change that
        assertEquals(
                "postgres",
                u.http()
                        .get("/api/resources/" + create(u, "default-backend", "kv"))
                        .get("resource")
                        .get("backend")
                        .asText());
        // a stranger gets what a missing resource gets
        User stranger = server.newUser();
        Http.Reply theirs = stranger.http().get("/api/resources/" + id + "/kv/entries/a");
        Http.Reply missing = stranger.http().get("/api/resources/" + java.util.UUID.randomUUID() + "/kv/entries/a");
        assertEquals(404, theirs.status(), theirs.body());
        assertEquals(missing.json().get("error"), theirs.json().get("error"));
    }

    @Test
    void aRedisKvResourceAnswers503WhileItsBackendIsDisabledAndPostgresResourcesGoOn(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        Http.Reply created =
                u.http().post("/api/resources", Map.of("name", "redis-durable", "type", "kv", "backend", "redis"));
        assertEquals(201, created.status(), created.body());
        String onRedis = "/api/resources/" + created.get("resource").get("id").asText() + "/kv/entries/k";
        String onPostgres = "/api/resources/" + create(u, "pg-alongside", "kv") + "/kv/entries/k";
        assertEquals(200, putBytes(u.http(), onRedis, "kept in redis").status());
        assertEquals(200, putBytes(u.http(), onPostgres, "kept in postgres").status());
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/resource-kv-redis/disable", Map.of())
                            .status());
            Http.Reply down = FeatureSwitchTest.await(u.http(), onRedis, 503);
            BadInputTest.assertSpecError(down, 503, "SERVICE_UNAVAILABLE");
            assertTrue(down.json().get("error").get("message").asText().contains("kv/redis"), down.body());
            assertEquals("kept in postgres", u.http().get(onPostgres).body());
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/resource-kv-redis/enable", Map.of())
                            .status());
        }
        assertEquals(
                "kept in redis", FeatureSwitchTest.await(u.http(), onRedis, 200).body());
    }

    private static List<String> names(JsonNode keys) {
        return keys.findValuesAsText("name");
    }

    @Test
    void aStrangerGetsTheMissingIdAnswerOnEveryRouteAndChangesNothing(AtriumServer server) {
        User a = server.newUser();
        User b = server.newUser();
        String kv = create(a, "secret-kv", "kv");
        String r2 = create(a, "secret-r2", "r2");
        String d1 = create(a, "secret-d1", "d1");
        assertEquals(
                200,
                putBytes(a.http(), "/api/resources/" + kv + "/kv/entries/k", "v")
                        .status());
        String token = a.http()
                .post("/api/resources/" + kv + "/tokens", Map.of("permission", "read"))
                .get("token")
                .get("id")
                .asText();
        String before = state(a, kv);
        for (String id : List.of(kv, r2, d1)) {
            String missing = "res_" + "x".repeat(20);
            for (String[] route : routes(token, a.defaultSpaceId())) {
                // a well-formed body, so that nothing but the resource's owner decides the answer
                String body = route.length > 2 ? route[2] : route[0].matches("POST|PUT|PATCH") ? "{}" : null;
                Http.Reply onA = b.http().send(route[0], "/api/resources/" + id + route[1], body, "application/json");
                Http.Reply onMissing =
                        b.http().send(route[0], "/api/resources/" + missing + route[1], body, "application/json");
                assertEquals(404, onA.status(), route[0] + " " + route[1] + ": " + onA.body());
                assertEquals(onMissing.body().replace(missing, id), onA.body(), route[0] + " " + route[1]);
            }
        }
        for (String path : List.of(
                "/api/resources/by-name/secret-kv",
                "/api/resources/by-name/secret-kv/tokens",
                "/api/resources/by-name/secret-kv/connection")) {
            assertEquals(404, b.http().get(path).status(), path);
        }
        assertEquals(404, b.http().delete("/api/resources/by-name/secret-kv").status());
        assertEquals(
                404, b.http().get("/api/resources/shared/" + a.defaultSpaceId()).status());
        assertEquals(
                404,
                b.http().get("/api/resources?space_id=" + a.defaultSpaceId()).status());
        assertEquals(0, b.http().get("/api/resources").json().get("total").asInt());
        assertEquals(before, state(a, kv));
    }

    /** Every route under {@code /api/resources/:id}, with a body-less or empty-object request. */
    private static List<String[]> routes(String tokenId, String spaceId) {
        return List.of(
                new String[] {"GET", ""},
                new String[] {"PATCH", "", "{\"name\":\"taken-over\"}"},
                new String[] {"DELETE", ""},
                new String[] {"GET", "/access"},
                new String[] {"POST", "/access", "{\"space_id\":\"" + spaceId + "\",\"permission\":\"admin\"}"},
                new String[] {"DELETE", "/access/" + spaceId},
                new String[] {"POST", "/bind", "{\"service_id\":\"svc_x\"}"},
                new String[] {"DELETE", "/bind/svc_x"},
                new String[] {"GET", "/tokens"},
                new String[] {"POST", "/tokens"},
                new String[] {"DELETE", "/tokens/" + tokenId},
                new String[] {"GET", "/connection"},
                new String[] {"GET", "/sql/tables"},
                new String[] {"GET", "/sql/tables/t"},
                new String[] {"POST", "/sql/query", "{\"sql\":\"select 1\"}"},
                new String[] {"POST", "/sql/export"},
                new String[] {"GET", "/objects"},
                new String[] {"GET", "/objects-stats"},
                new String[] {"GET", "/objects/k"},
                new String[] {"PUT", "/objects/k"},
                new String[] {"DELETE", "/objects/k"},
                new String[] {"GET", "/kv/entries"},
                new String[] {"GET", "/kv/entries/k"},
                new String[] {"PUT", "/kv/entries/k"},
                new String[] {"DELETE", "/kv/entries/k"});
    }

    @Test
    void aStrangersBindToAnotherPrincipalsServiceIsTheMissingServiceAnswerAndStoresNothing(AtriumServer server)
            throws Exception {
        User victim = server.newUser();
        String theirs = service(victim, "victim-web", victim.defaultSpaceId());
        User stranger = server.newUser();
        String mine = create(stranger, "bait", "kv");
        List<Long> before = bindingRowsAndRevision(server, theirs);
        String missing = "svc_" + Long.toString(System.nanoTime(), 36);

        Http.Reply toTheirs =
                stranger.http().post("/api/resources/" + mine + "/bind", Map.of("service_id", theirs, "binding", "X"));
        Http.Reply toMissing =
                stranger.http().post("/api/resources/" + mine + "/bind", Map.of("service_id", missing, "binding", "X"));
        BadInputTest.assertSpecError(toTheirs, 404, "NOT_FOUND");
        assertEquals(toMissing.status(), toTheirs.status());
        assertEquals(toMissing.body(), toTheirs.body(), "another's service and a missing one answer alike");
        Http.Reply unbindTheirs = stranger.http().delete("/api/resources/" + mine + "/bind/" + theirs);
        Http.Reply unbindMissing = stranger.http().delete("/api/resources/" + mine + "/bind/" + missing);
        BadInputTest.assertSpecError(unbindTheirs, 404, "NOT_FOUND");
        assertEquals(unbindMissing.body(), unbindTheirs.body());
        BadInputTest.assertSpecError(
                stranger.http().delete("/api/resources/by-name/bait/bind/" + theirs), 404, "NOT_FOUND");

        assertEquals(
                before,
                bindingRowsAndRevision(server, theirs),
                "no binding row, no new revision (no redeploy) of the victim's service");
        assertEquals(0L, bindingRowsAndRevision(server, missing).get(0), "no dangling row for a missing service");
        assertEquals(
                0,
                stranger.http()
                        .get("/api/resources/" + mine)
                        .get("resource")
                        .get("bindings")
                        .size());
        assertEquals(
                0,
                victim.http()
                        .get("/api/services/" + theirs + "/bindings")
                        .json()
                        .get("bindings")
                        .size());
    }

    @Test
    void aResourceBindsToItsOwnersServiceOfItsWorkspaceOrOfAWorkspaceItGrants(AtriumServer server) throws Exception {
        User u = server.newUser();
        Http http = u.http();
        String kv = create(u, "shared-cache", "kv");
        String second = http.post("/api/spaces", Map.of("name", "elsewhere"))
                .get("space")
                .get("id")
                .asText();
        String local = service(u, "local-web", u.defaultSpaceId());
        String remote = service(u, "remote-web", second);

        long revision = bindingRowsAndRevision(server, local).get(1);
        assertEquals(
                201,
                http.post("/api/resources/" + kv + "/bind", Map.of("service_id", local))
                        .status());
        assertEquals(
                List.of(1L, revision + 1),
                bindingRowsAndRevision(server, local),
                "bound, and the service gets a new revision");
        // a service of another workspace of the same owner: only once that workspace holds a grant, else its code could
        // not use it
        List<Long> before = bindingRowsAndRevision(server, remote);
        BadInputTest.assertSpecError(
                http.post("/api/resources/" + kv + "/bind", Map.of("service_id", remote)), 400, "BAD_REQUEST");
        assertEquals(before, bindingRowsAndRevision(server, remote));
        assertEquals(
                201,
                http.post("/api/resources/" + kv + "/access", Map.of("space_id", second, "permission", "read"))
                        .status());
        assertEquals(
                201,
                http.post("/api/resources/" + kv + "/bind", Map.of("service_id", remote))
                        .status());
        assertEquals(
                "SHARED_CACHE",
                u.http()
                        .get("/api/services/" + remote + "/bindings")
                        .json()
                        .get("bindings")
                        .get(0)
                        .get("name")
                        .asText());

        BadInputTest.assertSpecError(
                http.post("/api/resources/" + kv + "/bind", Map.of("service_id", "svc_nobody")), 404, "NOT_FOUND");
        assertEquals(200, http.delete("/api/resources/" + kv + "/bind/" + local).status());
        assertEquals(
                200, http.delete("/api/resources/" + kv + "/bind/" + remote).status());
    }

    @Test
    void aReadTokenReadsButCannotWriteAndAWriteTokenWritesOnlyItsResource(AtriumServer server) throws Exception {
        User u = server.newUser();
        String kv = create(u, "tokened", "kv");
        String other = create(u, "untouched", "kv");
        String entries = "/api/resources/" + kv + "/kv/entries";
        assertEquals(200, putBytes(u.http(), entries + "/k", "v1").status());
        JsonNode read = u.http()
                .post("/api/resources/" + kv + "/tokens", Map.of("name", "reader", "permission", "read"))
                .get("token");
        String secret = read.get("token").asText();
        assertTrue(secret.startsWith("ark_"), secret);
        // shown once: the listing has no secret
        JsonNode listed = u.http().get("/api/resources/" + kv + "/tokens").get("tokens");
        assertEquals(1, listed.size());
        assertFalse(listed.toString().contains(secret));

        assertEquals(200, withToken(server, "GET", entries + "/k", secret, null).statusCode());
        HttpResponse<String> write = withToken(server, "PUT", entries + "/k", secret, "v2");
        assertEquals(403, write.statusCode(), write.body());
        assertEquals(
                403, withToken(server, "DELETE", entries + "/k", secret, null).statusCode());
        assertEquals("v1", u.http().get(entries + "/k").body());
        // a token reaches only its own resource, nothing else of the account
        assertEquals(
                404,
                withToken(server, "GET", "/api/resources/" + other + "/kv/entries", secret, null)
                        .statusCode());
        assertEquals(
                401,
                withToken(server, "GET", "/api/resources/" + kv, secret, null).statusCode());
        assertEquals(401, withToken(server, "GET", "/api/spaces", secret, null).statusCode());

        String writer = u.http()
                .post("/api/resources/by-name/tokened/tokens", Map.of("permission", "write"))
                .get("token")
                .get("token")
                .asText();
        assertEquals(200, withToken(server, "PUT", entries + "/k", writer, "v2").statusCode());
        assertEquals("v2", u.http().get(entries + "/k").body());

        assertEquals(
                200,
                u.http()
                        .delete("/api/resources/" + kv + "/tokens/"
                                + read.get("id").asText())
                        .status());
        assertEquals(401, withToken(server, "GET", entries + "/k", secret, null).statusCode());
        assertEquals(
                401,
                withToken(server, "GET", entries + "/k", "ark_nonsense", null).statusCode());
    }

    @Test
    void aGrantToTheOwnersSecondWorkspaceLetsItReadAndRevokingStopsThatAtOnce(AtriumServer server) {
        User u = server.newUser();
        User stranger = server.newUser();
        String second = u.http()
                .post("/api/spaces", Map.of("name", "second"))
                .get("space")
                .get("id")
                .asText();
        String kv = create(u, "shared-kv", "kv");
        String entry = "/api/resources/" + kv + "/kv/entries/k";
        assertEquals(200, putBytes(u.http(), entry, "v").status());

        assertEquals(404, u.http().get(entry + "?space_id=" + second).status(), "no grant yet");
        Http.Reply granted =
                u.http().post("/api/resources/" + kv + "/access", Map.of("space_id", second, "permission", "read"));
        assertEquals(201, granted.status(), granted.body());
        assertEquals("v", u.http().get(entry + "?space_id=" + second).body());
        BadInputTest.assertSpecError(putBytes(u.http(), entry + "?space_id=" + second, "w"), 403, "FORBIDDEN");
        JsonNode shared = u.http().get("/api/resources/shared/" + second).json();
        assertEquals(1, shared.get("total").asInt());
        assertEquals("read", shared.get("resources").get(0).get("permission").asText());
        assertEquals(
                List.of(second),
                u.http().get("/api/resources/" + kv + "/access").get("access").findValuesAsText("space_id"));

        assertEquals(
                200,
                u.http().delete("/api/resources/" + kv + "/access/" + second).status());
        assertEquals(404, u.http().get(entry + "?space_id=" + second).status(), "revoked: refused at once");
        assertEquals(
                0,
                u.http()
                        .get("/api/resources/shared/" + second)
                        .json()
                        .get("total")
                        .asInt());

        // single authority: another Principal's workspace can never be granted
        String theirs = stranger.defaultSpaceId();
        BadInputTest.assertSpecError(
                u.http().post("/api/resources/" + kv + "/access", Map.of("space_id", theirs, "permission", "read")),
                404,
                "NOT_FOUND");
        assertEquals(
                0,
                u.http().get("/api/resources/" + kv + "/access").get("access").size());
        assertEquals(404, stranger.http().get(entry + "?space_id=" + theirs).status());
    }

    @Test
    void badInputIsA4xxSpecErrorAndChangesNothing(AtriumServer server) {
        User u = server.newUser();
        String kv = create(u, "steady", "kv");
        String before = state(u, kv);
        Http http = u.http();
        BadInputTest.assertSpecError(http.post("/api/resources", Map.of("type", "kv")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                http.post("/api/resources", Map.of("name", "../x", "type", "kv")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                http.post("/api/resources", Map.of("name", "ok", "type", "no-such-type")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                http.post("/api/resources", Map.of("name", "ok", "type", "kv", "backend", "nope")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                http.post("/api/resources", Map.of("name", "ok", "type", "kv", "config", Map.of("x", 1))),
                400,
                "BAD_REQUEST");
        BadInputTest.assertSpecError(
                http.post("/api/resources", Map.of("name", "ok", "type", "kv", "config", "text")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(http.post("/api/resources", "{not json"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(http.patch("/api/resources/" + kv, Map.of("type", "r2")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(http.patch("/api/resources/" + kv, Map.of("name", "")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                http.post(
                        "/api/resources/" + kv + "/access",
                        Map.of("space_id", u.defaultSpaceId(), "permission", "root")),
                400,
                "BAD_REQUEST");
        BadInputTest.assertSpecError(
                http.post(
                        "/api/resources/" + kv + "/access",
                        Map.of("space_id", u.defaultSpaceId(), "permission", "read")),
                400,
                "BAD_REQUEST");
        BadInputTest.assertSpecError(
                http.post("/api/resources/" + kv + "/bind", Map.of("service_id", "a b")), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                http.post("/api/resources/" + kv + "/tokens", Map.of("permission", "owner")), 400, "BAD_REQUEST");
        String entries = "/api/resources/" + kv + "/kv/entries";
        BadInputTest.assertSpecError(putBytes(http, entries + "/k?expiration_ttl=soon", "v"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(putBytes(http, entries + "/k?expiration_ttl=0", "v"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(putBytes(http, entries + "/" + "k".repeat(600), "v"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(http.get(entries + "?limit=0"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(http.get(entries + "?cursor=!!!"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(http.get("/api/resources?limit=500"), 400, "BAD_REQUEST");
        assertEquals(0, http.get(entries).json().get("keys").size());
        assertEquals(before, state(u, kv));
    }

    @Test
    void aResourceWhoseProviderStopsAnswers503NamingItKeepsItsDataAndWorksWhenItReturns(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        String kv = create(u, "durable", "kv");
        String entry = "/api/resources/" + kv + "/kv/entries/k";
        assertEquals(200, putBytes(u.http(), entry, "kept").status());
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/resource-kv/disable", Map.of())
                            .status());
            Http.Reply down = u.http().get(entry);
            BadInputTest.assertSpecError(down, 503, "SERVICE_UNAVAILABLE");
            assertTrue(down.json().get("error").get("message").asText().contains("kv/postgres"), down.body());
            BadInputTest.assertSpecError(u.http().delete("/api/resources/" + kv), 503, "SERVICE_UNAVAILABLE");
            JsonNode detail = u.http().get("/api/resources/" + kv).get("resource");
            assertEquals("provider_missing", detail.get("status").asText());
            assertFalse(detail.get("provider").get("available").asBoolean());
            // a new resource cannot name the stopped backend (without a backend named, it goes to the kv backend
            // still running: Redis, here)
            Http.Reply later =
                    u.http().post("/api/resources", Map.of("name", "later", "type", "kv", "backend", "postgres"));
            BadInputTest.assertSpecError(later, 400, "BAD_REQUEST");
            assertTrue(later.body().contains("'postgres'"), later.body());
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/resource-kv/enable", Map.of())
                            .status());
        }
        Http.Reply back = FeatureSwitchTest.await(u.http(), entry, 200);
        assertEquals("kept", back.body());
        assertNotEquals(
                "provider_missing",
                u.http()
                        .get("/api/resources/" + kv)
                        .get("resource")
                        .get("status")
                        .asText());
    }
}
