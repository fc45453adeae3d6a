package dev.atrium.kernel.internal.edge;

/**
 * How fast a request body arrives, counted over the time its reader waited for the client (from a read that found
 * nothing to the read that found data), not the time the reader spent elsewhere. Once that waiting time passes the grace
 * period, a body whose bytes per second of waiting fall below the minimum is too slow. The servlet path's
 * {@link BodyRate} and the {@link RelayConnection}'s relayed bodies both keep one per body. Not thread-safe: its body's
 * reader owns it.
 */
final class BodyPace {

    private final long minBytesPerSecond;
    private final long graceNanos;
    private long bytes;
    private long waited;
    /** When the reader began to wait for the client (a read found nothing), or 0. */
    private long waitingSince;

    BodyPace(long minBytesPerSecond, long graceNanos) {
        this.minBytesPerSecond = minBytesPerSecond;
        this.graceNanos = graceNanos;
    }

    long minBytesPerSecond() {
        return minBytesPerSecond;
    }

    /** Bytes the reader got; a wait under way ends. */
    void arrived(long n, long now) {
        stopWaiting(now);
        bytes += n;
    }

    /** The client sent something (the bytes are counted when they are read): a wait under way ends. */
    void stopWaiting(long now) {
        if (waitingSince != 0) {
            waited += now - waitingSince;
            waitingSince = 0;
        }
    }

    /** A read found nothing: the reader waits for the client from now, unless it already does. */
    void waiting(long now) {
        if (waitingSince == 0) {
            waitingSince = now == 0 ? 1 : now;
        }
    }

    /** Whether the body is too slow, counting a wait still under way. */
    boolean tooSlow(long now) {
        long w = waitingSince == 0 ? waited : waited + (now - waitingSince);
        // bytes per second of waiting, in floating point: a body of many GiB does not overflow
        return w > graceNanos && bytes < minBytesPerSecond * (w / 1e9);
    }
}
