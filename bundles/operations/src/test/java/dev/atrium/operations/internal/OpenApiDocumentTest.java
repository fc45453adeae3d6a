package dev.atrium.operations.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.RequiresScope;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.ws.rs.DefaultValue;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.SecurityContext;
import org.junit.jupiter.api.Test;

class OpenApiDocumentTest {

    record Note(String title, List<String> tags, Map<String, Integer> counts, long size) {}

    record Artifact(long size) {}

    record Target(Artifact artifact) {}

    record Deployment(Target target) {}

    record Deployments(List<Deployment> deployments) {}

    record Folder(String name, List<Folder> children) {}

    enum Level {
        LOW,
        HIGH
    }

    record Alarm(Level level) {}

    record Series(List<Double> values) {}

    record Secret(
            @com.fasterxml.jackson.annotation.JsonUnwrapped Note note, String secret) {}

    @Path("/api/spaces/{spaceId}/notes")
    @RequiresScope("notes:read")
    public static class Notes {
        @GET
        public List<Note> list(
                @Context SecurityContext sc,
                @PathParam("spaceId") String space,
                @QueryParam("limit") @DefaultValue("50") int limit) {
            return List.of();
        }

        @POST
        @RequiresScope("notes:write")
        public Note create(@Context SecurityContext sc, @PathParam("spaceId") String space, Note body) {
            return body;
        }

        @GET
        @Path("count")
        @Anonymous
        public void count() {}

        @GET
        @Path("export")
        @dev.atrium.kernel.api.NotJson({"text/markdown", "application/pdf"})
        public javax.ws.rs.core.Response export() {
            return null;
        }

        @GET
        @Path("old")
        @dev.atrium.kernel.api.NotJson
        public javax.ws.rs.core.Response moved() {
            return null;
        }
    }

