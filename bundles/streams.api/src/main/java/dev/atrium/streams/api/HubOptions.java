package dev.atrium.streams.api;

/**
 * How a {@link StreamHub} runs.
 *
 * @param name names its threads ({@code atrium-<name>-lane-0}, …) and its log lines
 * @param channel the PostgreSQL channel on which the capability's transactions announce {@code key:position} with
 *        {@code pg_notify} (committed events of other instances reach subscribers here from it)
 * @param lanes the threads that write an event to the subscribers, each to its share (1–64)
 * @param heartbeatMillis how often an idle stream sends a keep-alive (an SSE comment, a WebSocket ping)
 * @param maxQueuedBytes what an SSE client may leave unread before it counts as too slow and is dropped
 * @param maxPendingMessages what a WebSocket client may leave unsent before it is dropped
 */
public record HubOptions(
        String name, String channel, int lanes, long heartbeatMillis, int maxQueuedBytes, int maxPendingMessages) {

    public HubOptions {
        if (name == null || name.isBlank() || channel == null || channel.isBlank()) {
            throw new IllegalArgumentException("a hub needs a name and a channel");
        }
        if (lanes < 1 || lanes > 64 || heartbeatMillis < 1 || maxQueuedBytes < 1024 || maxPendingMessages < 1) {
            throw new IllegalArgumentException(
                    "hub options out of range: " + lanes + " lanes, heartbeat " + heartbeatMillis + " ms, "
                            + maxQueuedBytes + " queued bytes, " + maxPendingMessages + " pending messages");
        }
    }

    /** One lane per processor (at most 16), a heartbeat every 15 s, 1 MiB unread, 256 unsent messages. */
    public static HubOptions of(String name, String channel) {
        return new HubOptions(
                name,
                channel,
                Math.max(1, Math.min(16, Runtime.getRuntime().availableProcessors())),
                15_000,
                1024 * 1024,
                256);
    }

    public HubOptions withLanes(int n) {
        return new HubOptions(name, channel, n, heartbeatMillis, maxQueuedBytes, maxPendingMessages);
    }

    public HubOptions withHeartbeatMillis(long millis) {
        return new HubOptions(name, channel, lanes, millis, maxQueuedBytes, maxPendingMessages);
    }

    public HubOptions withMaxQueuedBytes(int bytes) {
        return new HubOptions(name, channel, lanes, heartbeatMillis, bytes, maxPendingMessages);
    }
}
