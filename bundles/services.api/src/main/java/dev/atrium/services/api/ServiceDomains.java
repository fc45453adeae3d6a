package dev.atrium.services.api;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The custom domains of services, as the services capability keeps them with the rest of a service's desired state: a
 * verified domain routes to its service. The bundle that verifies domains and serves their certificates changes them
 * through here, and each change is applied to the routing table before the call returns.
 *
 * <p>It says nothing about who may see a service: a caller's bundle asks the kernel's {@code OwnerScope} about the
 * workspace {@link #spaceOf} names.
 *
 * @since 1.1
 */
@ProviderType
public interface ServiceDomains {

    /** A custom domain of a service: {@code status} is "pending" or "verified", {@code verifiedBy} "http" or "dns". */
    record Domain(
            String id,
            String serviceId,
            String domain,
            String token,
            String status,
            String verifiedBy,
            Instant verifiedAt,
            String lastCheck,
            Instant createdAt) {

        public boolean verified() {
            return "verified".equals(status);
        }
    }

    /** A domain name that is already a custom domain of that service. */
    final class AlreadyAdded extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public AlreadyAdded(String domain) {
            super("the domain " + domain + " is already added to this service");
        }
    }

    /** Another service verified the domain first: it routes there. */
    final class VerifiedElsewhere extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public VerifiedElsewhere(String domain) {
            super("another service has verified " + domain + "; it routes there until that service removes it");
        }
    }

    /** The workspace of the service {@code serviceId}, when there is such a service. */
    Optional<String> spaceOf(String serviceId);

    /** The domains of a service, oldest first. */
    List<Domain> domains(String serviceId);

    Optional<Domain> domain(String domainId);

    /** Every verified domain, of every service. */
    List<Domain> verified();

    /**
     * Adds {@code domain} (a lower-case host name the caller checked) to a service, pending until verified, with a new
     * token to prove it by.
     *
     * @throws AlreadyAdded when the service has it already
     */
    Domain add(String serviceId, String domain);

    /** Whether a service other than {@code serviceId} has verified {@code domain}. */
    boolean verifiedElsewhere(String domain, String serviceId);

    /**
     * Records a check of a domain: verified or not, how, and what was found. A verified domain routes to its service
     * from the table this call publishes.
     *
     * @return the domain as stored, or empty when it is gone
     * @throws VerifiedElsewhere when the check verified a domain another service verified first
     */
    Optional<Domain> checked(String domainId, boolean verified, String method, String detail);

    /** Removes a domain (and what depends on it, such as its certificate); whether it was there. */
    boolean remove(String domainId);
}
