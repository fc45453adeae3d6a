package dev.atrium.services.internal;

import dev.atrium.kernel.api.Ids;
import dev.atrium.services.api.ServiceDomains;
import dev.atrium.services.internal.ServiceStore.Service;
import java.util.List;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The services' custom domains for the bundle that verifies them and serves their certificates: rows of the desired
 * state like the rest of a service, and a change is applied (the routing table published, the other instances told)
 * under the deployer's lock before the call returns.
 */
@Component(service = ServiceDomains.class)
public class CustomDomains implements ServiceDomains {

    private final ServiceStore store;
    private final Deployer deployer;

    @Activate
    public CustomDomains(@Reference ServiceStore store, @Reference Deployer deployer) {
        this.store = store;
        this.deployer = deployer;
    }

    @Override
    public Optional<String> spaceOf(String serviceId) {
        return store.service(serviceId).map(Service::spaceId);
    }

    @Override
    public List<Domain> domains(String serviceId) {
        return store.domains(serviceId);
    }

    @Override
    public Optional<Domain> domain(String domainId) {
        return store.domain(domainId);
    }

    @Override
    public List<Domain> verified() {
        return store.verifiedDomains();
    }

    @Override
    public Domain add(String serviceId, String domain) {
        return store.addDomain(Ids.id("dom"), serviceId, domain, Ids.random("", 32));
    }

    @Override
    public boolean verifiedElsewhere(String domain, String serviceId) {
        return store.verifiedElsewhere(domain, serviceId);
    }

    @Override
    public Optional<Domain> checked(String domainId, boolean verified, String method, String detail) {
        return deployer.applying(() ->
                store.domain(domainId).flatMap(d -> store.checked(domainId, d.domain(), verified, method, detail)));
    }

    @Override
    public boolean remove(String domainId) {
        return deployer.applying(() -> store.deleteDomain(domainId));
    }
}
