package dev.atrium.kernel.internal.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.atrium.kernel.api.ApiException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class KeysetCursorTest {

    @Test
    void aCursorReadsBackAsTheSamePosition() {
        KeysetCursor c = new KeysetCursor(Instant.parse("2026-12-06T16:00:00.123456Z"), "pr_abc");
        assertEquals(c, KeysetCursor.parse(c.encode()));
    }

    @Test
    void noCursorIsTheFirstPage() {
        assertNull(KeysetCursor.parse(null));
        assertNull(KeysetCursor.parse(""));
    }

    @Test
    void anythingElseIsABadRequest() {
        for (String text : new String[] {
            "%%",
            encode("no bar"),
            encode("|pr_x"),
            encode("2026-01-01T00:00:00Z|"),
            encode("yesterday|pr_x"),
            encode("+300000-01-01T00:00:00Z|pr_x"),
            "a\0b"
        }) {
            ApiException e = assertThrows(ApiException.class, () -> KeysetCursor.parse(text), text);
            assertEquals(400, e.status(), text);
        }
    }

    private static String encode(String s) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }
}
