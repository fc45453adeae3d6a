package dev.atrium.kernel.internal.egress;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** The kernel's {@link EgressGuard}. */
@Component(configurationPid = "dev.atrium.kernel.egress", configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = Egress.Config.class)
public class Egress implements EgressGuard {

    @ObjectClassDefinition(name = "Atrium egress guard")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "Allow loopback targets. For tests only: a server on a shared host must never enable it."
                                + " By default ATRIUM_EGRESS_ALLOW_LOOPBACK (or the framework property atrium.egress.allowLoopback).")
        boolean allowLoopback() default false;

        @AttributeDefinition(
                description =
                        "The DNS server (host:port, or host for port 53) outbound fetches resolve names with; empty: the"
                                + " system's resolver. By default ATRIUM_EGRESS_DNS_SERVER.")
        String dnsServer() default "";
    }

    /** How long the named DNS server has to answer each of a host's two questions (A, AAAA). */
    private static final Duration DNS_TIMEOUT = Duration.ofSeconds(3);
    /** How long the machine's own interface addresses are trusted before they are listed again (DHCP, new interfaces). */
    static final long LOCAL_ADDRESSES_TTL_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(60);

    private final boolean allowLoopback;
    /** The DNS server an operator named for outbound fetches; null: the system's resolver. */
    private final InetSocketAddress dnsServer;

    private final DnsQueries dns = new DnsQueries();
    private final java.util.function.Supplier<java.util.Set<InetAddress>> interfaceAddresses;
    private volatile LocalAddresses local;

    /** The machine's own addresses as last listed, and when. */
    private record LocalAddresses(java.util.Set<InetAddress> addresses, long listedAtNanos) {}

    @Activate
    public Egress(Config config) {
        this(config.allowLoopback(), Egress::listInterfaceAddresses, dnsServer(config.dnsServer()));
    }

    Egress(boolean allowLoopback) {
        this(allowLoopback, Egress::listInterfaceAddresses);
    }

    Egress(boolean allowLoopback, java.util.function.Supplier<java.util.Set<InetAddress>> interfaceAddresses) {
        this(allowLoopback, interfaceAddresses, null);
    }

    Egress(
            boolean allowLoopback,
            java.util.function.Supplier<java.util.Set<InetAddress>> interfaceAddresses,
            InetSocketAddress dnsServer) {
        this.allowLoopback = allowLoopback;
        this.interfaceAddresses = interfaceAddresses;
        this.dnsServer = dnsServer;
    }

    private static InetSocketAddress dnsServer(String setting) {
        if (setting == null || setting.isBlank()) {
            return null;
        }
        try {
            return DnsQueries.server(setting);
        } catch (IllegalArgumentException e) {
            org.slf4j.LoggerFactory.getLogger(Egress.class)
                    .warn("dnsServer of dev.atrium.kernel.egress is {}; the system's resolver is used", e.getMessage());
            return null;
        }
    }

    /**
     * The host's A and AAAA records from the named server, each asked once: the guard checks and the caller connects
     * to exactly these addresses, so a second, different answer (DNS rebinding) is never asked for.
     */
    private InetAddress[] resolve(String host) throws UnknownHostException {
        List<InetAddress> found;
        try {
            found = dns.addresses(dnsServer, host, DNS_TIMEOUT);
        } catch (IOException | IllegalArgumentException e) {
            throw new UnknownHostException(host + ": " + e.getMessage());
        }
        if (found.isEmpty()) {
            throw new UnknownHostException(host);
        }
        return found.toArray(InetAddress[]::new);
    }

    /**
     * The addresses of this machine's interfaces: a public address of the server itself reaches its own services
     * (the database, an admin port) as well as loopback would.
     */
    private java.util.Set<InetAddress> ownAddresses() {
        LocalAddresses known = local;
        long now = System.nanoTime();
        if (known == null || now - known.listedAtNanos() > LOCAL_ADDRESSES_TTL_NANOS) {
            known = new LocalAddresses(interfaceAddresses.get(), now);
            local = known;
        }
        return known.addresses();
    }

    static java.util.Set<InetAddress> listInterfaceAddresses() {
        java.util.Set<InetAddress> all = new java.util.HashSet<>();
        try {
            for (java.util.Enumeration<java.net.NetworkInterface> e = java.net.NetworkInterface.getNetworkInterfaces();
                    e != null && e.hasMoreElements(); ) {
                for (java.util.Enumeration<InetAddress> a = e.nextElement().getInetAddresses(); a.hasMoreElements(); ) {
                    InetAddress address = a.nextElement();
                    // compared without the scope id (fe80::1%eth0 equals fe80::1 as a destination)
                    all.add(InetAddress.getByAddress(address.getAddress()));
                }
            }
        } catch (java.io.IOException e) {
            // no list: the other rules still apply; the next check lists again
            return java.util.Set.of();
        }
        return java.util.Set.copyOf(all);
    }

    @Override
    public List<InetAddress> check(URI url) {
        if (url == null || !url.isAbsolute()) {
            throw ApiException.badRequest("the URL must be absolute");
        }
        String scheme = url.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw ApiException.badRequest("only http and https URLs may be fetched, not " + scheme);
        }
        if (url.getRawUserInfo() != null) {
            throw ApiException.badRequest("credentials inside the URL are not allowed; pass them separately");
        }
        String host = url.getHost();
        if (host == null || host.isEmpty()) {
            throw ApiException.badRequest("the URL has no host");
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        String refusedName = AddressPolicy.refuseName(host);
        if (refusedName != null && !(allowLoopback && host.equalsIgnoreCase("localhost"))) {
            throw ApiException.badRequest("the URL may not be fetched: " + refusedName);
        }
        InetAddress[] addresses;
        try {
            addresses =
                    dnsServer == null || AddressPolicy.isLiteral(host) ? InetAddress.getAllByName(host) : resolve(host);
        } catch (UnknownHostException e) {
            throw ApiException.badRequest("the host " + host + " does not resolve");
        }
        for (InetAddress address : addresses) {
            String refused = AddressPolicy.refuseAddress(address, allowLoopback);
            if (refused == null && isOwn(address)) {
                refused = "the server's own addresses are not allowed";
            }
            if (refused != null) {
                throw ApiException.badRequest("the URL may not be fetched: " + host + " resolves to "
                        + address.getHostAddress() + "; " + refused);
            }
        }
        return List.of(addresses);
    }

    /**
     * Whether the address is one of this machine's, or carries one (NAT64 or 6to4 of a public address of the server
     * reaches the server). Loopback is left to {@link AddressPolicy}, which knows the test setting.
     */
    private boolean isOwn(InetAddress address) {
        if (address.isLoopbackAddress()) {
            return false;
        }
        java.util.Set<InetAddress> own = ownAddresses();
        if (own.contains(unscoped(address))) {
            return true;
        }
        InetAddress embedded = AddressPolicy.embeddedIpv4(address.getAddress());
        return embedded != null && !embedded.isLoopbackAddress() && own.contains(embedded);
    }

    /**
     * The strict policy (loopback refused whatever {@code allowLoopback} says: that setting is for the server's own
     * fetches in tests, never for code it runs) with this machine's interface addresses listed now.
     */
    @Override
    public List<String> refusedRanges() {
        java.util.Set<InetAddress> own = interfaceAddresses.get();
        local = new LocalAddresses(own, System.nanoTime());
        return AddressPolicy.refusedRanges(own);
    }

    private static InetAddress unscoped(InetAddress address) {
        try {
            return InetAddress.getByAddress(address.getAddress());
        } catch (UnknownHostException e) {
            return address;
        }
    }
}
