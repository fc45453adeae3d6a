package dev.atrium.shortcuts.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.atrium.kernel.api.ApiException;
import java.util.List;
import org.junit.jupiter.api.Test;

class LinksTest {

    @Test
    void pathsOnThisServerAndHttpUrlsAreLinks() {
        for (String ok : List.of("/threads/t_1", "/", "https://example.com/docs?q=1#x", "http://127.0.0.1:8080/x")) {
            assertEquals(ok, Links.url(ok));
        }
    }

    @Test
    void scriptsDataSchemeRelativeAndOddUrlsAreRefused() {
        for (String bad : List.of(
                "javascript:alert(1)",
                "JavaScript:alert(1)",
                "data:text/html,x",
                "//evil.example/x",
                "/\\evil.example",
                "ftp://h/x",
                "https:///nohost",
                "threads/x",
                "/a b",
                "/a\tb",
                "https://h/\u0000")) {
            ApiException e = assertThrows(ApiException.class, () -> Links.url(bad), bad);
            assertEquals(400, e.status());
        }
    }
}
