package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The API reference: {@code /api/openapi.json} is a valid OpenAPI 3.1 document (checked against the OpenAPI
 * Initiative's schema, offline) that has every route {@code /admin/routes} lists, with what the resource methods say.
 */
@SharedServer
class OpenApiTest {

    @Test
    void theOpenApiDocumentIsValidAndHasEveryRouteTheServerAnswers(AtriumServer server) throws Exception {
        Http anyone = new Http(server.base(), null);
        Http.Reply reply = anyone.get("/api/openapi.json");
        assertEquals(200, reply.status(), reply.body());
        JsonNode doc = reply.json();
        JsonSchema schema;
        try (InputStream in = OpenApiTest.class.getResourceAsStream("/openapi/schema-3.1.json")) {
            schema = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012)
                    .getSchema(in);
        }
        Set<ValidationMessage> errors = schema.validate(doc);
        assertEquals(Set.of(), errors, "OpenAPI 3.1 schema violations");
        assertEquals("3.1.0", doc.get("openapi").asText());
        com.fasterxml.jackson.databind.node.ObjectNode broken = doc.deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode)
                        broken.get("paths").elements().next())
                .putObject("get")
                .put("responses", 7);
        assertTrue(!schema.validate(broken).isEmpty(), "the validator finds a broken operation");

        List<String> missing = new ArrayList<>();
        for (JsonNode route : server.operator().get("/admin/routes").json().get("routes")) {
            String path = route.get("path").asText();
            if (!path.startsWith("/")) {
                continue;
            }
            String template = "jaxrs".equals(route.get("kind").asText())
                    ? path.replaceAll("\\{\\s*([^:}\\s]+)\\s*(:[^}]*)?}", "{$1}")
                    : path.endsWith("/*") ? path.substring(0, path.length() - 1) + "{path}" : path;
            String verb = route.get("method").isNull()
                    ? "get"
                    : route.get("method").asText().toLowerCase(Locale.ROOT);
            if (!doc.get("paths").path(template).has(verb)) {
                missing.add(verb.toUpperCase(Locale.ROOT) + " " + template);
            }
        }
        assertEquals(List.of(), missing, "routes of /admin/routes missing from /api/openapi.json");
    }

    @Test
    void operationsSayTheirParametersBodiesScopesAndErrors(AtriumServer server) {
        JsonNode paths =
                new Http(server.base(), null).get("/api/openapi.json").json().get("paths");
        JsonNode list = paths.get("/api/spaces/{spaceId}/memories").get("get");
        assertTrue(
                list.toString().contains("\"in\":\"path\"") && list.toString().contains("\"name\":\"spaceId\""),
                list.toString());
        assertEquals(
                "#/components/responses/Error",
                list.get("responses").get("default").get("$ref").asText());
        JsonNode create = paths.get("/api/spaces/{spaceId}/memories").get("post");
        assertTrue(create.has("requestBody"), create.toString());
        // @JsonShape: a JsonNode body and a Response answer described by records, named as Jackson writes them; a
        // component of a reference type may be null
        assertEquals(
                "[\"string\",\"null\"]",
                create.at("/requestBody/content/application~1json/schema/properties/content/type")
                        .toString(),
                create.toString());
        JsonNode memory = create.at("/responses/2XX/content/application~1json/schema/properties/memory/properties");
        assertEquals("date-time", memory.at("/created_at/format").asText(), create.toString());
        assertTrue(memory.has("space_id") && !memory.has("spaceId"), memory.toString());
        assertTrue(
                paths.get("/healthz").get("get").get("summary").asText().contains("servlet"),
                "a servlet's route is there too");
        JsonNode openapi = paths.get("/api/openapi.json").get("get");
        assertTrue(openapi.get("security").isArray() && openapi.get("security").isEmpty(), openapi.toString());
        JsonNode update = paths.get("/admin/bundles/{symbolicName}/update").get("post");
        assertTrue(update.get("x-atrium-operator-only").asBoolean(), update.toString());
        assertTrue(update.get("requestBody").get("content").has("application/java-archive"), update.toString());
    }

    /**
     * The ratchet on body shapes: every JSON body a resource method takes or answers has a schema that names its fields
     * (a typed parameter or return type, or {@code @JsonShape}; a {@code Map} says nothing), except those
     * {@code openapi/untyped-bodies.txt} still lists. A new route
     * without one fails here, and so does a listed one that has one now (take it off the list).
     */
    @Test
    void everyJsonBodyHasAShapeExceptTheOnesStillListed(AtriumServer server) throws Exception {
        JsonNode paths =
                new Http(server.base(), null).get("/api/openapi.json").json().get("paths");
        Set<String> untyped = new java.util.TreeSet<>();
        Set<String> documented = new java.util.TreeSet<>();
        for (var path : (Iterable<java.util.Map.Entry<String, JsonNode>>) paths::fields) {
            for (var verb : (Iterable<java.util.Map.Entry<String, JsonNode>>) path.getValue()::fields) {
                JsonNode op = verb.getValue();
                if (op.has("summary") && op.get("summary").asText().startsWith("Served by a servlet")) {
                    continue;
                }
                String name = verb.getKey().toUpperCase(Locale.ROOT) + " " + path.getKey();
                JsonNode body = op.path("requestBody")
                        .path("content")
                        .path("application/json")
                        .path("schema");
                if (!body.isMissingNode()) {
                    (saysNothing(body) ? untyped : documented).add(name + " body");
                }
                JsonNode answer = op.path("responses")
                        .path("2XX")
                        .path("content")
                        .path("application/json")
                        .path("schema");
                if (!answer.isMissingNode()) {
                    (saysNothing(answer) ? untyped : documented).add(name + " answer");
                }
            }
        }
        Set<String> listed = new java.util.TreeSet<>();
        try (InputStream in = OpenApiTest.class.getResourceAsStream("/openapi/untyped-bodies.txt")) {
            for (String line : new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    listed.add(line.trim());
                }
            }
        }
        Set<String> unlisted = new java.util.TreeSet<>(untyped);
        unlisted.removeAll(listed);
        assertEquals(
                Set.of(),
                unlisted,
                "JSON bodies with no shape: give the method a typed parameter or return type, or @JsonShape");
        Set<String> shapedNow = new java.util.TreeSet<>(listed);
        shapedNow.retainAll(documented);
        assertEquals(Set.of(), shapedNow, "these have a shape now: take them off openapi/untyped-bodies.txt");
        assertTrue(documented.contains("POST /api/spaces/{spaceId}/memories body"), documented.toString());
    }

    /** Any value, or an object with no word on its fields (what a {@code Map<String, Object>} gives). */
    private static boolean saysNothing(JsonNode schema) {
        return schema.isEmpty()
                || ("object".equals(schema.path("type").asText())
                        && !schema.has("properties")
                        && (!schema.has("additionalProperties") || saysNothing(schema.get("additionalProperties"))));
    }

    @Test
    void theDocsPageListsTheRoutesByBundle(AtriumServer server) {
        Http.Reply page = new Http(server.base(), null).get("/api/docs");
        assertEquals(200, page.status());
        assertTrue(
                page.raw().headers().firstValue("Content-Type").orElse("").startsWith("text/html"),
                page.raw().headers().toString());
        assertTrue(
                page.body().contains("<h2 id=\"memories\">memories</h2>")
                        && page.body().contains("<code>/api/spaces/{spaceId}/memories</code>"),
                page.body().substring(0, Math.min(2000, page.body().length())));
        assertTrue(page.body().contains("href=\"openapi.json\""));
    }
}
