package dev.atrium.streams.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.servlet.AsyncContext;
import javax.servlet.AsyncEvent;
import javax.servlet.AsyncListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One SSE client. Frames queue here and go out in one write when the previous write is done, never blocking the thread
 * that hands them over; a client that leaves {@code maxQueuedBytes} unread is dropped (it resumes with
 * {@code Last-Event-ID}).
 */
final class SseStream<E> implements Sink<E>, AsyncListener {
    private static final Logger LOG = LoggerFactory.getLogger(SseStream.class);

    private final Function<SseStream<E>, Subscription> subscribe;
    private final Consumer<SseStream<E>> ended;
    private final Frames<E> frames;
    private final AsyncContext async;
    private final Output out;
    private final int maxQueuedBytes;
    private final ArrayDeque<Frame> queue = new ArrayDeque<>();
    private int queuedBytes;
    private boolean started;
    private int held;
    private boolean writing;
    private boolean closing;
    private boolean completed;
    private volatile boolean failed;
    private volatile Subscription subscription;

    /** {@code subscribe} is called once, by {@link #start}; {@code ended} when the stream ends. */
    SseStream(
            AsyncContext async,
            Output out,
            Frames<E> frames,
            int maxQueuedBytes,
            Function<SseStream<E>, Subscription> subscribe,
            Consumer<SseStream<E>> ended) {
        this.async = async;
        this.out = out;
        this.frames = frames;
        this.maxQueuedBytes = maxQueuedBytes;
        this.subscribe = subscribe;
        this.ended = ended;
        out.bind(this::written, this::writeFailed);
    }

    /** Sends the headers, then subscribes: the backlog and live events follow. */
    void start() {
        synchronized (this) {
            if (started) {
                return;
            }
            started = true;
            writing = true;
            out.open();
        }
        // outside this stream's lock: a fan-out holds the subscription's lock and then takes this one
        Subscription s = subscribe.apply(this);
        subscription = s;
        if (failed && s != null) {
            s.close();
        }
    }

    @Override
    public boolean send(E event) {
        return offer(frames.of(event));
    }

    @Override
    public boolean heartbeat() {
        return offer(Frame.HEARTBEAT);
    }

    @Override
    public synchronized void hold() {
        held++;
    }

    @Override
    public synchronized void release() {
        if (--held == 0) {
            drain();
        }
    }

    @Override
    public synchronized void close(boolean terminal) {
        closing = true;
        if (failed) {
            complete();
        } else {
            drain();
        }
    }

    private synchronized boolean offer(Frame frame) {
        if (failed || closing) {
            return false;
        }
        if (queuedBytes + frame.text.length > maxQueuedBytes) {
            fail();
            return false;
        }
        queue.add(frame);
        queuedBytes += frame.text.length;
        drain();
        return !failed;
    }

    /** Starts the next write (everything queued, in order, as one write) unless one is under way; holds the lock. */
    private void drain() {
        if (!started || writing || held > 0 || completed || failed) {
            return;
        }
        if (queue.isEmpty()) {
            if (closing) {
                complete();
            }
            return;
        }
        queuedBytes = 0;
        writing = true;
        try {
            if (queue.size() == 1) {
                out.write(queue.poll());
            } else {
                List<Frame> batch = new ArrayList<>(queue);
                queue.clear();
                out.write(batch);
            }
        } catch (RuntimeException
                | Error e) { // an Error too (no direct memory left): the stream must not stay "writing"
            writing = false;
            fail();
            if (e instanceof Error err) {
                throw err;
            }
        }
    }

    private synchronized void written() {
        writing = false;
        if (failed) {
            complete();
        } else {
            drain();
        }
    }

    private synchronized void writeFailed(Throwable t) {
        writing = false;
        if (failed) {
            complete();
        } else {
            fail();
        }
    }

    /** The client is gone or too slow: no later frame is written, the subscription ends. */
    private void fail() {
        if (failed) {
            return;
        }
        failed = true;
        queue.clear();
        queuedBytes = 0;
        complete();
        Subscription s = subscription;
        if (s != null) {
            s.close();
        }
    }

    private void complete() {
        if (completed || writing) {
            return; // a write under way: its outcome completes the stream
        }
        completed = true;
        ended.accept(this);
        try {
            async.complete();
        } catch (RuntimeException e) {
            LOG.debug("completing an event stream", e);
        }
    }

    /** The hub closes: the client reconnects (to the new version) and resumes with Last-Event-ID. */
    synchronized void end() {
        fail();
    }

    @Override
    public void onComplete(AsyncEvent event) {
        ended.accept(this);
        Subscription s = subscription;
        if (s != null) {
            s.close();
        }
    }

    @Override
    public void onTimeout(AsyncEvent event) {
        end();
    }

    @Override
    public void onError(AsyncEvent event) {
        end();
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
        // not restarted
    }
}
