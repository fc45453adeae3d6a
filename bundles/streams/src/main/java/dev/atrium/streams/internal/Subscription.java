package dev.atrium.streams.internal;

/** A client's place in a stream, as its connection sees it: ended when the client goes. */
interface Subscription {
    /** Ends the subscription (the client left, or was too slow); its sink is closed. Idempotent. */
    void close();
}
