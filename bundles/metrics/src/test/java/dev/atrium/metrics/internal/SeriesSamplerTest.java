package dev.atrium.metrics.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.metrics.internal.SeriesRing.Sample;
import dev.atrium.metrics.internal.SeriesRing.SeriesKey;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SeriesSamplerTest {

    private static final long SECOND = 1_000_000_000L;

    private static Timer requests(PrometheusMeterRegistry registry, String capability, String status) {
        return Timer.builder(RequestMeters.NAME)
                .tag("method", "GET")
                .tag("route", "/api/x")
                .tag("status", status)
                .tag("capability", capability)
                .serviceLevelObjectives(
                        Duration.ofMillis(5),
                        Duration.ofMillis(10),
                        Duration.ofMillis(25),
                        Duration.ofMillis(50),
                        Duration.ofMillis(100),
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(5))
                .register(registry);
    }

    private static Double value(Sample s, String name, String label) {
        return s.values().get(new SeriesKey(name, label));
    }

    @Test
    void anIntervalsRequestsBecomeARatePerCapabilityWithAP99FromTheBucketsAndErrorsFromThe5xx() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        AtomicLong holds = new AtomicLong();
        FunctionCounter.builder("atrium.update.gate.holds", holds, AtomicLong::get)
                .register(registry);
        SeriesSampler sampler = new SeriesSampler(registry, 5, false);
        try {
            Timer memories = requests(registry, "memories", "2xx");
            memories.record(20, TimeUnit.MILLISECONDS); // before the baseline: not counted
            sampler.sample(1_000, SECOND);
            for (int i = 0; i < 98; i++) {
                memories.record(20, TimeUnit.MILLISECONDS);
            }
            // a timer first seen in this interval counts all of its requests
            requests(registry, "memories", "5xx").record(3, TimeUnit.SECONDS);
            requests(registry, "repos", "2xx").record(7, TimeUnit.MILLISECONDS);
            holds.addAndGet(2);
            sampler.sample(6_000, 6 * SECOND);
            sampler.sample(11_000, 11 * SECOND);

            List<Sample> samples = sampler.last(Long.MAX_VALUE / 2);
            assertEquals(2, samples.size(), "the baseline is no sample");
            Sample busy = samples.get(0);
            assertEquals(99 / 5.0, value(busy, SeriesSampler.REQUESTS, "memories"), 1e-9);
            assertEquals(1 / 5.0, value(busy, SeriesSampler.REQUESTS, "repos"), 1e-9);
            assertEquals(100 / 5.0, value(busy, SeriesSampler.REQUESTS, SeriesSampler.ALL), 1e-9);
            assertEquals(1 / 5.0, value(busy, SeriesSampler.ERRORS, "memories"), 1e-9);
            assertEquals(0.0, value(busy, SeriesSampler.ERRORS, "repos"));
            // 99 requests: the 99th (98.01 of them) lies above 1 s, in the bucket up to 5 s
            double p99 = value(busy, SeriesSampler.P99, "memories");
            assertTrue(p99 > 1 && p99 <= 5, "p99 " + p99);
            double reposP99 = value(busy, SeriesSampler.P99, "repos");
            assertTrue(reposP99 > 0.005 && reposP99 <= 0.010, "p99 " + reposP99);
            assertEquals(2.0, value(busy, SeriesSampler.GATE_HOLDS, SeriesSampler.ALL));
            assertTrue(value(busy, SeriesSampler.HEAP, SeriesSampler.ALL) == null, "no JVM binder in this registry");

            Sample quiet = samples.get(1);
            assertEquals(0.0, value(quiet, SeriesSampler.REQUESTS, SeriesSampler.ALL));
            assertNull(value(quiet, SeriesSampler.P99, "memories"), "no request, no p99");
            assertEquals(0.0, value(quiet, SeriesSampler.GATE_HOLDS, SeriesSampler.ALL));
        } finally {
            sampler.stop();
            registry.close();
        }
    }

    @Test
    void theQuantileIsInterpolatedWithinItsBucketAsHistogramQuantileDoes() {
        TreeMap<Double, Long> cumulative = new TreeMap<>(Map.of(0.1, 50L, 0.2, 100L));
        assertEquals(0.05, SeriesSampler.quantile(0.25, 100, cumulative), 1e-9);
        assertEquals(0.198, SeriesSampler.quantile(0.99, 100, cumulative), 1e-9);
        assertEquals(0.2, SeriesSampler.quantile(0.99, 200, cumulative), 1e-9, "above the highest bound: that bound");
    }

    @Test
    void theRingKeepsTheNewestSamplesInOrder() {
        SeriesRing ring = new SeriesRing(3);
        for (long at = 1; at <= 5; at++) {
            ring.add(new Sample(at, Map.of()));
        }
        assertEquals(List.of(3L, 4L, 5L), ring.since(0).stream().map(Sample::at).toList());
        assertEquals(List.of(4L, 5L), ring.since(4).stream().map(Sample::at).toList());
        assertThrows(IllegalArgumentException.class, () -> new SeriesRing(0));
    }

    @Test
    void theSeriesAnswerLinesEachSeriesUpWithTheTimesAndRefusesABadWindow() {
        SeriesKey a = new SeriesKey(SeriesSampler.REQUESTS, "all");
        SeriesKey b = new SeriesKey(SeriesSampler.P99, "repos");
        var answer = MetricsSeriesResource.answer(
                List.of(new Sample(5_000, Map.of(a, 1.0)), new Sample(10_000, Map.of(a, 2.0, b, 0.1))), 5);
        assertEquals(List.of(5L, 10L), answer.times());
        assertEquals(SeriesSampler.P99, answer.series().get(0).name());
        assertEquals(java.util.Arrays.asList(null, 0.1), answer.series().get(0).values());
        assertEquals(List.of(1.0, 2.0), answer.series().get(1).values());
        assertEquals(60, MetricsSeriesResource.minutes(null));
        assertEquals(15, MetricsSeriesResource.minutes("15"));
        for (String bad : List.of("0", "61", "-1", "x", "1e3", "600")) {
            assertEquals(
                    400,
                    assertThrows(ApiException.class, () -> MetricsSeriesResource.minutes(bad))
                            .status());
        }
    }
}
