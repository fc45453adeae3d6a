package dev.atrium.services.domains.internal;

import dev.atrium.kernel.api.NamedThreads;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renews the certificates of verified custom domains before they expire: every {@code certRenewCheckSeconds} (first a
 * few seconds after the start) it renews, one after the other, each certificate that expires within
 * {@code certRenewBeforeDays}, through {@link Certificates#renewNext}, which claims the domain's row so that only one
 * instance orders a domain at a time, and waits after a failure (10 minutes, doubling, at most a day; the domain's
 * {@code ssl} says {@code failed}, the error and {@code retry_at}, and the certificate issued before is still served). A
 * renewed certificate is served from the next handshake, here and on the other instances. One thread of its own.
 */
@Component(immediate = true, configurationPid = DomainsConfig.PID)
public class CertificateRenewals {

    private static final Logger LOG = LoggerFactory.getLogger(CertificateRenewals.class);
    /** The most renewals one look makes, so that a stop is never far away; the rest wait for the next look. */
    private static final int MAX_PER_LOOK = 100;

    private final Certificates certificates;
    private final Duration window;
    private final ScheduledExecutorService timer = NamedThreads.scheduler("atrium-services-renewals");
    private volatile boolean running = true;

    @Activate
    public CertificateRenewals(DomainsConfig c, @Reference Certificates certificates) {
        this.certificates = certificates;
        this.window = Duration.ofDays(Math.max(0, c.certRenewBeforeDays()));
        long every = Math.max(1, c.certRenewCheckSeconds());
        NamedThreads.repeat(timer, this::look, Duration.ofSeconds(Math.min(every, 5)), Duration.ofSeconds(every));
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        running = false;
        timer.shutdownNow();
        // an order under way ends within its own bound (acmeTimeoutSeconds); its claim lapses if the JVM goes first
        timer.awaitTermination(10, TimeUnit.SECONDS);
    }

    private void look() {
        try {
            java.time.Instant start = certificates.now();
            for (int i = 0; i < MAX_PER_LOOK && running; i++) {
                Optional<Certificates.Ssl> renewed = certificates.renewNext(window, start);
                if (renewed.isEmpty()) {
                    return;
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("services: looking for certificates to renew failed: {}", e.toString());
        }
    }
}
