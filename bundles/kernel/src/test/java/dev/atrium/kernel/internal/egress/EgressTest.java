package dev.atrium.kernel.internal.egress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.ApiException;
import java.net.InetAddress;
import java.net.URI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EgressTest {

    private final Egress strict = new Egress(false);
    private final Egress forTests = new Egress(true);

    @ParameterizedTest
    @ValueSource(
            strings = {
                "http://127.0.0.1/",
                "http://127.9.9.9:8080/x",
                "http://[::1]/",
                "http://10.0.0.1/",
                "http://172.16.5.4/",
                "http://192.168.1.1/",
                "http://169.254.169.254/latest/meta-data/",
                "http://[fe80::1]/",
                "http://[fd00::1]/",
                "http://[fc00::2]/",
                "http://0.0.0.0/",
                "http://[::]/",
                "http://[::ffff:127.0.0.1]/",
                "http://[::ffff:10.1.2.3]/",
                "http://[64:ff9b::a9fe:a9fe]/",
                "http://[2002:7f00:1::]/",
                "http://100.64.0.1/",
                "http://224.0.0.1/",
                "http://255.255.255.255/",
                "http://localhost/",
                "http://LOCALHOST./",
                "http://metadata.google.internal/",
                "http://printer.local/",
                "http://app.localhost/",
                "ftp://93.184.216.34/",
                "file:///etc/passwd",
                "gopher://93.184.216.34/",
                "http://user:pw@93.184.216.34/",
                "http://2130706433/",
                "http://017700000001/",
                "http://0177.0.0.1/",
                "http://0x7f.0.0.1/",
                "http://0x7f000001/",
                "http://127.1/",
                "http://10.1/",
                "http://010.0.0.1/",
                "http://[::ffff:7f00:1]/",
                "http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
                "http://[fe80::1%25eth0]/",
                "http://a.b.internal./",
                "http://[::127.0.0.1]/"
            })
    void refusesNonPublicTargets(String url) {
        ApiException e = assertThrows(ApiException.class, () -> strict.check(URI.create(url)));
        assertEquals(400, e.status());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "http://192.0.2.1/",
                "http://198.51.100.7/",
                "http://203.0.113.200/",
                "http://198.18.0.1/",
                "http://198.19.255.254/",
                "http://192.88.99.1/",
                "http://[2001::1]/",
                "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
                "http://[2001:1ff::1]/",
                "http://[2001:db8::1]/",
                "http://[3fff::1]/",
                "http://[3fff:fff::1]/",
                "http://[100::1]/",
                "http://[64:ff9b:1::a00:1]/",
                "http://[64:ff9b:0:0:1::5db8:d822]/",
                "http://[64:ff9b::c000:201]/"
            })
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
    @ValueSource(strings = {"http://93.184.216.34/", "https://1.1.1.1/dns-query", "http://[2606:4700:4700::1111]/"})
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

    @Test
    void theNat64And6to4FormsOfTheServersOwnAddressAreRefused() {
        Egress guard = new Egress(false, () -> java.util.Set.of(address("93.184.216.34")));
        for (String url : new String[] {
            "http://[64:ff9b::5db8:d822]/", "http://[2002:5db8:d822::1]/", "http://[::ffff:93.184.216.34]/"
        }) {
            ApiException e = assertThrows(ApiException.class, () -> guard.check(URI.create(url)), url);
            assertTrue(e.getMessage().contains("own addresses"), e.getMessage());
        }
        assertTrue(!guard.check(URI.create("http://[64:ff9b::5db8:d823]/")).isEmpty());
    }

    @Test
    void theRangesGivenToSandboxesIncludeLoopbackTheTestNetsTheIpv4CarryingFormsAndTheOwnAddresses() {
        java.util.List<String> ranges = new Egress(
                        true, () -> java.util.Set.of(address("93.184.216.34"), address("2606:2800:220:1::1")))
                .refusedRanges();
        for (String expected : new String[] {
            "127.0.0.0/8",
            "0:0:0:0:0:0:0:1/128",
            "192.0.2.0/24",
            "198.51.100.0/24",
            "203.0.113.0/24",
            "198.18.0.0/15",
            "64:ff9b:0:0:0:0:7f00:0/104",
            "0:0:0:0:0:0:7f00:0/104",
            "0:0:0:0:0:ffff:7f00:0/104",
            "2002:7f00:0:0:0:0:0:0/24",
            "93.184.216.34/32",
            "64:ff9b:0:0:0:0:5db8:d822/128",
            "2002:5db8:d822:0:0:0:0:0/48",
            "2606:2800:220:1:0:0:0:1/128"
        }) {
            assertTrue(ranges.contains(expected), expected + " in " + ranges);
        }
        assertTrue(
                !ranges.contains("64:ff9b:0:0:0:0:0:0/32") && !ranges.contains("64:ff9b:0:0:0:0:0:0/96"),
                "the well-known NAT64 prefix is judged by its IPv4 address");
    }

    /**
     * The sandbox's deny list is the guard's policy: an address (from every range's edges and just outside them, in each
     * IPv4-carrying form, and random ones) is refused by {@link Egress#check} exactly when one of
     * {@link Egress#refusedRanges} contains it, matched as workerd (kj's CidrRange) matches.
     */
    @Test
    void theRangesGivenToSandboxesRefuseExactlyWhatTheGuardRefuses() throws Exception {
        InetAddress own = address("93.184.216.34");
        Egress guard = new Egress(false, () -> java.util.Set.of(own));
        java.util.List<String> ranges = guard.refusedRanges();
        java.util.List<byte[]> samples = new java.util.ArrayList<>();
        java.util.List<AddressPolicy.Block> all = new java.util.ArrayList<>(AddressPolicy.V4);
        all.addAll(AddressPolicy.V6);
        all.addAll(AddressPolicy.EMBEDDINGS);
        all.add(new AddressPolicy.Block(own.getAddress(), 32, ""));
        for (AddressPolicy.Block b : all) {
            byte[] first = b.prefix().clone();
            byte[] last = b.prefix().clone();
            for (int bit = b.bits(); bit < first.length * 8; bit++) {
                last[bit / 8] |= (byte) (0x80 >>> (bit % 8));
            }
            samples.add(first);
            samples.add(last);
            samples.add(add(first, -1));
            samples.add(add(last, 1));
        }
        java.util.Random random = new java.util.Random(32);
        for (int i = 0; i < 2000; i++) {
            byte[] a = new byte[i % 2 == 0 ? 4 : 16];
            random.nextBytes(a);
            samples.add(a);
        }
        for (byte[] v4 : java.util.List.copyOf(samples)) {
            if (v4.length == 4) {
                for (AddressPolicy.Block form : AddressPolicy.EMBEDDINGS) {
                    byte[] v6 = form.prefix().clone();
                    System.arraycopy(v4, 0, v6, form.bits() / 8, 4);
                    samples.add(v6);
                }
            }
        }
        for (byte[] a : samples) {
            String literal = literal(a);
            boolean refused;
            try {
                guard.check(URI.create("http://" + literal + "/"));
                refused = false;
            } catch (ApiException e) {
                refused = true;
            }
            boolean denied = ranges.stream().anyMatch(r -> kjMatches(r, a));
            assertEquals(refused, denied, literal + ": guard refuses " + refused + ", deny list matches " + denied);
        }
    }

    private static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    private static byte[] add(byte[] a, int delta) {
        java.math.BigInteger max = java.math.BigInteger.ONE.shiftLeft(a.length * 8);
        java.math.BigInteger n = new java.math.BigInteger(1, a)
                .add(java.math.BigInteger.valueOf(delta))
                .mod(max);
        byte[] raw = n.toByteArray();
        byte[] out = new byte[a.length];
        int copy = Math.min(raw.length, a.length);
        System.arraycopy(raw, raw.length - copy, out, a.length - copy, copy);
        return out;
    }

    /** The address as a URL host, IPv6 spelled out so that Java keeps an IPv4-mapped one IPv6 as far as the text goes. */
    private static String literal(byte[] a) {
        if (a.length == 4) {
            return (a[0] & 0xff) + "." + (a[1] & 0xff) + "." + (a[2] & 0xff) + "." + (a[3] & 0xff);
        }
        StringBuilder s = new StringBuilder("[");
        for (int i = 0; i < 16; i += 2) {
            s.append(i == 0 ? "" : ":").append(Integer.toHexString(((a[i] & 0xff) << 8) | (a[i + 1] & 0xff)));
        }
        return s.append(']').toString();
    }

    /** kj's CidrRange::matches: bytes compared under the prefix; an IPv4 range also matches the IPv4-mapped IPv6 address. */
    private static boolean kjMatches(String cidr, byte[] address) {
        int slash = cidr.indexOf('/');
        String text = cidr.substring(0, slash);
        int bits = Integer.parseInt(cidr.substring(slash + 1));
        byte[] range = address(text).getAddress();
        byte[] other = address;
        if (text.indexOf(':') < 0) {
            if (address.length == 16) {
                for (int i = 0; i < 12; i++) {
                    if (address[i] != (i < 10 ? 0 : (byte) 0xff)) {
                        return false;
                    }
                }
                other = java.util.Arrays.copyOfRange(address, 12, 16);
            }
        } else {
            if (address.length != 16) {
                return false;
            }
            if (range.length == 4) { // Java reads 0:0:0:0:0:ffff:a.b.c.d as IPv4
                byte[] mapped = new byte[16];
                mapped[10] = (byte) 0xff;
                mapped[11] = (byte) 0xff;
                System.arraycopy(range, 0, mapped, 12, 4);
                range = mapped;
            }
        }
        for (int bit = 0; bit < bits; bit++) {
            int m = 0x80 >>> (bit % 8);
            if ((range[bit / 8] & m) != (other[bit / 8] & m)) {
                return false;
            }
        }
        return true;
    }
}
