package dev.atrium.kernel.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class JsonBodyTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonBody body(String json) throws Exception {
        return JsonBody.of(JSON.readTree(json));
    }

    private static String refusal(Runnable r) {
        ApiException e = assertThrows(ApiException.class, r::run);
        assertEquals(400, e.status());
        assertEquals("BAD_REQUEST", e.code());
        return e.getMessage();
    }

    @Test
    void aMissingOrNonObjectBodyIsRefused() {
        refusal(() -> JsonBody.of(null));
        refusal(() -> JsonBody.of(JSON.nullNode()));
        refusal(() -> JsonBody.of(JSON.createArrayNode()));
    }

    @Test
    void textIsTrimmedAndItsLengthChecked() throws Exception {
        assertEquals("abc", body("{\"name\":\"  abc \"}").text("name", 1, 3));
        assertTrue(refusal(() -> uncheck(() -> body("{\"name\":\"   \"}").text("name", 1, 3)))
                .contains("must not be empty"));
        assertTrue(refusal(() -> uncheck(() -> body("{\"name\":\"abcd\"}").text("name", 1, 3)))
                .contains("at most 3"));
        assertTrue(refusal(() -> uncheck(() -> body("{}").text("name", 1, 3))).contains("name is required"));
    }

    @Test
    void lengthCountsCharactersNotUtf16Units() throws Exception {
        assertEquals("😀😀", body("{\"n\":\"😀😀\"}").text("n", 1, 2));
    }

    @Test
    void wrongTypesNameTheField() throws Exception {
        assertTrue(refusal(() -> uncheck(() -> body("{\"name\":5}").string("name")))
                .contains("name must be a string"));
        assertTrue(refusal(() -> uncheck(() -> body("{\"flag\":\"yes\"}").bool("flag")))
                .contains("flag must be a boolean"));
        assertEquals(Optional.empty(), body("{\"flag\":null}").bool("flag"));
    }

    @Test
    void enumValuesMustBeKnown() throws Exception {
        assertEquals(Optional.of("a"), body("{\"k\":\"a\"}").oneOf("k", Set.of("a", "b")));
        assertTrue(refusal(() -> uncheck(() -> body("{\"k\":\"c\"}").oneOf("k", Set.of("a", "b"))))
                .contains("one of a, b"));
    }

    private static <T> T uncheck(java.util.concurrent.Callable<T> c) {
        try {
            return c.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
