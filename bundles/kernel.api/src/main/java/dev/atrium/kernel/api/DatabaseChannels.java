package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ConsumerType;
import org.osgi.annotation.versioning.ProviderType;

/**
 * PostgreSQL's {@code LISTEN}: how an instance hears what the others (and the database's triggers) announce with
 * {@code NOTIFY} or {@code pg_notify}. The kernel keeps one connection listening for every bundle, reconnects it with
 * one policy, and says to each listener when it starts hearing and when it stops: a notification sent while nobody
 * listened is lost, so a listener catches up from its tables when it starts hearing again.
 */
@ProviderType
public interface DatabaseChannels {

    /**
     * Listens on {@code channel} until the subscription is closed. {@link Listener#listening} comes first, once the
     * connection listens on the channel.
     *
     * @param channel a PostgreSQL identifier in lower case ({@code [a-z_][a-z0-9_]*}, at most 63 characters)
     * @throws IllegalArgumentException when {@code channel} is not one
     */
    Subscription listen(String channel, Listener listener);

    /**
     * What a channel's subscriber is told, one call at a time and in order, on the kernel's listening thread, which every
     * channel shares: a listener that does more than take note hands the work to a thread of its own.
     */
    @ConsumerType
    interface Listener {

        /** A notification on the channel, with its payload (empty when it had none). */
        void notified(String payload);

        /**
         * The connection listens on the channel: from now on every notification arrives. Comes first, and again after
         * every {@link #deaf}; what was announced before it may have been missed.
         */
        default void listening() {}

        /** The listening connection is lost: nothing arrives until the next {@link #listening}. */
        default void deaf() {}
    }

    /** A channel's listener, until closed; closing twice is harmless. */
    interface Subscription extends AutoCloseable {
        @Override
        void close();
    }
}
