package dev.atrium.streams.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.util.Callback;

/**
 * Frames as HTTP/1.1 chunks, written straight to a connection whose response headers went out already: each write one
 * {@code EndPoint.flush} of chunks in direct memory shared by every subscriber; what the socket does not take at once
 * waits in the end point's write flusher, until the connection's idle timeout ({@link #idleTimedOut}).
 */
final class ChunkedEndPointOutput implements Output {
    private final EndPoint endPoint;
    private Runnable done;
    private Callback callback;
    /** A write waits for the socket. */
    private volatile boolean pending;

    ChunkedEndPointOutput(EndPoint endPoint) {
        this.endPoint = endPoint;
    }

    @Override
    public void bind(Runnable done, Consumer<Throwable> failed) {
        this.done = done;
        this.callback = Callback.from(
                () -> {
                    pending = false;
                    done.run();
                },
                x -> {
                    pending = false;
                    failed.accept(x);
                });
    }

    /**
     * The connection was idle for its idle timeout. With a write waiting all that while, the client reads nothing (or
     * is gone without a word): the connection closes, which fails the write and ends the stream. A stream that merely
     * has nothing to say stays (heartbeats keep it from idling).
     */
    boolean idleTimedOut(TimeoutException timeout) {
        if (pending) {
            endPoint.close(timeout);
        }
        return false;
    }

    @Override
    public void open() {
        done.run(); // the headers went out already
    }

    @Override
    public void write(Frame frame) {
        flush(frame.chunk());
    }

    @Override
    public void write(List<Frame> frames) {
        ByteBuffer[] chunks = new ByteBuffer[frames.size()];
        for (int i = 0; i < chunks.length; i++) {
            chunks[i] = frames.get(i).chunk();
        }
        flush(chunks);
    }

    private void flush(ByteBuffer... bytes) {
        try {
            if (endPoint.flush(bytes)) {
                done.run();
            } else {
                pending = true;
                endPoint.write(callback, bytes);
            }
        } catch (IOException | RuntimeException x) {
            callback.failed(x);
        }
    }
}
