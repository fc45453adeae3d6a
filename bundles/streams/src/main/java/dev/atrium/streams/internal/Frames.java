package dev.atrium.streams.internal;

import dev.atrium.streams.api.Feed;
import java.util.LinkedHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Frames shared by the subscribers of an event. The few events being fanned out right now (one per lane, or one per
 * busy stream) are asked for again and again at the same time: a lock-free ring of the last ones, by identity. Behind
 * it, frames by stream and position, for events read from the table once per subscriber (backlogs after a reconnect,
 * a lane catching up on more events than the ring holds): up to {@link #SHARED_BYTES}. A position is never reused
 * within its stream ({@link Feed}), so the key names one event.
 */
final class Frames<E> {
    static final int SHARED_BYTES = 8 * 1024 * 1024;

    private record Made(Object event, Frame frame) {}

    private record Key(String stream, long position) {}

    private final Feed<E> feed;
    private final AtomicReferenceArray<Made> recent = new AtomicReferenceArray<>(16);
    private final AtomicInteger next = new AtomicInteger();
    private final LinkedHashMap<Key, Frame> shared = new LinkedHashMap<>(256, 0.75f, true);
    private long sharedBytes;

    Frames(Feed<E> feed) {
        this.feed = feed;
    }

    Frame of(E e) {
        for (int i = 0; i < recent.length(); i++) {
            Made m = recent.get(i);
            if (m != null && m.event == e) {
                return m.frame;
            }
        }
        long position = feed.position(e);
        Key key = new Key(feed.key(e), position);
        Frame frame;
        synchronized (shared) {
            frame = shared.get(key);
        }
        if (frame == null) {
            frame = Frame.of(position, feed.type(e), feed.json(e));
            synchronized (shared) {
                Frame earlier = shared.putIfAbsent(key, frame);
                if (earlier != null) {
                    frame = earlier;
                } else {
                    sharedBytes += frame.text.length;
                    for (var oldest = shared.entrySet().iterator(); sharedBytes > SHARED_BYTES && oldest.hasNext(); ) {
                        sharedBytes -= oldest.next().getValue().text.length;
                        oldest.remove();
                    }
                }
            }
        }
        recent.set(Math.floorMod(next.getAndIncrement(), recent.length()), new Made(e, frame));
        return frame;
    }
}
