package dev.atrium.kernel.internal.egress;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** Which hosts and addresses a user-triggered outbound connection may reach. */
final class AddressPolicy {

    private static final String[] BLOCKED_SUFFIXES = {".local", ".internal", ".localhost"};
    /** Host names made only of numbers (decimal, octal, hex) and dots: IPv4 in a form some resolvers read. */
    private static final java.util.regex.Pattern NUMERIC =
            java.util.regex.Pattern.compile("(0x[0-9a-f]*|[0-9]+)(\\.(0x[0-9a-f]*|[0-9]+))*\\.?");

    private static final java.util.regex.Pattern CANONICAL_IPV4 = java.util.regex.Pattern.compile(
            "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}");

    private AddressPolicy() {}

    /** Whether {@code host} is an address literal (canonical IPv4, or IPv6 without brackets), which needs no lookup. */
    static boolean isLiteral(String host) {
        return CANONICAL_IPV4.matcher(host).matches() || host.indexOf(':') >= 0;
    }

    /** Returns why the host name is refused, or null. */
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

    /** Returns why the address is refused, or null when it is a public unicast address. */
    static String refuseAddress(InetAddress address, boolean allowLoopback) {
        if (address instanceof Inet6Address v6) {
            InetAddress embedded = embeddedIpv4(v6.getAddress());
            if (embedded != null) {
                return refuseAddress(embedded, allowLoopback);
            }
        }
        byte[] b = address.getAddress();
        for (Block block : b.length == 4 ? V4 : V6) {
            if (block.contains(b)) {
                return block.loopback() && allowLoopback ? null : block.reason();
            }
        }
        return null;
    }

    /**
     * The ranges {@link #refuseAddress} refuses (with loopback, whatever the test setting), as CIDR text, for a sandbox
     * that filters its own connections with a deny list (workerd's {@code network.deny}) instead of asking the guard:
     * every refused IPv4 range, again inside each IPv6 form that carries an IPv4 address (they are judged by that
     * address), the refused IPv6 ranges less those forms, and {@code own} (the machine's interface addresses, each also
     * in the IPv4-carrying forms). An address is refused by {@link #refuseAddress} exactly when a range here contains it
     * (an IPv4 range also containing the IPv4-mapped form, as workerd's matcher does).
     */
    static List<String> refusedRanges(Collection<InetAddress> own) {
        Set<String> ranges = new LinkedHashSet<>();
        for (Block b : V4) {
            ranges.add(b.cidr());
            for (Block form : EMBEDDINGS) {
                ranges.add(embed(form, b).cidr());
            }
        }
        for (Block b : V6) {
            if (EMBEDDINGS.stream().anyMatch(form -> form.covers(b))) {
                ranges.add(b.cidr()); // :: and ::1, which carry no IPv4 address
            } else {
                for (Block part : b.minus(EMBEDDINGS)) {
                    ranges.add(part.cidr());
                }
            }
        }
        for (InetAddress address : own) {
            Block host = new Block(address.getAddress(), address.getAddress().length * 8, "");
            ranges.add(host.cidr());
            if (host.prefix().length == 4) {
                for (Block form : EMBEDDINGS) {
                    ranges.add(embed(form, host).cidr());
                }
            }
        }
        return List.copyOf(ranges);
    }

    /** The IPv4 range {@code v4} written in the IPv6 form {@code form}. */
    private static Block embed(Block form, Block v4) {
        byte[] bytes = form.prefix().clone();
        int at = form.bits() / 8;
        System.arraycopy(v4.prefix(), 0, bytes, at, 4);
        return new Block(bytes, form.bits() + v4.bits(), v4.reason());
    }

    /** An address range that is never a public unicast destination, with the reason given when refusing it. */
    record Block(byte[] prefix, int bits, String reason) {
        static Block of(String cidr, String reason) {
            int slash = cidr.indexOf('/');
            String text = cidr.substring(0, slash);
            try {
                byte[] address = InetAddress.getByName(text).getAddress();
                if (address.length == 4 && text.indexOf(':') >= 0) {
                    // Java reads ::ffff:a.b.c.d as the IPv4 address; a range written in IPv6 stays IPv6
                    byte[] mapped = new byte[16];
                    mapped[10] = (byte) 0xff;
                    mapped[11] = (byte) 0xff;
                    System.arraycopy(address, 0, mapped, 12, 4);
                    address = mapped;
                }
                return new Block(address, Integer.parseInt(cidr.substring(slash + 1)), reason);
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException(cidr, e);
            }
        }

