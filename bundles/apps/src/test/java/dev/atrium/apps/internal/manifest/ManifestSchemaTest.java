package dev.atrium.apps.internal.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The published schema is the one that validates: valid JSON, its $id, only keywords the validator checks. */
class ManifestSchemaTest {

    @Test
    void theSchemaIsJsonWithItsIdAndDraft() throws Exception {
        JsonNode schema = new ObjectMapper().readTree(ManifestParser.schema());
        assertEquals(ManifestParser.SCHEMA_ID, schema.get("$id").asText());
        assertEquals(
                "https://atrium.dev/schemas/app-manifest/v1alpha1.json",
                schema.get("$id").asText());
        assertEquals(
                "https://json-schema.org/draft/2020-12/schema",
                schema.get("$schema").asText());
        assertEquals(
                Manifest.KIND_VERSION, schema.at("/properties/apiVersion/const").asText());
        assertEquals("App", schema.at("/properties/kind/const").asText());
    }

    @Test
    void everyPatternOfTheSchemaHasWordsForItsMessage() throws Exception {
        List<String> patterns = new ArrayList<>();
        collect(new ObjectMapper().readTree(ManifestParser.schema()), patterns);
        assertTrue(patterns.size() > 5, patterns.toString());
        for (String p : patterns) {
            assertTrue(SchemaValidator.PATTERN_WORDS.containsKey(p), "no words for " + p);
        }
    }

    private static void collect(JsonNode node, List<String> out) {
        if (node.isObject() && node.has("pattern") && node.get("pattern").isTextual()) {
            out.add(node.get("pattern").asText());
        }
        node.forEach(child -> collect(child, out));
    }

    @Test
    void aSchemaUsingAKeywordTheValidatorDoesNotCheckIsRefused() {
        IllegalStateException e = assertThrows(
                IllegalStateException.class, () -> new SchemaValidator("{\"type\": \"object\", \"oneOf\": []}"));
        assertTrue(e.getMessage().contains("'oneOf'"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> new SchemaValidator("{\"$ref\": \"#/$defs/missing\"}"));
        assertThrows(IllegalStateException.class, () -> new SchemaValidator("{\"type\": \"number\"}"));
    }

    @Test
    void aPatternsEndAnchorDoesNotMatchBeforeATrailingNewline() {
        // Java's '$' matches before a final newline, ECMA's (JSON Schema's) does not.
        String yaml = """
                apiVersion: atrium.dev/v1alpha1
                kind: App
                metadata:
                  name: "app\\n"
                spec:
                  version: "1"
                """;
        ManifestProblem p = ManifestParser.parse(yaml).problems().get(0);
        assertEquals("metadata.name", p.path());
    }
}
