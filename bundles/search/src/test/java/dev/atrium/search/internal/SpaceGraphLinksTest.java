package dev.atrium.search.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Test;

class SpaceGraphLinksTest {

    private static List<String> targets(String text) {
        List<String> out = new ArrayList<>();
        Matcher m = SpaceGraphResource.LINK.matcher(text);
        while (m.find()) {
            out.add(m.group(1) != null ? m.group(1) : m.group(2));
        }
        return out;
    }

    @Test
    void markdownAndWikiLinksAreFound() {
        assertEquals(
                List.of("docs/setup.md", "Meeting notes", "https://example.com/a"),
                targets("See [the setup](docs/setup.md), [[Meeting notes]] and [a](https://example.com/a)."));
        assertEquals(List.of(), targets("[no target] [](  ) [[]] [[a]b]]"));
    }

    @Test
    void aFileOfOpeningBracketsIsScannedInLinearTime() {
        // 256 KiB of '[' (and of '[[' pairs before a ']('): quadratic backtracking took tens of seconds
        String brackets = "[".repeat(256 * 1024);
        String pairs = "[[a".repeat(80 * 1024) + "](";
        assertTimeoutPreemptively(Duration.ofSeconds(2), () -> {
            assertEquals(List.of(), targets(brackets));
            assertFalse(targets(pairs).size() > 0);
        });
    }
}
