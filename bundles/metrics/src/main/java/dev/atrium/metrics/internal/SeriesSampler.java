package dev.atrium.metrics.internal;

import dev.atrium.metrics.internal.SeriesRing.Sample;
import dev.atrium.metrics.internal.SeriesRing.SeriesKey;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples the registry every few seconds (five by default) into a ring holding the last hour, for the console's
 * charts: requests per second, their p99 and the errors per capability, the update gate's holds, the database pool's
 * connections and memory. It reads the meters {@code /metrics} shows; nothing on a request's path changes.
 */
@Component(service = SeriesSampler.class)
public class SeriesSampler {

    static final String REQUESTS = "requests_per_second";
    static final String P99 = "p99_seconds";
    static final String ERRORS = "errors_per_second";
    static final String GATE_HOLDS = "gate_holds";
    static final String GATE_HELD = "gate_held_requests";
    static final String POOL_ACTIVE = "pool_connections_active";
    static final String POOL_OPEN = "pool_connections_open";
    static final String HEAP = "memory_heap_bytes";
    static final String RESIDENT = "memory_resident_bytes";
    /** The label of a figure over every capability, and of figures that have no label. */
    static final String ALL = "all";

    static final long KEEP_MILLIS = 3_600_000L;

    private static final Logger LOG = LoggerFactory.getLogger(SeriesSampler.class);

    /** A timer's count and cumulative bucket counts at the last sample. */
    private record Seen(long count, double[] buckets) {}

    /** One capability's requests in an interval: how many, how many failed (5xx), the cumulative count per bucket. */
    private static final class Interval {
        long count;
        long errors;
        final TreeMap<Double, Long> buckets = new TreeMap<>();
    }

    private final MeterRegistry registry;
    private final SeriesRing ring;
    private final long intervalMillis;
    private final Map<Meter.Id, Seen> seen = new HashMap<>();
    private final Map<String, Double> counters = new HashMap<>();
    private long lastNanos;
    private final ScheduledExecutorService scheduler;
    private final ScheduledFuture<?> sampling;

    @Activate
    public SeriesSampler(@Reference Metrics metrics, @Reference MetricsSettings settings) {
        this(metrics.registry(), settings.seriesIntervalSeconds, metrics.enabled());
    }