    private static Method method(String name) {
        return java.util.Arrays.stream(Notes.class.getMethods())
                .filter(m -> m.getName().equals(name))
                .findFirst()
                .orElseThrow();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> at(Object o, String... keys) {
        Object v = o;
        for (String k : keys) {
            v = ((Map<String, Object>) v).get(k);
        }
        return (Map<String, Object>) v;
    }

    @Test
    void aJaxRsPathWithRegularExpressionsBecomesATemplate() {
        assertEquals("/api/x/{id}/files/{path}", OpenApiDocument.template("/api/x/{ id : [0-9]{3} }/files/{path: .+}"));
        assertEquals("/git/{path}", OpenApiDocument.servletPath("/git/*"));
    }

    @Test
    void recordsCollectionsAndMapsBecomeTheSchemasJacksonWrites() {
        Map<String, Object> note = OpenApiDocument.schema(Note.class, 0);
        assertEquals("object", note.get("type"));
        assertEquals(
                Map.of("type", List.of("array", "null"), "items", Map.of("type", "string")),
                at(note, "properties", "tags"));
        assertEquals(
                Map.of(
                        "type",
                        List.of("object", "null"),
                        "additionalProperties",
                        Map.of("type", "integer", "format", "int32")),
                at(note, "properties", "counts"));
        assertEquals(Map.of("type", "integer", "format", "int64"), at(note, "properties", "size"));
        assertEquals(List.of("size"), note.get("required"), "a primitive is always there; the rest may be null");
        assertEquals(Map.of(), OpenApiDocument.schema(com.fasterxml.jackson.databind.JsonNode.class, 0), "any JSON");
    }

    @Test
    @SuppressWarnings("unchecked")
    void anOperationSaysItsParametersBodyScopeAndErrors() {
        List<RouteCatalog.Route> routes = List.of(
                new RouteCatalog.Route(
                        "jaxrs",
                        "GET",
                        "/api/spaces/{spaceId}/notes",
                        List.of(),
                        List.of("application/json"),
                        "dev.atrium.notes",
                        1),
                new RouteCatalog.Route(
                        "jaxrs",
                        "POST",
                        "/api/spaces/{spaceId}/notes",
                        List.of("application/json"),
                        List.of("application/json"),
                        "dev.atrium.notes",
                        1),
                new RouteCatalog.Route(
                        "jaxrs",
                        "GET",
                        "/api/spaces/{spaceId}/notes/count",
                        List.of(),
                        List.of(),
                        "dev.atrium.notes",
                        1),
                new RouteCatalog.Route("servlet", null, "/healthz", List.of(), List.of(), "dev.atrium.kernel", 2));
        Map<String, Method> byRoute = Map.of(
                "GET /api/spaces/{spaceId}/notes",
                method("list"),
                "POST /api/spaces/{spaceId}/notes",
                method("create"),
                "GET /api/spaces/{spaceId}/notes/count",
                method("count"));
        Map<String, Object> doc = OpenApiDocument.of(
                routes, r -> Optional.ofNullable(byRoute.get(r.method() + " " + r.path())), "1.0", "http://x");
        Map<String, Object> list = at(doc, "paths", "/api/spaces/{spaceId}/notes", "get");
        List<Map<String, Object>> parameters = (List<Map<String, Object>>) list.get("parameters");
        assertEquals(
                List.of("spaceId", "limit"),
                parameters.stream().map(p -> p.get("name")).toList());
        assertEquals("50", ((Map<String, Object>) parameters.get(1).get("schema")).get("default"));
        assertEquals(List.of(Map.of("bearer", List.of("notes:read"))), list.get("security"));
        assertEquals(
                "array",
                at(list, "responses", "2XX", "content", "application/json", "schema")
                        .get("type"));
        assertEquals(
                OpenApiDocument.ERROR_RESPONSE, at(list, "responses", "default").get("$ref"));
        Map<String, Object> create = at(doc, "paths", "/api/spaces/{spaceId}/notes", "post");
        assertEquals(List.of(Map.of("bearer", List.of("notes:write"))), create.get("security"));
        assertEquals(
                "object",
                at(create, "requestBody", "content", "application/json", "schema")
                        .get("type"));
        Map<String, Object> count = at(doc, "paths", "/api/spaces/{spaceId}/notes/count", "get");
        assertEquals(List.of(), count.get("security"));
        assertFalse(at(count, "responses").containsKey("2XX"));
        assertEquals("Done; no body", at(count, "responses", "204").get("description"));
        assertEquals(
                List.of(Map.of("name", "spaceId", "in", "path", "required", true, "schema", Map.of("type", "string"))),
                count.get("parameters"),
                "a path parameter the method does not name is still declared");
        assertEquals(List.of(Map.of("name", "kernel"), Map.of("name", "notes")), doc.get("tags"));
    }

    @Test
    void anAnswerThatIsNotJsonIsDescribedAsWhatItIs() {
        List<RouteCatalog.Route> routes = List.of(
                new RouteCatalog.Route(
                        "jaxrs", "GET", "/notes/export", List.of(), List.of("application/json"), "dev.atrium.notes", 1),
                new RouteCatalog.Route("jaxrs", "GET", "/notes/old", List.of(), List.of(), "dev.atrium.notes", 1),
                new RouteCatalog.Route("jaxrs", "OPTIONS", "/notes/old", List.of(), List.of(), "dev.atrium.notes", 1));
        Map<String, Method> byRoute = Map.of(
                "GET /notes/export",
                method("export"),
                "GET /notes/old",
                method("moved"),
                "OPTIONS /notes/old",
                method("moved"));
        Map<String, Object> doc = OpenApiDocument.of(
                routes, r -> Optional.ofNullable(byRoute.get(r.method() + " " + r.path())), "1.0", "http://x");
        Map<String, Object> export = at(doc, "paths", "/notes/export", "get", "responses", "2XX", "content");
        assertEquals(List.of("text/markdown", "application/pdf"), List.copyOf(export.keySet()));
        assertEquals(
                Map.of("type", "string", "contentMediaType", "application/pdf"),
                at(export, "application/pdf", "schema"));
        assertFalse(at(doc, "paths", "/notes/old", "get", "responses", "2XX").containsKey("content"), "no body");
        assertFalse(at(doc, "paths", "/notes/old", "options", "responses").containsKey("2XX"), "a preflight: 204");
    }

    @Test
    void aPageOfRecordsHoldingRecordsIsDescribedToItsLeavesAndARecordHoldingItselfEnds() {
        Map<String, Object> page = OpenApiDocument.schema(Deployments.class, 0);
        Map<String, Object> deployment = at(page, "properties", "deployments", "items");
        assertEquals(
                Map.of("type", "integer", "format", "int64"),
                at(deployment, "properties", "target", "properties", "artifact", "properties", "size"));
        Map<String, Object> children = at(OpenApiDocument.schema(Folder.class, 0), "properties", "children");
        int levels = 0;
        while (!children.isEmpty() && levels < 12) {
            children = at(children, "items", "properties", "children");
            levels++;
        }
        assertEquals(Map.of(), children, "described to a depth, then any value");
        assertTrue(levels > 2, "but not cut short: " + levels);
    }

    @Test
    void aListOfBoxedNumbersMayHoldGapsAListOfStringsMayNot() {
        assertEquals(
                Map.of("type", List.of("number", "null")),
                at(OpenApiDocument.schema(Series.class, 0), "properties", "values", "items"));
        assertEquals(
                Map.of("type", "string"), at(OpenApiDocument.schema(Note.class, 0), "properties", "tags", "items"));
    }

    @Test
    void aNullableEnumListsNullAmongItsValues() {
        Map<String, Object> level = at(OpenApiDocument.schema(Alarm.class, 0), "properties", "level");
        assertEquals(List.of("string", "null"), level.get("type"));
        assertEquals(java.util.Arrays.asList("LOW", "HIGH", null), level.get("enum"));
    }

    @Test
    void anUnwrappedRecordsFieldsAreTheOuterRecordsOwn() {
        Map<String, Object> secret = OpenApiDocument.schema(Secret.class, 0);
        assertEquals(
                List.of("title", "tags", "counts", "size", "secret"),
                List.copyOf(at(secret, "properties").keySet()));
        assertEquals(List.of("size"), secret.get("required"));
    }
}
