package dev.atrium.actions.internal.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DagTest {

    private static Map<String, List<String>> needs(Object... kv) {
        Map<String, List<String>> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(
                    (String) kv[i],
                    List.of(((String) kv[i + 1]).split(" ")).stream()
                            .filter(s -> !s.isEmpty())
                            .toList());
        }
        return m;
    }

    @Test
    void jobsComeAfterWhatTheyNeedAndOtherwiseInFileOrder() {
        assertEquals(
                List.of("lint", "build", "test", "deploy"),
                Dag.order(needs("deploy", "test build", "lint", "", "build", "", "test", "build")));
        assertEquals(List.of("a", "b", "c"), Dag.order(needs("a", "", "b", "", "c", "")));
    }

    @Test
    void aCycleIsNamedJobByJob() {
        assertEquals(Optional.of(List.of("a", "b", "a")), Dag.cycle(needs("a", "b", "b", "a")));
        assertEquals(Optional.of(List.of("x", "x")), Dag.cycle(needs("x", "x")));
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> Dag.order(needs("a", "", "b", "c", "c", "b")));
        assertEquals("needs form a cycle: b -> c -> b", e.getMessage());
        assertEquals(Optional.empty(), Dag.cycle(needs("a", "", "b", "a")));
    }

    @Test
    void needsOfAnUnknownJobAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Dag.order(needs("a", "ghost")));
        assertEquals("job 'a' needs unknown job 'ghost'", e.getMessage());
    }
}
