package dev.atrium.kernel.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ApiExceptionTest {

    @Test
    void theErrorBodyNamesTheCodeBeforeTheMessageEveryTime() {
        Map<String, Object> body = ApiException.body("NOT_FOUND", "no such thing");
        assertEquals(List.of("error"), List.copyOf(body.keySet()));
        Map<?, ?> error = (Map<?, ?>) body.get("error");
        // Map.of's order changes from one JVM to the next; two servers answered the same 400 in two orders
        assertEquals(List.of("code", "message"), List.copyOf(error.keySet()));
        assertEquals("NOT_FOUND", error.get("code"));
        assertEquals("no such thing", error.get("message"));
    }
}
