package dev.atrium.kernel.internal.http;

import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;

/**
 * Whether the database answers, as the database bundle publishes it: its DataSource's registration carries
 * {@value #UNREACHABLE} (why) while its watch gets no answer. Read per health request, from the registry, so the
 * health says so within the watch's period (a second) and needs no connection of its own.
 */
@Component(service = DatabaseHealth.class)
public class DatabaseHealth {

    static final String UNREACHABLE = "atrium.database.unreachable";

    private final BundleContext context;

    @Activate
    public DatabaseHealth(BundleContext context) {
        this.context = context;
    }

    /** What is not ready: the database first when it does not answer, then {@code others}. */
    public List<String> withDatabase(List<String> others) {
        ServiceReference<DataSource> ref;
        try {
            ref = context.getServiceReference(DataSource.class);
        } catch (IllegalStateException stopping) {
            return others;
        }
        Object why = ref == null ? null : ref.getProperty(UNREACHABLE);
        if (why == null) {
            return others;
        }
        List<String> all = new ArrayList<>(others.size() + 1);
        all.add("the database does not answer: " + why);
        all.addAll(others);
        return all;
    }
}
