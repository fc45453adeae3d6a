package dev.atrium.services.domains.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.atrium.kernel.api.HealthCheck.Result;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class CertificateHealthTest {

    private static final Instant NOW = Instant.parse("2026-12-06T12:00:00Z");
    private static final Duration NEAR = Duration.ofDays(15);

    @Test
    void certificatesFarFromExpiryAreOk() {
        Result r = CertificateHealth.of(
                List.of(new Certificates.Served("a.example", NOW.plus(Duration.ofDays(60)))), NOW, NEAR);
        assertEquals(Result.OK, r.status());
        assertEquals("1 certificate served, none expiring within 15 days", r.summary());
        assertEquals(List.of(), r.details());
    }

    @Test
    void oneInTheSecondHalfOfItsRenewalWindowIsAWarningNamingIt() {
        Result r = CertificateHealth.of(
                List.of(
                        new Certificates.Served("far.example", NOW.plus(Duration.ofDays(60))),
                        new Certificates.Served("near.example", NOW.plus(Duration.ofDays(3)))),
                NOW,
                NEAR);
        assertEquals(Result.WARNING, r.status());
        assertEquals("2 certificates served, 1 expiring within 15 days", r.summary());
        assertEquals(List.of("near.example expires 2026-12-09T12:00:00Z"), r.details());
    }

    @Test
    void anExpiredOneIsAFailureListedFirst() {
        Result r = CertificateHealth.of(
                List.of(
                        new Certificates.Served("near.example", NOW.plus(Duration.ofDays(3))),
                        new Certificates.Served("old.example", NOW.minus(Duration.ofDays(1)))),
                NOW,
                NEAR);
        assertEquals(Result.FAILED, r.status());
        assertEquals("2 certificates served, 1 expired", r.summary());
        assertEquals(
                List.of("old.example expired 2026-12-05T12:00:00Z", "near.example expires 2026-12-09T12:00:00Z"),
                r.details());
    }

    @Test
    void noCertificateIsOk() {
        assertEquals(Result.OK, CertificateHealth.of(List.of(), NOW, NEAR).status());
    }
}
