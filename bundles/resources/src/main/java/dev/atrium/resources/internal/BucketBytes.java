package dev.atrium.resources.internal;

import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageSampler;
import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.ObjectFacet;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The bytes each r2 bucket stores, from its provider's {@link ObjectFacet#stats}, for billing's {@code r2_byte_hours}. */
@Component(service = UsageSampler.class)
public class BucketBytes implements UsageSampler {

    private static final Logger LOG = LoggerFactory.getLogger(BucketBytes.class);
    private static final int PAGE = 500;

    private final ResourceStore store;
    private final Providers providers;
    private final Runtime runtime;

    @Activate
    public BucketBytes(@Reference ResourceStore store, @Reference Providers providers, @Reference Runtime runtime) {
        this.store = store;
        this.providers = providers;
        this.runtime = runtime;
    }

    @Override
    public String meter() {
        return Meters.R2_BYTE_HOURS;
    }

    @Override
    public List<Sample> sample() {
        List<Sample> out = new ArrayList<>();
        for (int offset = 0; ; offset += PAGE) {
            List<ResourceRow> rows = store.ofType("r2", PAGE, offset);
            for (ResourceRow row : rows) {
                Optional<ResourceProvider> provider = providers.find(row.type, row.backend);
                if (provider.isEmpty() || !(provider.get() instanceof ObjectFacet objects)) {
                    continue; // its provider is not running now: a later sample of the hour counts it
                }
                try {
                    out.add(new Sample(
                            row.spaceId,
                            row.id,
                            objects.stats(runtime.context(row, Access.READ)).totalBytes()));
                } catch (ResourceException | RuntimeException e) {
                    LOG.debug("resources: the bytes of {} were not sampled: {}", row.id, e.toString());
                }
            }
            if (rows.size() < PAGE) {
                return out;
            }
        }
    }
}
