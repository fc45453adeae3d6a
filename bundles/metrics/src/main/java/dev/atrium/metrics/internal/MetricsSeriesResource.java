package dev.atrium.metrics.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import dev.atrium.metrics.internal.SeriesRing.Sample;
import dev.atrium.metrics.internal.SeriesRing.SeriesKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code GET /admin/metrics/series}: the sampled figures of the last hour (or {@code ?minutes=}), for the console's
 * charts. Every series' {@code values} line up with {@code times}; a null is a sample that did not have it.
 */
@KernelResource
@Component(service = MetricsSeriesResource.class)
@Path("/admin/metrics/series")
@Produces(MediaType.APPLICATION_JSON)
public class MetricsSeriesResource {

    /** One figure over time: {@code label} a capability ({@code all} for every one, and for figures of the server). */
    public record Series(String name, String label, List<Double> values) {}

    /** The samples' times in epoch seconds, the interval between them, and the series. */
    public record SeriesAnswer(
            @JsonProperty("interval_seconds") long intervalSeconds, List<Long> times, List<Series> series) {}

    private final Metrics metrics;
    private final SeriesSampler sampler;

    @Activate
    public MetricsSeriesResource(@Reference Metrics metrics, @Reference SeriesSampler sampler) {
        this.metrics = metrics;
        this.sampler = sampler;
    }

    @GET
    @OperatorOnly
    public SeriesAnswer series(@QueryParam("minutes") String minutes) {
        if (!metrics.enabled()) {
            throw ApiException.notFound("metrics are off (ATRIUM_METRICS=false)");
        }
        return answer(sampler.last(minutes(minutes) * 60_000L), sampler.intervalMillis() / 1000);
    }

    static int minutes(String minutes) {
        if (minutes == null || minutes.isEmpty()) {
            return 60;
        }
        if (!minutes.matches("[0-9]{1,2}") || Integer.parseInt(minutes) < 1 || Integer.parseInt(minutes) > 60) {
            throw ApiException.badRequest("minutes must be a whole number from 1 to 60");
        }
        return Integer.parseInt(minutes);
    }

    static SeriesAnswer answer(List<Sample> samples, long intervalSeconds) {
        List<Long> times = new ArrayList<>(samples.size());
        Map<SeriesKey, Double[]> columns =
                new TreeMap<>(Comparator.comparing(SeriesKey::name).thenComparing(SeriesKey::label));
        for (int i = 0; i < samples.size(); i++) {
            Sample s = samples.get(i);
            times.add(s.at() / 1000);
            for (Map.Entry<SeriesKey, Double> e : s.values().entrySet()) {
                columns.computeIfAbsent(e.getKey(), k -> new Double[samples.size()])[i] = e.getValue();
            }
        }
        List<Series> series = new ArrayList<>(columns.size());
        columns.forEach((k, v) -> series.add(new Series(k.name(), k.label(), Arrays.asList(v))));
        return new SeriesAnswer(intervalSeconds, times, series);
    }
}
