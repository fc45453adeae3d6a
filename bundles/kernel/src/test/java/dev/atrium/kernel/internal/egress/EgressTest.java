package dev.atrium.kernel.internal.egress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import dev.atrium.kernel.api.ApiException;

class EgressTest {

    private final Egress strict = new Egress(false);
    private final Egress forTests = new Egress(true);

    @ParameterizedTest
    @ValueSource(strings = { "http://127.0.0.1/", "http://127.9.9.9:8080/x", "http://[::1]/", "http://10.0.0.1/",
            "http://172.16.5.4/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/",
            "http://[fd00::1]/", "http://[fc00::2]/", "http://0.0.0.0/", "http://[::]/", "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:10.1.2.3]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:7f00:1::]/", "http://100.64.0.1/",
            "http://224.0.0.1/", "http://255.255.255.255/", "http://localhost/", "http://LOCALHOST./",
            "http://metadata.google.internal/", "http://printer.local/", "http://app.localhost/", "ftp://93.184.216.34/",
            "file:///etc/passwd", "gopher://93.184.216.34/", "http://user:pw@93.184.216.34/", "http://2130706433/",
            "http://017700000001/", "http://0177.0.0.1/", "http://0x7f.0.0.1/", "http://0x7f000001/", "http://127.1/",
            "http://10.1/", "http://010.0.0.1/", "http://[::ffff:7f00:1]/", "http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
            "http://[fe80::1%25eth0]/", "http://a.b.internal./", "http://[::127.0.0.1]/" })
    void refusesNonPublicTargets(String url) {
        ApiException e = assertThrows(ApiException.class, () -> strict.check(URI.create(url)));
        assertEquals(400, e.status());
    }

    @ParameterizedTest
    @ValueSource(strings = { "http://192.0.2.1/", "http://198.51.100.7/", "http://203.0.113.200/", "http://198.18.0.1/",
            "http://198.19.255.254/", "http://192.88.99.1/", "http://[2001::1]/", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
            "http://[2001:1ff::1]/", "http://[2001:db8::1]/", "http://[3fff::1]/", "http://[3fff:fff::1]/", "http://[100::1]/",
            "http://[64:ff9b:1::a00:1]/", "http://[64:ff9b:0:0:1::5db8:d822]/", "http://[64:ff9b::c000:201]/" })
    void refusesDocumentationBenchmarkingAndProtocolRanges(String url) {
        ApiException e = assertThrows(ApiException.class, () -> strict.check(URI.create(url)));
        assertEquals(400, e.status());
    }

    @Test
    void nat64OfAPublicAddressAndAddressesNextToTheBlockedRangesAreAllowed() {
        assertTrue(!strict.check(URI.create("http://[64:ff9b::5db8:d822]/")).isEmpty());
        assertTrue(!strict.check(URI.create("http://[2001:200::1]/")).isEmpty());
        assertTrue(!strict.check(URI.create("http://198.20.0.1/")).isEmpty());
        assertTrue(!strict.check(URI.create("http://203.0.114.1/")).isEmpty());
    }

    @Test
    void theServersOwnInterfaceAddressesAreRefusedAndListedAgainLater() throws Exception {
        java.util.concurrent.atomic.AtomicInteger listed = new java.util.concurrent.atomic.AtomicInteger();
        java.net.InetAddress own = java.net.InetAddress.getByName("93.184.216.34");
        Egress guard = new Egress(false, () -> {
            listed.incrementAndGet();
            return java.util.Set.of(own);
        });
        ApiException e = assertThrows(ApiException.class, () -> guard.check(URI.create("http://93.184.216.34/")));
        assertTrue(e.getMessage().contains("own addresses"), e.getMessage());
        guard.check(URI.create("http://1.1.1.1/"));
        assertEquals(1, listed.get(), "the list is cached between checks");
    }

    @Test
    void theRealInterfaceListIncludesLoopback() {
        assertTrue(Egress.listInterfaceAddresses().stream().anyMatch(java.net.InetAddress::isLoopbackAddress));
    }

    @ParameterizedTest
    @ValueSource(strings = { "http://93.184.216.34/", "https://1.1.1.1/dns-query", "http://[2606:4700:4700::1111]/" })
    void allowsPublicAddresses(String url) {
        assertTrue(!strict.check(URI.create(url)).isEmpty());
    }

    @Test
    void theTestSettingAllowsLoopbackButNothingElsePrivate() {
        assertEquals(1, forTests.check(URI.create("http://127.0.0.1:9/")).size());
        forTests.check(URI.create("http://localhost:9/"));
        assertThrows(ApiException.class, () -> forTests.check(URI.create("http://10.0.0.1/")));
        assertThrows(ApiException.class, () -> forTests.check(URI.create("http://169.254.169.254/")));
        assertThrows(ApiException.class, () -> forTests.check(URI.create("http://x.internal/")));
    }
}
