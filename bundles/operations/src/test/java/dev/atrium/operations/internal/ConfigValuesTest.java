package dev.atrium.operations.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.atrium.kernel.api.ApiException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigValuesTest {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final MetaTypes.Attribute LONG =
            new MetaTypes.Attribute("maxBodyBytes", "Max body bytes", "Long", "", List.of("2147483648"), 0);

    @Test
    void anIntegerIsTakenAsANumberOrItsText() {
        assertEquals(4500L, ConfigValues.convert("p", LONG, JSON.numberNode(4500)));
        assertEquals(4500L, ConfigValues.convert("p", LONG, JSON.textNode(" 4500 ")));
        assertEquals(2147483648L, ConfigValues.typedDefault(LONG));
    }

    @Test
    void aValueOfAnotherTypeIsRefusedNamingTheProperty() {
        ApiException e = assertThrows(ApiException.class, () -> ConfigValues.convert("p", LONG, JSON.textNode("lots")));
        assertTrue(e.getMessage().contains("'maxBodyBytes' of p must be an integer (Long)"), e.getMessage());
        MetaTypes.Attribute flag = new MetaTypes.Attribute("enabled", "", "Boolean", "", null, 0);
        assertThrows(ApiException.class, () -> ConfigValues.convert("p", flag, JSON.textNode("yes")));
        assertEquals(true, ConfigValues.convert("p", flag, JSON.booleanNode(true)));
        MetaTypes.Attribute small = new MetaTypes.Attribute("n", "", "Integer", "", null, 0);
        assertThrows(ApiException.class, () -> ConfigValues.convert("p", small, JSON.numberNode(1L << 40)));
    }

    @Test
    void aSecretIsKnownByItsTypeOrItsName() {
        assertTrue(new MetaTypes.Attribute("secretKey", "", "String", "", null, 0).secret());
        assertTrue(new MetaTypes.Attribute("x", "", "Password", "", null, 0).secret());
        assertFalse(LONG.secret());
    }

    @Test
    void theOperatorsFileIsWrittenInTheTypedFormat() {
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("maxBodyBytes", 4500L);
        properties.put("enabled", true);
        properties.put("hosts", List.of("a", "b\"c"));
        properties.put("name", "é\n");
        assertEquals(
                "maxBodyBytes=L\"4500\"\nenabled=B\"true\"\nhosts=[\"a\",\"b\\\"c\"]\nname=\"\\u00e9\\n\"\n",
                TypedConfigFormat.config(properties));
    }

    @Test
    void aMetaTypeDefaultSplitsAtUnescapedCommas() {
        assertEquals(List.of("a", "b,c", ""), MetaTypes.split("a,b\\,c,"));
    }
}
