package dev.atrium.services.domains.internal;

import dev.atrium.kernel.api.HealthCheck;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The custom domains' certificates in the operator's health view: a served certificate in the second half of its
 * renewal window ({@code certRenewBeforeDays}, 30 days: so within 15) has missed renewals for that long and is a
 * warning; one past its expiry is a failure. Read from the certificates served, in memory.
 */
@Component(service = HealthCheck.class, configurationPid = DomainsConfig.PID)
public class CertificateHealth implements HealthCheck {

    private final Certificates certificates;
    private final Duration near;

    @Activate
    public CertificateHealth(DomainsConfig config, @Reference Certificates certificates) {
        this.certificates = certificates;
        this.near = Duration.ofDays(Math.max(0, config.certRenewBeforeDays())).dividedBy(2);
    }

    @Override
    public String name() {
        return "certificates";
    }

    @Override
    public Result check() {
        return of(certificates.served(), certificates.now(), near);
    }

    static Result of(List<Certificates.Served> served, Instant now, Duration near) {
        List<Certificates.Served> sorted = new ArrayList<>(served);
        sorted.sort(Comparator.comparing(Certificates.Served::expiresAt));
        List<String> details = new ArrayList<>();
        int expired = 0;
        for (Certificates.Served s : sorted) {
            if (s.expiresAt().isBefore(now)) {
                expired++;
                details.add(s.domain() + " expired " + s.expiresAt());
            } else if (s.expiresAt().isBefore(now.plus(near))) {
                details.add(s.domain() + " expires " + s.expiresAt());
            }
        }
        String of = served.size() == 1 ? "1 certificate served" : served.size() + " certificates served";
        if (expired > 0) {
            return new Result(Result.FAILED, of + ", " + expired + " expired", details);
        }
        if (!details.isEmpty()) {
            return new Result(
                    Result.WARNING,
                    of + ", " + details.size() + " expiring within " + near.toDays() + " days",
                    details);
        }
        return new Result(Result.OK, of + ", none expiring within " + near.toDays() + " days", List.of());
    }
}
