package dev.atrium.kernel.internal.keepsakes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class KeepsakeStoreTest {

    private static Process sleeper() throws Exception {
        return new ProcessBuilder("sleep", "60").start();
    }

    @Test
    void theNextRevisionTakesWhatTheBundleKeptAndNoOtherBundleCan() throws Exception {
        KeepsakeStore store = new KeepsakeStore();
        Process p = sleeper();
        try {
            store.keep(
                    "dev.atrium.a",
                    "procs",
                    Map.of("list", List.of(Map.of("process", p, "port", 4242))),
                    Duration.ofSeconds(30));
            assertTrue(store.take("dev.atrium.b", "procs").isEmpty(), "another bundle's keepsakes are not this one's");
            Map<String, Object> taken = store.take("dev.atrium.a", "procs").orElseThrow();
            assertSame(p, ((Map<?, ?>) ((List<?>) taken.get("list")).get(0)).get("process"));
            assertTrue(store.take("dev.atrium.a", "procs").isEmpty(), "taken once");
            assertTrue(p.isAlive());
        } finally {
            p.destroyForcibly();
            store.deactivate();
        }
    }

    @Test
    void whatIsNotTakenInTimeIsClosed() throws Exception {
        KeepsakeStore store = new KeepsakeStore();
        Process p = sleeper();
        store.keep("dev.atrium.a", "procs", Map.of("process", p), Duration.ofMillis(200));
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "the process was destroyed once nobody took it");
        assertTrue(store.take("dev.atrium.a", "procs").isEmpty());
        store.deactivate();
    }

    @Test
    void stoppingTheKernelClosesWhatIsKept() throws Exception {
        KeepsakeStore store = new KeepsakeStore();
        Process p = sleeper();
        store.keep("dev.atrium.a", "procs", Map.of("process", p), Duration.ofMinutes(5));
        store.deactivate();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        Process late = sleeper();
        store.keep("dev.atrium.a", "procs", Map.of("process", late), Duration.ofMinutes(5));
        assertTrue(late.waitFor(10, TimeUnit.SECONDS), "kept after the kernel stopped: closed at once");
    }

    /** A bundle's own class would keep its old class loader alive. */
    private record Mine(int x) {}

    @Test
    void onlyJdkTypesMayBeKept() {
        KeepsakeStore store = new KeepsakeStore();
        try {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class,
                    () -> store.keep(
                            "dev.atrium.a", "k", Map.of("nested", List.of(new Mine(1))), Duration.ofSeconds(5)));
            assertTrue(e.getMessage().contains("not a JDK type"), e.getMessage());
            assertFalse(store.take("dev.atrium.a", "k").isPresent());
            store.keep(
                    "dev.atrium.a",
                    "k",
                    Map.of("s", "text", "n", 1L, "m", Map.of("a", List.of(1, 2))),
                    Duration.ofSeconds(5));
            assertEquals("text", store.take("dev.atrium.a", "k").orElseThrow().get("s"));
        } finally {
            store.deactivate();
        }
    }
}
