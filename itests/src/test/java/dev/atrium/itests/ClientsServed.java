package dev.atrium.itests;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * When each load client's last finished request (answered or failed) was sent. A test that updates bundles under load
 * waits with {@link #awaitEverySince} until every client has had an answer to a request it sent after an update, instead
 * of sleeping a fixed time: the next update never comes before each client went through the new revision, and the suite
 * does not wait longer than that.
 */
final class ClientsServed {

    /** Longer than the clients' request timeout (30 s), so a held request ends as the client's failure first. */
    private static final long WAIT_NANOS = 40_000_000_000L;

    private final AtomicLongArray sent;

    ClientsServed(int clients) {
        sent = new AtomicLongArray(clients);
        long before = System.nanoTime() - 3_600_000_000_000L;
        for (int i = 0; i < clients; i++) {
            sent.set(i, before);
        }
    }

    /** Client {@code client} finished a request it sent at {@code sentNanos} ({@link System#nanoTime()}). */
    void finished(int client, long sentNanos) {
        sent.set(client, sentNanos);
    }

    /** Waits until every client finished a request sent at or after {@code sinceNanos}; fails after 40 s. */
    void awaitEverySince(long sinceNanos, String after) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (true) {
            List<Integer> waiting = new ArrayList<>();
            for (int i = 0; i < sent.length(); i++) {
                if (sent.get(i) - sinceNanos < 0) {
                    waiting.add(i);
                }
            }
            if (waiting.isEmpty()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("clients " + waiting + " had no answer within 40 s " + after);
            }
            Thread.sleep(2);
        }
    }
}
