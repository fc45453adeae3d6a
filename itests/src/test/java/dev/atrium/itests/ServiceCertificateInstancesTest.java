package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Two instances on one PostgreSQL, each with its HTTPS listener: a certificate ordered through one is served by the
 * other from its next handshakes (a NOTIFY on the services' channel), and a domain removed through one stops being served
 * by the other. The instances share the services' sealing key (as they must: the certificate's key is stored sealed).
 */
class ServiceCertificateInstancesTest {

    @Test
    void aCertificateIssuedOrRemovedThroughOneInstanceIsServedOrDroppedByTheOther() throws Throwable {
        Assumptions.assumeTrue(Pebble.installed(), "pebble is not installed (./atrium test installs it)");
        TestDatabase db = TestDatabase.create();
        try (TestDns dns = new TestDns();
                Pebble pebble = Pebble.prepare(dns)) {
            int httpsA = Pebble.freePort();
            int httpsB = Pebble.freePort();
            Map<String, String> envA = new HashMap<>(pebble.env());
            envA.put("ATRIUM_SERVICES_HTTPS_PORT", "" + httpsA);
            AtriumServer a = AtriumServer.launch(Files.createTempDirectory("atrium-tls-a-"), db, envA);
            Path dataB = Files.createTempDirectory("atrium-tls-b-");
            AtriumServer b = null;
            try {
                Files.createSymbolicLink(dataB.resolve("keys"), a.data.resolve("keys"));
                Map<String, String> envB = new HashMap<>(pebble.env());
                envB.put("ATRIUM_SERVICES_HTTPS_PORT", "" + httpsB);
                envB.put("ATRIUM_DB_URL", db.url());
                b = AtriumServer.launch(dataB, null, envB);
                pebble.start(a.port, Map.of());
                SSLContext trust = Pebble.trusting(pebble.root());

                User u = a.newUser();
                String id = ServicesTest.createService(u, ServicesTest.unique("instances-tls"));
                String base = "/api/services/" + id + "/custom-domains";
                String name = "both.example.test";
                String domainId = ServiceCertificatesTest.verified(u, base, name, dns);
                assertEquals(null, TlsClient.servedSerial(httpsB, trust, name));

                Http.Reply issued = u.http().post(base + "/" + domainId + "/refresh-ssl", null);
                assertEquals(200, issued.status(), issued.body());
                BigInteger onA = TlsClient.servedSerial(httpsA, trust, name);
                assertTrue(onA != null, "served at once by the instance that ordered it");
                long t0 = System.nanoTime();
                assertEquals(
                        onA,
                        eventually(() -> TlsClient.servedSerial(httpsB, trust, name), true),
                        "served by the other instance");
                long heardMillis = (System.nanoTime() - t0) / 1_000_000;

                assertEquals(200, u.http().delete(base + "/" + domainId).status());
                assertEquals(
                        null,
                        TlsClient.servedSerial(httpsA, trust, name),
                        "dropped at once by the instance that removed it");
                assertEquals(
                        null,
                        eventually(() -> TlsClient.servedSerial(httpsB, trust, name), false),
                        "dropped by the other instance");
                System.out.println("the other instance served the new certificate after " + heardMillis + " ms");
            } finally {
                if (b != null) {
                    b.stop();
                }
                AtriumServer.deleteTree(dataB.toFile());
                a.close();
            }
        }
    }

    /** The probe's value once it is non-null ({@code present}) or null (not), within 5 s; else the last one. */
    private static BigInteger eventually(java.util.function.Supplier<BigInteger> probe, boolean present)
            throws InterruptedException {
        BigInteger last = null;
        for (int i = 0; i < 100; i++) {
            last = probe.get();
            if ((last != null) == present) {
                return last;
            }
            Thread.sleep(50);
        }
        return last;
    }
}
