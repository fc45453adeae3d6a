package dev.atrium.streams.api;

import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A capability's events, as its stream hub reads them. Events are grouped in streams by a key (a run, a Principal);
 * within a stream each event has a position, dense and increasing in commit order (an event committed later never
 * has a smaller position), so that a subscriber that saw position {@code n} has missed nothing before it.
 *
 * @param <E> the capability's event
 */
@ConsumerType
public interface Feed<E> {

    /** The stream's events after {@code position}, in position order, at most {@code limit}. */
    List<E> after(String key, long position, int limit);

    /** The stream the event belongs to. */
    String key(E event);

    /** Its position in that stream: the SSE {@code id}, what {@code Last-Event-ID} resumes after. */
    long position(E event);

    /** The SSE {@code event} field. */
    String type(E event);

    /** The event as JSON text: the SSE {@code data} and the WebSocket text message. Called often: keep it made. */
    String json(E event);

    /** The last event of its stream: subscribers get it, then their stream ends (SSE complete, WebSocket 1000). */
    default boolean terminal(E event) {
        return false;
    }

    /**
     * Whether the stream has ended already: asked after a new subscriber's backlog, so that a stream whose terminal
     * event committed while the subscriber read it still ends.
     */
    default boolean ended(String key) {
        return false;
    }
}
