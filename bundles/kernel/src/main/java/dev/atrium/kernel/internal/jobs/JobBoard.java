package dev.atrium.kernel.internal.jobs;

import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.Jobs;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.osgi.service.component.annotations.Component;

/**
 * Every bundle's jobs: the running ones and the last {@value #FINISHED_KEPT} finished, in memory (a restart forgets
 * them: what a job did is in its own records, this is the operator's view of what runs now).
 */
@Component(service = JobBoard.class)
public class JobBoard {

    static final int FINISHED_KEPT = 100;

    private final Clock clock = Clock.systemUTC();
    private final Map<String, Entry> running = new LinkedHashMap<>();
    /** Newest first. */
    private final Deque<Entry> finished = new ArrayDeque<>();

    /** Starts a job on behalf of {@code bundle} (its symbolic name). */
    public Entry start(String kind, String title, String bundle) {
        Entry e = new Entry(Ids.id("job"), kind, title, bundle, clock.instant());
        synchronized (this) {
            running.put(e.id, e);
        }
        return e;
    }

    /** Running first (newest first), then the finished, newest first; {@code state} null for all. */
    public synchronized List<Jobs.Snapshot> list(String state) {
        List<Jobs.Snapshot> out = new ArrayList<>();
        if (state == null || Jobs.RUNNING.equals(state)) {
            running.values().stream()
                    .map(Entry::snapshot)
                    .sorted(Comparator.comparing(Jobs.Snapshot::startedAt).reversed())
                    .forEach(out::add);
        }
        for (Entry e : finished) {
            Jobs.Snapshot s = e.snapshot();
            if (state == null || state.equals(s.state())) {
                out.add(s);
            }
        }
        return out;
    }

    public synchronized Optional<Jobs.Snapshot> find(String id) {
        Entry e = running.get(id);
        if (e != null) {
            return Optional.of(e.snapshot());
        }
        return finished.stream().filter(f -> f.id.equals(id)).findFirst().map(Entry::snapshot);
    }

    private synchronized void ended(Entry e) {
        running.remove(e.id);
        finished.addFirst(e);
        while (finished.size() > FINISHED_KEPT) {
            finished.removeLast();
        }
    }

    /** One job; its fields change under the board's lock, so a snapshot is never half a change. */
    public final class Entry implements Jobs.Job {
        private final String id;
        private final String kind;
        private final String title;
        private final String bundle;
        private final Instant startedAt;
        private String state = Jobs.RUNNING;
        private long done;
        private long total;
        private String step;
        private Instant endedAt;
        private String summary;
        private String reason;

        Entry(String id, String kind, String title, String bundle, Instant startedAt) {
            this.id = id;
            this.kind = kind;
            this.title = title;
            this.bundle = bundle;
            this.startedAt = startedAt;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public void progress(long done, long total, String step) {
            synchronized (JobBoard.this) {
                if (Jobs.RUNNING.equals(state)) {
                    this.done = Math.max(0, done);
                    this.total = Math.max(0, total);
                    this.step = step;
                }
            }
        }

        @Override
        public void succeeded(String summary) {
            end(Jobs.SUCCEEDED, summary, null);
        }

        @Override
        public void failed(String reason) {
            end(Jobs.FAILED, null, reason);
        }

        @Override
        public void close() {
            end(Jobs.FAILED, null, "ended without a result");
        }

        boolean isRunning() {
            synchronized (JobBoard.this) {
                return Jobs.RUNNING.equals(state);
            }
        }

        private void end(String state, String summary, String reason) {
            synchronized (JobBoard.this) {
                if (!Jobs.RUNNING.equals(this.state)) {
                    return;
                }
                this.state = state;
                this.summary = summary;
                this.reason = reason;
                this.endedAt = clock.instant();
                if (Jobs.SUCCEEDED.equals(state) && total > 0) {
                    done = total;
                }
                ended(this);
            }
        }

        @Override
        public Jobs.Snapshot snapshot() {
            synchronized (JobBoard.this) {
                return new Jobs.Snapshot(
                        id, kind, title, state, done, total, step, startedAt, endedAt, summary, reason, bundle);
            }
        }
    }
}
