package dev.atrium.kernel.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class NamedThreadsTest {

    @Test
    void threadsAreNamedInTheOrderTheyAreMadeAndAreDaemons() {
        var factory = NamedThreads.factory("atrium-test");
        Thread first = factory.newThread(() -> {});
        Thread second = factory.newThread(() -> {});
        assertEquals(List.of("atrium-test-1", "atrium-test-2"), List.of(first.getName(), second.getName()));
        assertTrue(first.isDaemon() && second.isDaemon());
    }

    @Test
    void repeatedWorkRunsAgainAfterARunThatThrows() throws InterruptedException {
        ScheduledExecutorService scheduler = NamedThreads.scheduler("atrium-test-repeat");
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch thirdRun = new CountDownLatch(3);
        try {
            scheduler.execute(() -> Thread.currentThread().setUncaughtExceptionHandler((t, e) -> reported.add(e)));
            NamedThreads.repeat(
                    scheduler,
                    () -> {
                        thirdRun.countDown();
                        if (runs.incrementAndGet() == 1) {
                            throw new IllegalStateException("the first run fails");
                        }
                    },
                    Duration.ZERO,
                    Duration.ofMillis(10));
            assertTrue(thirdRun.await(5, TimeUnit.SECONDS), "runs after the failing one: " + runs);
            assertEquals("the first run fails", reported.get(0).getMessage());
        } finally {
            scheduler.shutdownNow();
        }
    }
}