        boolean loopback() {
            return LOOPBACK.equals(reason);
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

        /** Whether all of {@code other} is inside this range. */
        boolean covers(Block other) {
            return other.prefix.length == prefix.length && other.bits >= bits && contains(other.prefix);
        }

        /** This range less {@code holes}, as the fewest ranges that split it at the holes' edges. */
        List<Block> minus(List<Block> holes) {
            List<Block> out = new ArrayList<>();
            subtract(this, holes, out);
            return out;
        }

        private static void subtract(Block b, List<Block> holes, List<Block> out) {
            boolean split = false;
            for (Block hole : holes) {
                if (hole.covers(b)) {
                    return;
                }
                split |= b.covers(hole);
            }
            if (!split) {
                out.add(b);
                return;
            }
            for (int bit = 0; bit <= 1; bit++) {
                byte[] half = b.prefix.clone();
                int i = b.bits / 8;
                int m = 0x80 >>> (b.bits % 8);
                half[i] = (byte) (bit == 0 ? half[i] & ~m : half[i] | m);
                subtract(new Block(half, b.bits + 1, b.reason), holes, out);
            }
        }

        /** The range as CIDR text; IPv6 as eight hexadecimal groups (never the IPv4-in-IPv6 notation Java would print). */
        String cidr() {
            StringBuilder s = new StringBuilder();
            if (prefix.length == 4) {
                for (int i = 0; i < 4; i++) {
                    s.append(i == 0 ? "" : ".").append(prefix[i] & 0xff);
                }
            } else {
                for (int i = 0; i < 16; i += 2) {
                    s.append(i == 0 ? "" : ":")
                            .append(Integer.toHexString(((prefix[i] & 0xff) << 8) | (prefix[i + 1] & 0xff)));
                }
            }
            return s.append('/').append(bits).toString();
        }
    }

    private static final String LOOPBACK = "loopback addresses are not allowed";
    private static final String PRIVATE = "private addresses are not allowed";
    private static final String LINK_LOCAL = "link-local addresses are not allowed";
    private static final String MULTICAST = "multicast addresses are not allowed";
    private static final String RESERVED = "reserved addresses are not allowed";
    private static final String UNSPECIFIED = "the unspecified address is not allowed";

    /**
     * The refused IPv4 ranges, the first containing an address giving the reason: what {@link InetAddress} classifies
     * (loopback, unspecified, link-local, private, multicast), then IANA's special-purpose registry (RFC 6890 and
     * successors): none of these is a public server a user may point the server at. The one list both
     * {@link #refuseAddress} and {@link #refusedRanges} read.
     */
    static final List<Block> V4 = List.of(
            Block.of("127.0.0.0/8", LOOPBACK),
            Block.of("0.0.0.0/32", UNSPECIFIED),
            Block.of("169.254.0.0/16", LINK_LOCAL),
            Block.of("10.0.0.0/8", PRIVATE),
            Block.of("172.16.0.0/12", PRIVATE),
            Block.of("192.168.0.0/16", PRIVATE),
            Block.of("224.0.0.0/4", MULTICAST),
            Block.of("0.0.0.0/8", RESERVED),
            Block.of("240.0.0.0/4", RESERVED),
            Block.of("100.64.0.0/10", "shared (carrier-grade NAT) addresses are not allowed"),
            Block.of("198.18.0.0/15", "benchmarking addresses are not allowed"),
            Block.of("192.0.0.0/24", "IETF protocol addresses are not allowed"),
            Block.of("192.0.2.0/24", "documentation (TEST-NET) addresses are not allowed"),
            Block.of("198.51.100.0/24", "documentation (TEST-NET) addresses are not allowed"),
            Block.of("203.0.113.0/24", "documentation (TEST-NET) addresses are not allowed"),
            Block.of("192.88.99.0/24", "the deprecated 6to4 relay anycast addresses are not allowed"));

    /** The refused IPv6 ranges, as {@link #V4}; an address of one of {@link #EMBEDDINGS} is judged by its IPv4 address first. */
    static final List<Block> V6 = List.of(
            Block.of("::1/128", LOOPBACK),
            Block.of("::/128", UNSPECIFIED),
            Block.of("fe80::/10", LINK_LOCAL),
            Block.of("fec0::/10", PRIVATE),
            Block.of("ff00::/8", MULTICAST),
            Block.of("fc00::/7", "unique-local addresses are not allowed"),
            Block.of("::/8", RESERVED),
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

    /**
     * The IPv6 forms that carry an IPv4 address right after their prefix, judged by that address: IPv4-mapped,
     * IPv4-compatible (not {@code ::} and {@code ::1}), NAT64's well-known prefix, 6to4.
     */
    static final List<Block> EMBEDDINGS = List.of(
            Block.of("::ffff:0:0/96", "IPv4-mapped"),
            Block.of("::/96", "IPv4-compatible"),
            Block.of("64:ff9b::/96", "NAT64"),
            Block.of("2002::/16", "6to4"));

    /** The IPv4 address inside an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6 address, or null. */
    static InetAddress embeddedIpv4(byte[] v6) {
        if (v6.length != 16 || isTrailingOneOrZero(v6)) {
            return null;
        }
        for (Block form : EMBEDDINGS) {
            if (form.contains(v6)) {
                int at = form.bits() / 8;
                try {
                    return InetAddress.getByAddress(new byte[] {v6[at], v6[at + 1], v6[at + 2], v6[at + 3]});
                } catch (UnknownHostException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return null;
    }

    /** {@code ::} and {@code ::1} are not IPv4-compatible addresses. */
    private static boolean isTrailingOneOrZero(byte[] v6) {
        for (int i = 0; i < 15; i++) {
            if (v6[i] != 0) {
                return false;
            }
        }
        return v6[15] == 0 || v6[15] == 1;
    }
}