    SeriesSampler(MeterRegistry registry, int intervalSeconds, boolean run) {
        this.registry = registry;
        this.intervalMillis = Math.max(1, intervalSeconds) * 1000L;
        this.ring = new SeriesRing((int) Math.max(1, KEEP_MILLIS / intervalMillis));
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "atrium-metrics-series");
            t.setDaemon(true);
            return t;
        });
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        scheduler = executor;
        if (run) {
            sample(System.currentTimeMillis(), System.nanoTime()); // the baseline the first interval is counted from
            sampling = scheduler.scheduleAtFixedRate(
                    this::sampleNow, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
        } else {
            sampling = null;
        }
    }

    @Deactivate
    void stop() throws InterruptedException {
        if (sampling != null) {
            sampling.cancel(false);
        }
        scheduler.shutdownNow();
        scheduler.awaitTermination(5, TimeUnit.SECONDS);
    }

    long intervalMillis() {
        return intervalMillis;
    }

    /** The samples of the last {@code millis}, oldest first. */
    List<Sample> last(long millis) {
        return ring.since(System.currentTimeMillis() - millis);
    }

    private void sampleNow() {
        try {
            sample(System.currentTimeMillis(), System.nanoTime());
        } catch (RuntimeException e) {
            // a meter that went away in between, say: the next sample reads the registry afresh
            LOG.warn("sampling the metrics failed", e);
        }
    }

    /**
     * Reads the registry and adds a sample of the interval since the last call (none on the first: it is the
     * baseline). Called by the one sampling thread, or by tests.
     */
    synchronized void sample(long at, long nanos) {
        boolean baseline = lastNanos == 0;
        double seconds = (nanos - lastNanos) / 1e9;
        lastNanos = nanos;
        Map<SeriesKey, Double> values = new HashMap<>();
        Map<String, Interval> byCapability = requests();
        if (!baseline && seconds > 0) {
            for (Map.Entry<String, Interval> e : byCapability.entrySet()) {
                Interval i = e.getValue();
                values.put(new SeriesKey(REQUESTS, e.getKey()), i.count / seconds);
                values.put(new SeriesKey(ERRORS, e.getKey()), i.errors / seconds);
                if (i.count > 0) {
                    values.put(new SeriesKey(P99, e.getKey()), quantile(0.99, i.count, i.buckets));
                }
            }
            values.put(new SeriesKey(GATE_HOLDS, ALL), increase("atrium.update.gate.holds"));
            values.put(new SeriesKey(GATE_HELD, ALL), increase("atrium.update.gate.held.requests"));
        } else {
            increase("atrium.update.gate.holds");
            increase("atrium.update.gate.held.requests");
        }
        put(values, POOL_ACTIVE, gauges("atrium.db.pool.connections.active", null));
        put(values, POOL_OPEN, gauges("atrium.db.pool.connections.open", null));
        put(values, HEAP, gauges("jvm.memory.used", "heap"));
        put(values, RESIDENT, gauges("process.resident.memory", null));
        if (!baseline) {
            ring.add(new Sample(at, Map.copyOf(values)));
        }
    }

    private static void put(Map<SeriesKey, Double> values, String name, double value) {
        if (!Double.isNaN(value)) {
            values.put(new SeriesKey(name, ALL), value);
        }
    }

    /** Each capability's requests since the last sample, and all of them under {@link #ALL}. */
    private Map<String, Interval> requests() {
        Map<String, Interval> out = new TreeMap<>();
        Interval all = new Interval();
        out.put(ALL, all);
        for (Timer t : registry.find(RequestMeters.NAME).timers()) {
            HistogramSnapshot snapshot = t.takeSnapshot();
            CountAtBucket[] buckets = snapshot.histogramCounts();
            double[] cumulative = new double[buckets.length];
            for (int i = 0; i < buckets.length; i++) {
                cumulative[i] = buckets[i].count();
            }
            Seen before = seen.put(t.getId(), new Seen(snapshot.count(), cumulative));
            // a timer new since the last sample took all its requests in this interval
            boolean fresh =
                    before == null || before.count() > snapshot.count() || before.buckets().length != buckets.length;
            long count = snapshot.count() - (fresh ? 0 : before.count());
            if (count == 0) {
                continue;
            }
            String capability = t.getId().getTag("capability");
            Interval i = out.computeIfAbsent(capability == null ? "none" : capability, c -> new Interval());
            boolean error = "5xx".equals(t.getId().getTag("status"));
            for (Interval target : List.of(i, all)) {
                target.count += count;
                if (error) {
                    target.errors += count;
                }
                for (int b = 0; b < buckets.length; b++) {
                    if (Double.isInfinite(buckets[b].bucket(TimeUnit.SECONDS))) {
                        continue; // the quantile of a request above the highest bound is that bound
                    }
                    long inBucket = (long) (cumulative[b] - (fresh ? 0 : before.buckets()[b]));
                    target.buckets.merge(buckets[b].bucket(TimeUnit.SECONDS), inBucket, Long::sum);
                }
            }
        }
        return out;
    }

    /**
     * The {@code q} quantile of {@code count} requests from cumulative bucket counts (upper bound in seconds → requests
     * at most that long), interpolated within the bucket as Prometheus's {@code histogram_quantile} does; the highest
     * bound when the quantile lies above it.
     */
    static double quantile(double q, long count, java.util.NavigableMap<Double, Long> cumulative) {
        double rank = q * count;
        double lowerBound = 0;
        long lowerCount = 0;
        for (Map.Entry<Double, Long> e : cumulative.entrySet()) {
            if (e.getValue() >= rank) {
                long inBucket = e.getValue() - lowerCount;
                return inBucket <= 0
                        ? e.getKey()
                        : lowerBound + (e.getKey() - lowerBound) * (rank - lowerCount) / inBucket;
            }
            lowerBound = e.getKey();
            lowerCount = e.getValue();
        }
        return lowerBound;
    }

    /** How much the function counters named {@code name} (summed) rose since the last sample. */
    private double increase(String name) {
        double now = 0;
        for (FunctionCounter c : registry.find(name).functionCounters()) {
            now += c.count();
        }
        Double before = counters.put(name, now);
        return before == null || before > now ? 0 : now - before;
    }

    /** The sum of the gauges named {@code name} (those with {@code area} when given); NaN when there is none. */
    private double gauges(String name, String area) {
        double sum = Double.NaN;
        for (Gauge g : registry.find(name).gauges()) {
            if (area != null && !area.equals(g.getId().getTag("area"))) {
                continue;
            }
            double v = g.value();
            if (!Double.isNaN(v)) {
                sum = Double.isNaN(sum) ? v : sum + v;
            }
        }
        return sum;
    }
}
