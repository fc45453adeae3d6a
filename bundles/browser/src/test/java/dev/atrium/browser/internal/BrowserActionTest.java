package dev.atrium.browser.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.ApiException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BrowserActionTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static BrowserAction parse(String json) throws Exception {
        return BrowserAction.parse(JSON.readTree(json));
    }

    private static String refusal(String json) {
        return assertThrows(ApiException.class, () -> parse(json)).getMessage();
    }

    @Test
    void aClickByRoleAndName() throws Exception {
        BrowserAction a = parse("{\"kind\":\"click\",\"role\":\"button\",\"name\":\"Send\"}");
        assertEquals("click", a.kind());
        assertEquals(new BrowserAction.Target(null, "button", "Send"), a.target());
        assertEquals(BrowserAction.DEFAULT_TIMEOUT_MS, a.timeoutMs());
        assertEquals(Map.of("role", "button", "name", "Send"), a.target().toJson());
    }

    @Test
    void typeBySelectorKeepsTheTextAsGiven() throws Exception {
        BrowserAction a = parse("{\"kind\":\"type\",\"selector\":\"#who\",\"text\":\"  Ada \",\"timeout_ms\":250}");
        assertEquals("  Ada ", a.text());
        assertEquals(250, a.timeoutMs());
        assertEquals(Map.of("selector", "#who"), a.target().toJson());
    }

    @Test
    void eachKindAsksForWhatItNeeds() {
        assertTrue(refusal("{\"kind\":\"click\"}").contains("needs selector"));
        assertTrue(refusal("{\"kind\":\"type\",\"selector\":\"a\"}").contains("text is required"));
        assertTrue(refusal("{\"kind\":\"select\",\"selector\":\"a\"}").contains("value is required"));
        assertTrue(refusal("{\"kind\":\"press\"}").contains("key is required"));
        assertTrue(refusal("{\"kind\":\"scroll\",\"value\":\"down\"}").contains("whole number"));
        assertTrue(refusal("{\"kind\":\"hover\"}").contains("kind must be one of"));
        assertTrue(refusal("{}").contains("kind is required"));
    }

    @Test
    void targetsAreOneOrTheOther() {
        assertTrue(refusal("{\"kind\":\"click\",\"selector\":\"a\",\"role\":\"link\"}")
                .contains("not both"));
        assertTrue(refusal("{\"kind\":\"click\",\"selector\":\"a\",\"name\":\"x\"}")
                .contains("goes with role"));
        assertTrue(refusal("{\"kind\":\"click\",\"name\":\"x\"}").contains("goes with role"));
        assertTrue(refusal("{\"kind\":\"click\",\"role\":\"Button!\"}").contains("ARIA role"));
        assertTrue(refusal("{\"kind\":\"click\",\"selector\":\" \"}").contains("must not be empty"));
    }

    @Test
    void badFieldsAndValuesAre400() {
        assertTrue(
                refusal("{\"kind\":\"click\",\"selector\":\"a\",\"extra\":1}").contains("unknown field extra"));
        assertTrue(refusal("{\"kind\":\"click\",\"selector\":\"a\",\"timeout_ms\":0}")
                .contains("timeout_ms"));
        assertTrue(refusal("{\"kind\":\"click\",\"selector\":\"a\",\"timeout_ms\":600001}")
                .contains("timeout_ms"));
        assertTrue(refusal("{\"kind\":\"click\",\"selector\":7}").contains("must be a string"));
        assertTrue(refusal("{\"kind\":\"type\",\"selector\":\"a\",\"text\":\"a\\u0000b\"}")
                .contains("NUL"));
        assertTrue(refusal("[1]").contains("JSON object"));
    }

    @Test
    void keysAreNamedOrOneCharacter() throws Exception {
        BrowserAction.Key enter =
                parse("{\"kind\":\"press\",\"key\":\"Enter\"}").key();
        assertEquals(13, enter.keyCode());
        assertEquals("\r", enter.text());
        BrowserAction.Key a = BrowserAction.Key.of("a");
        assertEquals("KeyA", a.code());
        assertEquals(65, a.keyCode());
        assertEquals("a", a.text());
        assertEquals("Digit7", BrowserAction.Key.of("7").code());
        assertNull(BrowserAction.Key.of("ArrowDown").text());
        assertEquals("", BrowserAction.Key.of("é").code());
        assertThrows(ApiException.class, () -> BrowserAction.Key.of("Hyper"));
        assertThrows(ApiException.class, () -> BrowserAction.Key.of("\n"));
    }

    @Test
    void scrollTakesPixels() throws Exception {
        assertEquals("-200", parse("{\"kind\":\"scroll\",\"value\":-200}").value());
        assertNull(parse("{\"kind\":\"scroll\"}").value());
        JsonNode withTarget = JSON.readTree("{\"kind\":\"scroll\",\"selector\":\"footer\"}");
        assertEquals("footer", BrowserAction.parse(withTarget).target().selector());
    }
}
