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

    /** Whether {@code host} is an address literal (canonical IPv4, or IPv6 without brackets), which needs no lookup. */
    static boolean isLiteral(String host) {
        return CANONICAL_IPV4.matcher(host).matches() || host.indexOf(':') >= 0;
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
        for (Block block : address instanceof Inet4Address ? V4_BLOCKS : V6_BLOCKS) {
            if (block.contains(b)) {
                return block.reason();
            }
        }
        return null;
    }

    /** An address range that is never a public unicast destination, with the reason given when refusing it. */
    record Block(byte[] prefix, int bits, String reason) {
        static Block of(String cidr, String reason) {
            int slash = cidr.indexOf('/');
            try {
                return new Block(InetAddress.getByName(cidr.substring(0, slash)).getAddress(), Integer.parseInt(cidr.substring(slash + 1)),
                        reason);
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException(cidr, e);
            }
        }

        boolean contains(byte[] address) {
            if (address.length != prefix.length) {
                return false;
            }
            int full = bits / 8;
            for (int i = 0; i < full; i++) {
                if (address[i] != prefix[i]) {
                    return false;
                }
            }
            int rest = bits % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xff << (8 - rest)) & 0xff;
            return (address[full] & mask) == (prefix[full] & mask);
        }
    }

    /**
     * IANA's special-purpose registries (RFC 6890 and successors) beyond what {@link InetAddress} classifies itself:
     * none of these is a public server a user may point the server at.
     */
    private static final java.util.List<Block> V4_BLOCKS = java.util.List.of(
            Block.of("0.0.0.0/8", "reserved addresses are not allowed"),
            Block.of("240.0.0.0/4", "reserved addresses are not allowed"),
            Block.of("100.64.0.0/10", "shared (carrier-grade NAT) addresses are not allowed"),
            Block.of("198.18.0.0/15", "benchmarking addresses are not allowed"),
            Block.of("192.0.0.0/24", "IETF protocol addresses are not allowed"),
            Block.of("192.0.2.0/24", "documentation (TEST-NET) addresses are not allowed"),
            Block.of("198.51.100.0/24", "documentation (TEST-NET) addresses are not allowed"),
            Block.of("203.0.113.0/24", "documentation (TEST-NET) addresses are not allowed"),
            Block.of("192.88.99.0/24", "the deprecated 6to4 relay anycast addresses are not allowed"));

    private static final java.util.List<Block> V6_BLOCKS = java.util.List.of(
            Block.of("fc00::/7", "unique-local addresses are not allowed"),
            Block.of("fec0::/10", "site-local addresses are not allowed"),
            Block.of("::/8", "reserved addresses are not allowed"),
            Block.of("100::/64", "discard-only addresses are not allowed"),
            // Teredo (2001::/32), ORCHID, AMT, AS112 and the other IETF protocol assignments: tunnels and
            // protocol plumbing, never a server the user means
            Block.of("2001::/23", "IETF protocol addresses (Teredo and others) are not allowed"),
            Block.of("2001:db8::/32", "documentation addresses are not allowed"),
            Block.of("3fff::/20", "documentation addresses are not allowed"),
            // NAT64: only the well-known 64:ff9b::/96 is translated (its IPv4 address is checked instead); the rest
            // of 64:ff9b::/32, local-use 64:ff9b:1::/48 included, may reach anything inside a network
            Block.of("64:ff9b::/32", "NAT64 addresses outside 64:ff9b::/96 are not allowed"),
            Block.of("5f00::/16", "segment-routing addresses are not allowed"));

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
            for (int i = 4; i < 12 && nat64; i++) {
                nat64 = v6[i] == 0;
            }
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
