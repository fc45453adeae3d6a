package dev.atrium.services.domains.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** What a domain's {@code ssl} says, from the row of its certificate. */
class CertificatesTest {

    @Test
    void aPendingOrderWhoseClaimLapsedIsShownFailedSayingItStoppedWhileOneUnderWayStaysPending() {
        Instant now = Instant.parse("2026-11-28T12:00:00Z");
        Certificates.Ssl underWay =
                new Certificates.Ssl("pending", null, null, null, null, 0, null, now.plusSeconds(60));
        assertEquals("pending", underWay.view(now).get("status"));
        assertNull(underWay.view(now).get("error"));

        Certificates.Ssl stopped =
                new Certificates.Ssl("pending", null, null, null, null, 0, null, now.minusSeconds(1));
        assertEquals("failed", stopped.view(now).get("status"));
        assertEquals(Certificates.ORDER_STOPPED, stopped.view(now).get("error"));

        // a renewal that stopped: the certificate issued before is still served, and the row says the renewal failed
        Certificates.Ssl renewalStopped = new Certificates.Ssl(
                "pending", "PEM", now.plusSeconds(86_400), "Pebble", null, 0, null, now.minusSeconds(1));
        assertEquals("failed", renewalStopped.view(now).get("status"));
        assertEquals(
                now.plusSeconds(86_400).toString(), renewalStopped.view(now).get("expires_at"));

        Certificates.Ssl expired =
                new Certificates.Ssl("active", "PEM", now.minusSeconds(1), "Pebble", null, 0, null, null);
        assertEquals("expired", expired.view(now).get("status"));
    }
}
