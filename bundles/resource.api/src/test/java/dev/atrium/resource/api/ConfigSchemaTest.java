package dev.atrium.resource.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigSchemaTest {

    private final ConfigSchema schema = ConfigSchema.builder()
            .integer("max_bytes", "largest value", 1, 1000, 100)
            .string("mode", "what to do", false, List.of("keep", "drop"), "keep")
            .string("region", "where", true, List.of(), null)
            .bool("strict", "refuse more", false)
            .build();

    @Test
    void validConfigGetsItsDefaultsFilledIn() throws ResourceException {
        assertEquals(
                Map.of("max_bytes", 100L, "mode", "keep", "region", "eu", "strict", false),
                schema.validate(Map.of("region", "eu")));
        assertEquals(
                Map.of("max_bytes", 7L, "mode", "drop", "region", "eu", "strict", true),
                schema.validate(Map.of("region", "eu", "max_bytes", 7, "mode", "drop", "strict", true)));
    }

    @Test
    void unknownMissingMistypedAndOutOfRangeFieldsAreBadInputNamingTheField() {
        for (Map<String, Object> bad : List.<Map<String, Object>>of(
                Map.of("region", "eu", "colour", "red"),
                Map.of(),
                Map.of("region", 5),
                Map.of("region", "eu", "max_bytes", 0),
                Map.of("region", "eu", "max_bytes", 1.5),
                Map.of("region", "eu", "mode", "shred"),
                Map.of("region", "eu", "strict", "yes"))) {
            ResourceException e = assertThrows(ResourceException.class, () -> schema.validate(bad), bad.toString());
            assertEquals(ResourceException.Kind.BAD_INPUT, e.kind());
            assertTrue(e.getMessage().contains("config"), e.getMessage());
        }
    }

    @Test
    void theJsonFormIsAJsonSchemaObject() {
        Map<String, Object> json = schema.toJson();
        assertEquals("object", json.get("type"));
        assertEquals(List.of("region"), json.get("required"));
        assertEquals(false, json.get("additionalProperties"));
        @SuppressWarnings("unchecked")
        Map<String, Object> max = (Map<String, Object>) ((Map<String, Object>) json.get("properties")).get("max_bytes");
        assertEquals(
                Map.of(
                        "type",
                        "integer",
                        "description",
                        "largest value",
                        "default",
                        100L,
                        "minimum",
                        1L,
                        "maximum",
                        1000L),
                max);
    }

    record Settings(int maxBytes, String mode, String region, boolean strict, Long missing) {}

    @Test
    void aValidatedConfigReadsAsARecordOfSnakeCaseFields() throws ResourceException {
        Settings settings = schema.read(schema.validate(Map.of("region", "eu", "max_bytes", 7)), Settings.class);
        assertEquals(new Settings(7, "keep", "eu", false, null), settings);
        // stored before the schema had max_bytes and strict: their defaults
        assertEquals(
                new Settings(100, "drop", "eu", false, null),
                schema.read(Map.of("region", "eu", "mode", "drop"), Settings.class));
    }

    record Wrong(String maxBytes) {}

    record Absent(long limit) {}

    @Test
    void aRecordThatDoesNotFitTheConfigIsTheProvidersMistakeAndSaysWhich() throws ResourceException {
        Map<String, Object> config = schema.validate(Map.of("region", "eu"));
        IllegalArgumentException wrong =
                assertThrows(IllegalArgumentException.class, () -> schema.read(config, Wrong.class));
        assertTrue(wrong.getMessage().contains("config.max_bytes is a Long, not a String"), wrong.getMessage());
        IllegalArgumentException absent =
                assertThrows(IllegalArgumentException.class, () -> schema.read(config, Absent.class));
        assertTrue(absent.getMessage().contains("config.limit is absent"), absent.getMessage());
    }
}
