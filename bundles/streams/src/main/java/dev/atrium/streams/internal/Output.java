package dev.atrium.streams.internal;

import java.util.List;
import java.util.function.Consumer;

/**
 * Where an SSE stream's bytes go: the headers first ({@link #open}), then one write at a time, each reported once to
 * what {@link #bind} gave, possibly before the call returns.
 */
interface Output {
    void bind(Runnable done, Consumer<Throwable> failed);

    /** Sends the response's headers. */
    void open();

    void write(Frame frame);

    /** The frames, in order, as one write. */
    void write(List<Frame> frames);
}
