package dev.atrium.kernel.internal.keepsakes;

import dev.atrium.kernel.api.Keepsakes;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ServiceScope;

/** The {@link Keepsakes} of one bundle (bundle-scoped: the using bundle's symbolic name is the owner). */
@Component(service = Keepsakes.class, scope = ServiceScope.BUNDLE)
public class BundleKeepsakes implements Keepsakes {

    private final KeepsakeStore store;
    private final String owner;

    @Activate
    public BundleKeepsakes(@Reference KeepsakeStore store, ComponentContext context) {
        this.store = store;
        this.owner = context.getUsingBundle().getSymbolicName();
    }

    @Override
    public void keep(String key, Map<String, ?> things, Duration within) {
        store.keep(owner, key, things, within);
    }

    @Override
    public Optional<Map<String, Object>> take(String key) {
        return store.take(owner, key);
    }
}
