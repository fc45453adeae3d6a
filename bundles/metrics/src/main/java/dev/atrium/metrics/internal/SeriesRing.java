package dev.atrium.metrics.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The last samples of the server's figures, oldest overwritten: a fixed array, so an hour of history costs the same
 * memory whatever the server does, and nothing is allocated per sample beyond the sample itself.
 */
final class SeriesRing {

    /** One sampling: when (epoch milliseconds) and each series' value then, keyed by {@link SeriesKey}. */
    record Sample(long at, Map<SeriesKey, Double> values) {}

    /** A series: a figure's name and the one label it may have (a capability, or {@code all}). */
    record SeriesKey(String name, String label) {}

    private final Sample[] samples;
    private int next;
    private int size;

    SeriesRing(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("a ring holds at least one sample");
        }
        samples = new Sample[capacity];
    }

    synchronized void add(Sample sample) {
        samples[next] = sample;
        next = (next + 1) % samples.length;
        size = Math.min(size + 1, samples.length);
    }

    /** The samples taken at or after {@code since} (epoch milliseconds), oldest first. */
    synchronized List<Sample> since(long since) {
        List<Sample> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            Sample s = samples[(next - size + i + samples.length) % samples.length];
            if (s.at() >= since) {
                out.add(s);
            }
        }
        return out;
    }

    int capacity() {
        return samples.length;
    }
}
