package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The services capability's routes on the real runtime, without a deployment provider: CRUD, slugs, settings, env
 * (secrets sealed and never returned), common-env links, bindings (another Principal's resource refused), deployment
 * validation, custom domains, logs, Host routing of unknown names, the internal binding endpoint, and 404 for strangers
 * on every route. What needs a running worker is {@link ServicesWorkerdTest}.
 */
@SharedServer
class ServicesTest {

    static String createService(User u, String name) {
        Http.Reply r = u.http().post("/api/services", Map.of("name", name, "space_id", u.defaultSpaceId()));
        assertEquals(201, r.status(), r.body());
        return r.get("service").get("id").asText();
    }

    static String unique(String base) {
        return base + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
    }

    @Test
    void servicesAreCreatedListedReslugedAndDeleted(AtriumServer server) {
        User u = server.newUser();
        String name = unique("Shop API");
        Http.Reply created = u.http().post("/api/services", Map.of("name", name, "space_id", u.username()));
        assertEquals(201, created.status(), created.body());
        JsonNode s = created.get("service");
        String id = s.get("id").asText();
        assertEquals(name, s.get("name").asText());
        assertEquals("created", s.get("status").asText());
        assertEquals(u.defaultSpaceId(), s.get("space_id").asText());
        String slug = s.get("slug").asText();
        assertTrue(slug.startsWith("shop-api-"), slug);
        assertEquals(slug + ".apps.localhost", s.get("hostname").asText());

        assertTrue(ids(u.http().get("/api/services").json().get("services")).contains(id));
        assertTrue(ids(u.http()
                        .get("/api/services?space_id=" + u.defaultSpaceId())
                        .json()
                        .get("services"))
                .contains(id));
        JsonNode bySpace =
                u.http().get("/api/services/space/" + u.defaultSpaceId()).json();
        assertEquals(1, bySpace.get("total").asInt());
        assertEquals(id, bySpace.get("services").get(0).get("id").asText());
        JsonNode detail = u.http().get("/api/services/" + id).get("service");
        assertEquals(slug, detail.get("slug").asText());
        assertTrue(detail.get("settings").isObject());

        // the same name again gets the next free slug; a slug of another service is 409, a malformed one 400
        String second = u.http()
                .post("/api/services", Map.of("name", name, "space_id", u.defaultSpaceId()))
                .get("service")
                .get("id")
                .asText();
        assertEquals(
                slug + "-2",
                u.http()
                        .get("/api/services/" + second)
                        .get("service")
                        .get("slug")
                        .asText());
        assertEquals(
                409,
                u.http()
                        .patch("/api/services/" + second + "/slug", Map.of("slug", slug))
                        .status());
        for (String bad : List.of("Has-Caps", "a--b", "-x", "api", "x".repeat(64), "with.dot")) {
            Http.Reply r = u.http().patch("/api/services/" + second + "/slug", Map.of("slug", bad));
            assertEquals(400, r.status(), bad + ": " + r.body());
            assertEquals("BAD_REQUEST", r.errorCode());
        }
        String fresh = unique("renamed");
        Http.Reply renamed = u.http().patch("/api/services/" + second + "/slug", Map.of("slug", fresh));
        assertEquals(200, renamed.status(), renamed.body());
        assertEquals(fresh, renamed.get("service").get("slug").asText());
        // a slug is unique per instance: another Principal cannot take it either
        User other = server.newUser();
        assertEquals(
                409,
                other.http()
                        .post("/api/services", Map.of("name", "x", "space_id", other.defaultSpaceId(), "slug", fresh))
                        .status());

        // bad create bodies
        assertEquals(400, u.http().post("/api/services", Map.of("name", "x")).status());
        assertEquals(
                400,
                u.http()
                        .post("/api/services", Map.of("name", "", "space_id", u.defaultSpaceId()))
                        .status());
        assertEquals(
                400,
                u.http()
                        .post("/api/services", Map.of("name", 5, "space_id", u.defaultSpaceId()))
                        .status());
        assertEquals(400, u.http().post("/api/services", "[1]").status());
        assertEquals(
                404,
                u.http()
                        .post("/api/services", Map.of("name", "x", "space_id", other.defaultSpaceId()))
                        .status());
        assertEquals(400, u.http().get("/api/services?limit=0").status());

        assertEquals(200, u.http().delete("/api/services/" + id).status());
        assertEquals(404, u.http().get("/api/services/" + id).status());
        assertEquals(404, u.http().delete("/api/services/" + id).status());
    }

    private static Set<String> ids(JsonNode list) {
        Set<String> out = new java.util.HashSet<>();
        list.forEach(n -> out.add(n.get("id").asText()));
        return out;
    }

    @Test
    void settingsAreValidatedByTypeAndNothingChangesOnBadInput(AtriumServer server) {
        User u = server.newUser();
        String id = createService(u, unique("settings"));
        String base = "/api/services/" + id + "/settings";
        Http.Reply ok = u.http()
                .patch(
                        base,
                        Map.of(
                                "compatibility_date",
                                "2024-09-23",
                                "compatibility_flags",
                                List.of("nodejs_compat"),
                                "limits",
                                Map.of("cpu_ms", 50, "memory_mb", 128),
                                "mcp_server",
                                true));
        assertEquals(200, ok.status(), ok.body());
        JsonNode before = u.http().get(base).get("settings");
        assertEquals("2024-09-23", before.get("compatibility_date").asText());
        assertEquals(50, before.get("limits").get("cpu_ms").asInt());
        for (String bad : List.of(
                "{\"compatibility_date\":\"2024-02-30\"}",
                "{\"compatibility_date\":\"yesterday\"}",
                "{\"compatibility_date\":1}",
                "{\"compatibility_flags\":\"nodejs_compat\"}",
                "{\"compatibility_flags\":[true]}",
                "{\"limits\":{\"cpu_ms\":\"50\"}}",
                "{\"limits\":{\"cpu_ms\":-1}}",
                "{\"limits\":{\"gpu\":1}}",
                "{\"limits\":5}",
                "{\"mcp_server\":\"on\"}",
                "{\"region\":\"eu\"}",
                "[]",
                "not json")) {
            Http.Reply r = u.http().patch(base, bad);
            assertEquals(400, r.status(), bad + ": " + r.body());
            assertEquals("BAD_REQUEST", r.errorCode(), bad);
        }
        assertEquals(before, u.http().get(base).get("settings"));
        Http.Reply reset = u.http().patch(base, "{\"limits\":null,\"mcp_server\":{\"path\":\"/mcp\"}}");
        assertEquals(200, reset.status(), reset.body());
        assertFalse(reset.get("settings").has("limits"));
        assertEquals("/mcp", reset.get("settings").get("mcp_server").get("path").asText());
    }

    @Test
    void envSecretsAreSealedAtRestAndNeverReturned(AtriumServer server) throws Exception {
        User u = server.newUser();
        String id = createService(u, unique("env"));
        String base = "/api/services/" + id + "/env";
        String secret = "s3cret-" + unique("v");
        Http.Reply set = u.http()
                .patch(
                        base,
                        Map.of(
                                "variables",
                                List.of(
                                        Map.of("name", "GREETING", "value", "hello"),
                                        Map.of("name", "API_KEY", "value", secret, "secret", true))));
        assertEquals(200, set.status(), set.body());
        for (Http.Reply r : List.of(set, u.http().get(base))) {
            assertFalse(r.body().contains(secret), r.body());
            Map<String, JsonNode> byName = new HashMap<>();
            r.get("variables").forEach(v -> byName.put(v.get("name").asText(), v));
            assertEquals("hello", byName.get("GREETING").get("value").asText());
            assertFalse(byName.get("GREETING").get("secret").asBoolean());
            assertTrue(byName.get("API_KEY").get("secret").asBoolean());
            assertFalse(byName.get("API_KEY").has("value"));
        }
        // at rest: no plain text anywhere in the service's env rows
        try (Connection c = server.db.connect();
                ResultSet rs = c.createStatement()
                        .executeQuery(
                                "SELECT name, coalesce(value, ''), coalesce(encode(ciphertext, 'escape'), '') FROM service_env WHERE service_id = '"
                                        + id + "'")) {
            int rows = 0;
            while (rs.next()) {
                rows++;
                assertFalse(rs.getString(2).contains(secret) || rs.getString(3).contains(secret));
            }
            assertEquals(2, rows);
        }
        for (String bad : List.of(
                "{\"variables\":[{\"name\":\"lower\",\"value\":\"x\"}]}",
                "{\"variables\":[{\"name\":\"1X\",\"value\":\"x\"}]}",
                "{\"variables\":[{\"name\":\"X\",\"value\":5}]}",
                "{\"variables\":[{\"name\":\"X\"}]}",
                "{\"variables\":[{\"name\":\"X\",\"value\":\"a\",\"secret\":\"yes\"}]}",
                "{\"variables\":{}}",
                "{}",
                "{\"variables\":[{\"name\":\"X\",\"value\":\"a\"},{\"name\":\"X\",\"value\":\"b\"}]}")) {
            Http.Reply r = u.http().patch(base, bad);
            assertEquals(400, r.status(), bad + ": " + r.body());
        }
        // null removes one; the others stay
        Http.Reply removed = u.http().patch(base, "{\"variables\":[{\"name\":\"GREETING\",\"value\":null}]}");
        assertEquals(200, removed.status(), removed.body());
        assertEquals(1, removed.get("variables").size());
        assertEquals("API_KEY", removed.get("variables").get(0).get("name").asText());
    }

    @Test
    void commonEnvLinksAreReplacedAndPatched(AtriumServer server) {
        User u = server.newUser();
        String id = createService(u, unique("links"));
        String base = "/api/services/" + id + "/common-env-links";
        assertEquals(0, u.http().get(base).get("links").size());
        Http.Reply put = u.http().put(base, Map.of("names", List.of("DATABASE_URL", "REGION")));
        assertEquals(200, put.status(), put.body());
        assertEquals(List.of("DATABASE_URL", "REGION"), texts(put.get("links")));
        Http.Reply patched = u.http()
                .patch(
                        base,
                        Map.of(
                                "add",
                                List.of("SENTRY_DSN"),
                                "remove",
                                List.of("REGION"),
                                "builtins",
                                Map.of("ATRIUM_TOKEN", Map.of("scopes", List.of("kv.read")))));
        assertEquals(200, patched.status(), patched.body());
        assertEquals(Set.of("DATABASE_URL", "SENTRY_DSN"), Set.copyOf(texts(patched.get("links"))));
        assertEquals(
                "kv.read",
                patched.get("builtins").get("ATRIUM_TOKEN").get("scopes").get(0).asText());
        Http.Reply dropped = u.http().patch(base, "{\"builtins\":{\"ATRIUM_TOKEN\":null}}");
        assertEquals(200, dropped.status(), dropped.body());
        assertEquals(0, dropped.get("builtins").size());
        for (String bad : List.of(
                "{\"add\":\"X\"}",
                "{\"add\":[\"lower\"]}",
                "{\"remove\":[1]}",
                "{\"builtins\":{\"X\":{\"scopes\":\"a\"}}}",
                "{\"builtins\":[]}",
                "{\"set\":[\"X\"]}")) {
            assertEquals(400, u.http().patch(base, bad).status(), bad);
        }
        assertEquals(400, u.http().put(base, "{\"names\":[\"bad name\"]}").status());
        assertEquals(400, u.http().put(base, "{\"add\":[\"X\"]}").status());
        assertEquals(
                Set.of("DATABASE_URL", "SENTRY_DSN"),
                Set.copyOf(texts(u.http().get(base).get("links"))));
    }

    private static List<String> texts(JsonNode a) {
        List<String> out = new ArrayList<>();
        a.forEach(n -> out.add(n.asText()));
        return out;
    }

    @Test
    void bindingsTakeTheOwnersResourcesOnlyAndShowOnTheResource(AtriumServer server) {
        User u = server.newUser();
        User stranger = server.newUser();
        String id = createService(u, unique("bindings"));
        String base = "/api/services/" + id + "/bindings";
        String kv = u.http()
                .post("/api/resources", Map.of("name", "cache", "type", "kv"))
                .get("resource")
                .get("id")
                .asText();
        String theirs = stranger.http()
                .post("/api/resources", Map.of("name", "cache", "type", "kv"))
                .get("resource")
                .get("id")
                .asText();

        Http.Reply bound = u.http()
                .patch(
                        base,
                        Map.of("bindings", List.of(Map.of("name", "CACHE", "resource_name", "cache", "type", "kv"))));
        assertEquals(200, bound.status(), bound.body());
        assertEquals(kv, bound.get("bindings").get(0).get("resource_id").asText());
        assertEquals("write", bound.get("bindings").get(0).get("permission").asText());
        assertEquals(
                "CACHE", u.http().get(base).get("bindings").get(0).get("name").asText());
        // the resource's own record shows the binding (one record of bindings: the resources core's)
        JsonNode onResource =
                u.http().get("/api/resources/" + kv).get("resource").get("bindings");
        assertEquals(id, onResource.get(0).get("service_id").asText());
        assertEquals("CACHE", onResource.get(0).get("binding").asText());

        // another Principal's resource is the same 404 as a missing one, by id or by name; nothing changes
        Http.Reply refused =
                u.http().patch(base, Map.of("bindings", List.of(Map.of("name", "THEIRS", "resource_id", theirs))));
        assertEquals(404, refused.status(), refused.body());
        assertEquals("NOT_FOUND", refused.errorCode());
        assertEquals(
                404,
                u.http()
                        .patch(
                                base,
                                Map.of(
                                        "bindings",
                                        List.of(Map.of("name", "X", "resource_id", "res_missing0000000000000"))))
                        .status());
        assertEquals(
                404,
                u.http()
                        .patch(base, Map.of("bindings", List.of(Map.of("name", "X", "resource_name", "nope"))))
                        .status());
        for (String bad : List.of(
                "{\"bindings\":[{\"name\":\"1X\",\"resource_id\":\"" + kv + "\"}]}",
                "{\"bindings\":[{\"name\":\"X\"}]}",
                "{\"bindings\":[{\"name\":\"X\",\"resource_id\":\"" + kv + "\",\"resource_name\":\"cache\"}]}",
                "{\"bindings\":[{\"name\":\"X\",\"resource_id\":\"" + kv + "\",\"type\":\"d1\"}]}",
                "{\"bindings\":[{\"name\":\"X\",\"resource_id\":\"" + kv + "\"},{\"name\":\"X\",\"resource_id\":\"" + kv
                        + "\"}]}",
                "{\"bindings\":{}}",
                "{}")) {
            Http.Reply r = u.http().patch(base, bad);
            assertEquals(400, r.status(), bad + ": " + r.body());
        }
        assertEquals(1, u.http().get(base).get("bindings").size());
        assertTrue(stranger.http()
                .get("/api/resources/" + theirs)
                .get("resource")
                .get("bindings")
                .isEmpty());

        // deleting the resource removes the binding
        assertEquals(200, u.http().delete("/api/resources/" + kv).status());
        assertEquals(0, u.http().get(base).get("bindings").size());
        assertEquals(200, u.http().patch(base, Map.of("bindings", List.of())).status());
    }

    @Test
    void deploymentsAreValidatedAndRefusedWithoutTheirProvider(AtriumServer server) {
        User u = server.newUser();
        String id = createService(u, unique("deploys"));
        String base = "/api/services/" + id + "/deployments";
        String code = Base64.getEncoder()
                .encodeToString(
                        "export default { fetch() { return new Response('hi') } }".getBytes(StandardCharsets.UTF_8));
        for (String bad : List.of(
                "{}",
                "{\"bundle\":\"!!!not base64\"}",
                "{\"bundle\":\"\"}",
                "{\"bundle\":5}",
                "{\"bundle\":\"" + code + "\",\"strategy\":\"blue\"}",
                "{\"bundle\":\"" + code + "\",\"provider\":\"workerd\"}",
                "{\"bundle\":\"" + code + "\",\"target\":{\"artifact\":{\"kind\":\"jar\"}}}",
                "{\"bundle\":\"" + code + "\",\"canary_percent\":10}",
                "{\"bundle\":\"" + code + "\",\"strategy\":\"canary\",\"canary_percent\":100}",
                "{\"bundle\":\"" + code + "\",\"colour\":1}",
                "[]")) {
            Http.Reply r = u.http().post(base, bad);
            assertEquals(400, r.status(), bad + ": " + r.body());
            assertEquals("BAD_REQUEST", r.errorCode());
        }
        // a kind no installed provider runs: 400 naming the missing provider, nothing stored
        Http.Reply container = u.http()
                .post(base, Map.of("bundle", code, "target", Map.of("artifact", Map.of("kind", "container-image"))));
        assertEquals(400, container.status(), container.body());
        assertTrue(container.json().path("error").path("message").asText().contains("provider"), container.body());
        Http.Reply other = u.http()
                .post(
                        "/api/workers/" + id + "/deployments",
                        Map.of("bundle", code, "provider", Map.of("name", "nomad")));
        assertEquals(400, other.status(), other.body());
        assertTrue(other.json().path("error").path("message").asText().contains("nomad"), other.body());
        assertEquals(0, u.http().get(base).get("total").asInt());
        assertEquals(404, u.http().get(base + "/dep_missing0000000000000").status());
        assertEquals(409, u.http().post(base + "/rollback", null).status());
        assertEquals(
                404,
                u.http().post(base + "/dep_missing0000000000000/promote", null).status());
        assertEquals(
                404,
                u.http().post(base + "/dep_missing0000000000000/abort", null).status());
        assertEquals(
                400, u.http().post(base + "/rollback", "{\"deployment_id\":5}").status());
    }

    @Test
    void customDomainsAreAddedCheckedAndRemoved(AtriumServer server) {
        User u = server.newUser();
        String id = createService(u, unique("domains"));
        String otherService = createService(u, unique("domains2"));
        String base = "/api/services/" + id + "/custom-domains";
        String domain = unique("shop") + ".example.test";
        Http.Reply added = u.http().post(base, Map.of("domain", domain.toUpperCase()));
        assertEquals(201, added.status(), added.body());
        JsonNode d = added.get("domain");
        String domainId = d.get("id").asText();
        assertEquals(domain, d.get("domain").asText());
        assertEquals("pending", d.get("status").asText());
        String token = d.get("verification").get("http").get("body").asText();
        assertTrue(d.get("verification")
                .get("http")
                .get("url")
                .asText()
                .endsWith("/.well-known/atrium-challenge/" + token));
        assertEquals(
                "_atrium-challenge." + domain,
                d.get("verification").get("dns").get("name").asText());
        assertEquals(
                "atrium-verification=" + token,
                d.get("verification").get("dns").get("value").asText());
        assertEquals(
                domainId, u.http().get(base).get("domains").get(0).get("id").asText());
        assertEquals(
                domain,
                u.http().get(base + "/" + domainId).get("domain").get("domain").asText());
        // once per service; another service (or Principal) may claim it too while nobody has verified it
        assertEquals(409, u.http().post(base, Map.of("domain", domain)).status());
        assertEquals(
                201,
                u.http()
                        .post("/api/services/" + otherService + "/custom-domains", Map.of("domain", domain))
                        .status());
        for (String bad : List.of(
                "localhost",
                "exa mple.com",
                "-x.example.com",
                "x..example.com",
                "10.0.0.1",
                "a.apps.localhost",
                "apps.localhost",
                "x".repeat(64) + ".com")) {
            assertEquals(400, u.http().post(base, Map.of("domain", bad)).status(), bad);
        }
        assertEquals(400, u.http().post(base, Map.of()).status());
        // unverified: no certificate; a failed check says why and changes nothing
        assertEquals(
                409, u.http().post(base + "/" + domainId + "/refresh-ssl", null).status());
        assertEquals(
                400,
                u.http()
                        .post(base + "/" + domainId + "/verify", Map.of("method", "carrier-pigeon"))
                        .status());
        // a domain of another service of the same owner is not this service's
        assertEquals(
                404,
                u.http()
                        .get("/api/services/" + otherService + "/custom-domains/" + domainId)
                        .status());
        assertEquals(200, u.http().delete(base + "/" + domainId).status());
        assertEquals(404, u.http().get(base + "/" + domainId).status());
        assertEquals(404, u.http().delete(base + "/" + domainId).status());
    }

    @Test
    void logsArePagedAndValidated(AtriumServer server) {
        User u = server.newUser();
        String id = createService(u, unique("logs"));
        Http.Reply logs = u.http().get("/api/services/" + id + "/logs?after=0&limit=10");
        assertEquals(200, logs.status(), logs.body());
        assertTrue(logs.get("logs").isArray());
        for (String q : List.of("after=-1", "after=x", "limit=0", "limit=1001", "limit=y")) {
            assertEquals(400, u.http().get("/api/services/" + id + "/logs?" + q).status(), q);
        }
    }

    @Test
    void unknownServiceHostsAre404AndOtherHostsReachTheApi(AtriumServer server) throws Exception {
        RawHttp.Response unknown = HostHttp.get(server.port, "no-such-service-" + unique("x") + ".apps.localhost", "/");
        assertEquals(404, unknown.status());
        JsonNode body = Http.JSON.readTree(unknown.body());
        assertEquals("NOT_FOUND", body.path("error").path("code").asText(), HostHttp.text(unknown));
        assertEquals(
                404,
                HostHttp.get(server.port, "apps.localhost", "/api/services").status());
        assertEquals(
                404,
                HostHttp.get(server.port, "a.b.apps.localhost:" + server.port, "/")
                        .status());
        // a created but never deployed service is not served either
        User u = server.newUser();
        String id = createService(u, unique("undeployed"));
        String slug =
                u.http().get("/api/services/" + id).get("service").get("slug").asText();
        assertEquals(
                404, HostHttp.get(server.port, slug + ".apps.localhost", "/").status());
        // any other Host is the API as before
        RawHttp.Response health = HostHttp.get(server.port, "127.0.0.1:" + server.port, "/healthz");
        assertEquals(200, health.status(), HostHttp.text(health));
        assertEquals(
                401,
                HostHttp.get(server.port, "atrium.example.test", "/api/services")
                        .status());
    }

    @Test
    void theInternalBindingEndpointAnswers404WithoutAValidDeploymentSecret(AtriumServer server) throws Exception {
        for (String path : List.of(
                "/internal/bindings/", "/internal/bindings/dep_x-r1/CACHE/key", "/internal/bindings/dep_x-r1/CACHE/")) {
            for (String method : List.of("GET", "PUT", "DELETE", "POST")) {
                RawHttp.Response r = HostHttp.send(
                        server.port,
                        "127.0.0.1:" + server.port,
                        method,
                        path,
                        Map.of("X-Atrium-Binding-Secret", "forged"),
                        method.equals("GET") || method.equals("DELETE") ? null : new byte[] {'x'});
                assertEquals(404, r.status(), method + " " + path);
            }
        }
    }

    /** Every service, deployment, domain and log route with the owner's ids answers a stranger 404, and changes nothing. */
    @Test
    void strangersGet404OnEveryServiceRoute(AtriumServer server) {
        User owner = server.newUser();
        User stranger = server.newUser();
        String id = createService(owner, unique("private"));
        String domainId = owner.http()
                .post("/api/services/" + id + "/custom-domains", Map.of("domain", unique("priv") + ".example.test"))
                .get("domain")
                .get("id")
                .asText();
        String s = "/api/services/" + id;
        String code = Base64.getEncoder().encodeToString("export default {}".getBytes(StandardCharsets.UTF_8));
        List<String[]> routes = List.of(
                new String[] {"GET", s},
                new String[] {"DELETE", s},
                new String[] {"GET", s + "/logs"},
                new String[] {"GET", s + "/settings"},
                new String[] {"PATCH", s + "/settings", "{\"mcp_server\":true}"},
                new String[] {"PATCH", s + "/slug", "{\"slug\":\"" + unique("taken") + "\"}"},
                new String[] {"GET", s + "/env"},
                new String[] {"PATCH", s + "/env", "{\"variables\":[{\"name\":\"X\",\"value\":\"y\"}]}"},
                new String[] {"GET", s + "/common-env-links"},
                new String[] {"PUT", s + "/common-env-links", "{\"names\":[\"X\"]}"},
                new String[] {"PATCH", s + "/common-env-links", "{\"add\":[\"X\"]}"},
                new String[] {"GET", s + "/bindings"},
                new String[] {"PATCH", s + "/bindings", "{\"bindings\":[]}"},
                new String[] {"GET", s + "/deployments"},
                new String[] {"POST", s + "/deployments", "{\"bundle\":\"" + code + "\"}"},
                new String[] {"POST", "/api/workers/" + id + "/deployments", "{\"bundle\":\"" + code + "\"}"},
                new String[] {"GET", s + "/deployments/dep_x"},
                new String[] {"POST", s + "/deployments/rollback", "{}"},
                new String[] {"POST", s + "/deployments/dep_x/promote"},
                new String[] {"POST", s + "/deployments/dep_x/abort"},
                new String[] {"GET", s + "/custom-domains"},
                new String[] {"POST", s + "/custom-domains", "{\"domain\":\"" + unique("s") + ".example.test\"}"},
                new String[] {"GET", s + "/custom-domains/" + domainId},
                new String[] {"DELETE", s + "/custom-domains/" + domainId},
                new String[] {"POST", s + "/custom-domains/" + domainId + "/verify", "{}"},
                new String[] {"POST", s + "/custom-domains/" + domainId + "/refresh-ssl"});
        String before = owner.http().get(s).body()
                + owner.http().get(s + "/custom-domains").body();
        for (String[] r : routes) {
            Http.Reply reply = stranger.http().send(r[0], r[1], r.length > 2 ? r[2] : null, "application/json");
            assertEquals(404, reply.status(), r[0] + " " + r[1] + ": " + reply.body());
            assertEquals("NOT_FOUND", reply.errorCode(), r[0] + " " + r[1]);
        }
        assertEquals(
                404,
                stranger.http()
                        .get("/api/services/space/" + owner.defaultSpaceId())
                        .status());
        assertFalse(
                ids(stranger.http().get("/api/services").json().get("services")).contains(id));
        assertEquals(
                before,
                owner.http().get(s).body()
                        + owner.http().get(s + "/custom-domains").body());
        assertNotNull(owner.http().get(s).get("service"));
    }
}
