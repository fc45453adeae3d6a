package dev.atrium.repos.pulls.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AiReviewerTest {

    private static Map<String, Object> diff(String... patches) {
        List<Map<String, Object>> files = new ArrayList<>();
        for (String p : patches) {
            Map<String, Object> f = new HashMap<>();
            f.put("patch", p);
            files.add(f);
        }
        return Map.of("files", files);
    }

    @Test
    void smallPatchesShareAChunkAndALargeOneFillsItAndGoesOn() {
        int c = AiReviewer.CHUNK;
        List<String> chunks = AiReviewer.chunks(diff("a".repeat(100), "b".repeat(c + 5000)));
        assertEquals(2, chunks.size());
        assertEquals(c, chunks.get(0).length());
        assertEquals(5100, chunks.get(1).length());
        List<String> whole = AiReviewer.chunks(diff("a".repeat(c - 10), "b".repeat(100), null));
        assertEquals(List.of("a".repeat(c - 10), "b".repeat(100)), whole, "a patch that fits a chunk is not cut");
        assertTrue(AiReviewer.chunks(diff()).isEmpty());
    }

    @Test
    void theModelsJsonIsReadFromItsTextAndAnythingElseIsSummary() {
        StringBuilder summary = new StringBuilder();
        List<AiReviewer.Note> notes = new ArrayList<>();
        AiReviewer.read(
                "Sure! {\"summary\": \"ok\", \"comments\": [{\"path\": \"a\", \"line\": 3, \"body\": \"x\"},"
                        + " {\"path\": \"\", \"line\": 1, \"body\": \"no path\"}, {\"path\": \"b\", \"line\": 0,"
                        + " \"body\": \"no line\"}]} Bye.",
                summary,
                notes);
        assertEquals(List.of(new AiReviewer.Note("a", 3, "x")), notes);
        AiReviewer.read("plain words", summary, notes);
        assertEquals("\n\nok\n\nplain words", summary.toString());
    }
}
