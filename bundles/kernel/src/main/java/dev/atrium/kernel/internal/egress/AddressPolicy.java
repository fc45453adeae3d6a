package dev.atrium.kernel.internal.egress;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;

/** Which hosts and addresses a user-triggered outbound connection may reach. */
final class AddressPolicy {

    private static final String[] BLOCKED_SUFFIXES = { ".local", ".internal", ".localhost" };
    /** Host names made only of numbers (decimal, octal, hex) and dots: IPv4 in a form some resolvers read. */
    private static final java.util.regex.Pattern NUMERIC = java.util.regex.Pattern.compile("(0x[0-9a-f]*|[0-9]+)(\\.(0x[0-9a-f]*|[0-9]+))*\\.?");
    private static final java.util.regex.Pattern CANONICAL_IPV4 = java.util.regex.Pattern.compile(
            "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}");

    private AddressPolicy() {
    }

    /** @return why the host name is refused, or null */
    static String refuseName(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        if (NUMERIC.matcher(h).matches() && !CANONICAL_IPV4.matcher(h).matches()) {
            return "IPv4 addresses must be written as four decimal numbers (no octal, hex or single-number forms)";
        }
        if (h.equals("localhost")) {
            return "the host localhost is not allowed";
        }
        for (String suffix : BLOCKED_SUFFIXES) {
            if (h.endsWith(suffix) || h.equals(suffix.substring(1))) {
                return "host names under " + suffix + " are not allowed";
            }
        }
        return null;
    }

    /** @return why the address is refused, or null when it is a public unicast address */
    static String refuseAddress(InetAddress address, boolean allowLoopback) {
        if (address instanceof Inet6Address v6) {
            InetAddress embedded = embeddedIpv4(v6.getAddress());
            if (embedded != null) {
                return refuseAddress(embedded, allowLoopback);
            }
        }
        if (address.isLoopbackAddress()) {
            return allowLoopback ? null : "loopback addresses are not allowed";
        }
        if (address.isAnyLocalAddress()) {
            return "the unspecified address is not allowed";
        }
        if (address.isLinkLocalAddress()) {
            return "link-local addresses are not allowed";
        }
        if (address.isSiteLocalAddress()) {
            return "private addresses are not allowed";
        }
        if (address.isMulticastAddress()) {
            return "multicast addresses are not allowed";
        }
        byte[] b = address.getAddress();
        if (address instanceof Inet4Address) {
            int a0 = b[0] & 0xff;
            int a1 = b[1] & 0xff;
            if (a0 == 0 || a0 >= 240) {
                return "reserved addresses are not allowed";
            }
            if (a0 == 100 && (a1 & 0xc0) == 64) {
                return "shared (carrier-grade NAT) addresses are not allowed";
            }
            if (a0 == 198 && (a1 == 18 || a1 == 19)) {
                return "benchmarking addresses are not allowed";
            }
            if (a0 == 192 && a1 == 0 && (b[2] & 0xff) == 0) {
                return "IETF protocol addresses are not allowed";
            }
        } else {
            int first = b[0] & 0xff;
            if ((first & 0xfe) == 0xfc) {
                return "unique-local addresses are not allowed";
            }
            if (first == 0xfe && (b[1] & 0xc0) == 0xc0) {
                return "site-local addresses are not allowed";
            }
            if (first == 0 && !address.isLoopbackAddress()) {
                return "reserved addresses are not allowed";
            }
        }
        return null;
    }

    /** The IPv4 address inside an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6 address, or null. */
    static InetAddress embeddedIpv4(byte[] v6) {
        try {
            boolean zeros10 = true;
            for (int i = 0; i < 10; i++) {
                zeros10 &= v6[i] == 0;
            }
            if (zeros10 && ((v6[10] == (byte) 0xff && v6[11] == (byte) 0xff) || (v6[10] == 0 && v6[11] == 0 && !isTrailingOneOrZero(v6)))) {
                return InetAddress.getByAddress(new byte[] { v6[12], v6[13], v6[14], v6[15] });
            }
            boolean nat64 = (v6[0] & 0xff) == 0x00 && (v6[1] & 0xff) == 0x64 && (v6[2] & 0xff) == 0xff && (v6[3] & 0xff) == 0x9b;
            if (nat64) {
                return InetAddress.getByAddress(new byte[] { v6[12], v6[13], v6[14], v6[15] });
            }
            if ((v6[0] & 0xff) == 0x20 && (v6[1] & 0xff) == 0x02) {
                return InetAddress.getByAddress(new byte[] { v6[2], v6[3], v6[4], v6[5] });
            }
            return null;
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code ::} and {@code ::1} are not IPv4-compatible addresses. */
    private static boolean isTrailingOneOrZero(byte[] v6) {
        return v6[12] == 0 && v6[13] == 0 && v6[14] == 0 && (v6[15] == 0 || v6[15] == 1);
    }
}
