package dev.atrium.resource.durableobject.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.atrium.resource.api.ResourceException;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DurableObjectsTest {

    @Test
    void aClassNameMustBeAJavaScriptIdentifier() throws Exception {
        DurableObjects.check(Map.of("class_name", "Counter"));
        DurableObjects.check(Map.of("class_name", "_Room$2"));
        for (String bad : new String[] {"", "2Counter", "Counter.x", "a b", "Counter\"", "Zähler"}) {
            ResourceException e =
                    assertThrows(ResourceException.class, () -> DurableObjects.check(Map.of("class_name", bad)), bad);
            assertEquals(ResourceException.Kind.BAD_INPUT, e.kind());
        }
        Map<String, Object> none = new HashMap<>();
        none.put("class_name", null);
        assertThrows(ResourceException.class, () -> DurableObjects.check(none));
        assertThrows(ResourceException.class, () -> DurableObjects.check(Map.of("class_name", 5)));
    }
}
