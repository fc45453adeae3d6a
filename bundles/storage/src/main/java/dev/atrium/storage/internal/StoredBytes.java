package dev.atrium.storage.internal;

import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageSampler;
import dev.atrium.kernel.api.Sql;
import java.util.List;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The bytes each workspace stores, for billing's {@code storage_byte_hours} (storage_usage, kept by a trigger). */
@Component(service = UsageSampler.class)
public class StoredBytes implements UsageSampler {

    private final Sql sql;

    @Activate
    public StoredBytes(@Reference DataSource dataSource, @Reference Storage storage /* its schema */) {
        this.sql = new Sql(dataSource);
    }

    @Override
    public String meter() {
        return Meters.STORAGE_BYTE_HOURS;
    }

    @Override
    public List<Sample> sample() {
        return sql.list(
                "SELECT space_id, bytes FROM storage_usage WHERE bytes > 0",
                rs -> new Sample(rs.getString(1), "", rs.getLong(2)));
    }
}
