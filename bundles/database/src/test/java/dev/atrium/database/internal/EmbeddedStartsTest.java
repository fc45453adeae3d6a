package dev.atrium.database.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EmbeddedStartsTest {

    @Test
    void aStartThatLostItsPortIsTriedAgainAndOneThatNeverStartsFailsAfterThreeAttempts() throws IOException {
        AtomicInteger tries = new AtomicInteger();
        assertNull(EmbeddedStarts.withRetries("test", () -> {
            if (tries.incrementAndGet() < 3) {
                throw new IllegalStateException("Gave up waiting for server to start after 10000ms");
            }
            return null;
        }));
        assertEquals(3, tries.get());

        AtomicInteger never = new AtomicInteger();
        assertThrows(
                IOException.class,
                () -> EmbeddedStarts.withRetries("test", () -> {
                    never.incrementAndGet();
                    throw new IOException("could not create any TCP/IP sockets");
                }));
        assertEquals(EmbeddedStarts.ATTEMPTS, never.get());
    }
}
