package dev.atrium.streams.internal;

/** Where a subscription's events go: one client's connection. Implementations must not block. */
interface Sink<E> {
    /** Sends one event; false when the client is gone or too slow. */
    boolean send(E event);

    /** Sends a keep-alive; false when the client is gone. */
    boolean heartbeat();

    /** The subscription ended: after its terminal event ({@code terminal}), or because the client or the hub went. */
    void close(boolean terminal);

    /** Events follow at once: until {@link #release}, the sink may keep them for one write. Calls nest. */
    default void hold() {}

    default void release() {}
}
