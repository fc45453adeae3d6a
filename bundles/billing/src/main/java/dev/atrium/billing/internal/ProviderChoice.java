package dev.atrium.billing.internal;

import dev.atrium.billing.api.BillingProvider;
import dev.atrium.kernel.api.ApiException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/** The payment provider the operator chose, among those registered; none when billing is off. */
@Component(service = ProviderChoice.class)
public class ProviderChoice {

    static final String NOT_CONFIGURED = "BILLING_NOT_CONFIGURED";

    private final BillingSettings settings;
    private final List<BillingProvider> providers = new CopyOnWriteArrayList<>();

    @Activate
    public ProviderChoice(@Reference BillingSettings settings) {
        this.settings = settings;
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addProvider(BillingProvider provider) {
        providers.add(provider);
    }

    void removeProvider(BillingProvider provider) {
        providers.remove(provider);
    }

    /** The name the operator chose, {@code none} when billing is off. */
    String name() {
        return settings.billing() ? settings.provider : "none";
    }

    /** The chosen provider when it is registered and configured. */
    Optional<BillingProvider> active() {
        if (!settings.billing()) {
            return Optional.empty();
        }
        return providers.stream()
                .filter(p -> p.name().equals(settings.provider) && p.configured())
                .findFirst();
    }

    /** The chosen provider, or the clear error that billing is not configured and what is missing. */
    BillingProvider require() {
        if (!settings.billing()) {
            throw new ApiException(
                    404,
                    NOT_CONFIGURED,
                    "billing is not configured on this server: no payment provider is chosen (ATRIUM_BILLING_PROVIDER)");
        }
        Optional<BillingProvider> named = providers.stream()
                .filter(p -> p.name().equals(settings.provider))
                .findFirst();
        if (named.isEmpty()) {
            throw new ApiException(
                    404,
                    NOT_CONFIGURED,
                    "billing is not configured on this server: the payment provider " + settings.provider
                            + " is not installed");
        }
        if (!named.get().configured()) {
            throw new ApiException(
                    404,
                    NOT_CONFIGURED,
                    "billing is not configured on this server: the payment provider " + settings.provider + " needs "
                            + named.get().missing());
        }
        return named.get();
    }
}
