package dev.atrium.browser.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import java.net.InetAddress;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Whether a request a session's page makes may go out: the kernel's {@link EgressGuard} judges the host and every
 * address it resolves to; on top of it, a loopback address is allowed only on a port the operator listed for tests
 * ({@code loopbackPorts}), so that the guard's test switch (loopback allowed) never opens the database's or the
 * server's own port to a page. Schemes that make no network request ({@code data:}, {@code blob:}, {@code about:})
 * pass; every other non-HTTP scheme is refused.
 */
final class RequestPolicy {

    private static final Set<String> LOCAL_SCHEMES = Set.of("data", "blob", "about");

    private final EgressGuard guard;
    private final Set<Integer> loopbackPorts;

    RequestPolicy(EgressGuard guard, Set<Integer> loopbackPorts) {
        this.guard = guard;
        this.loopbackPorts = Set.copyOf(loopbackPorts);
    }

    /** Why {@code url} may not be requested, or null when it may. */
    String refusal(String url) {
        if (url == null || url.isBlank()) {
            return "the URL is empty";
        }
        int colon = url.indexOf(':');
        String scheme = colon > 0 ? url.substring(0, colon).toLowerCase(Locale.ROOT) : "";
        if (LOCAL_SCHEMES.contains(scheme)) {
            return null;
        }
        if (!scheme.equals("http") && !scheme.equals("https")) {
            return "only http and https URLs may be requested, not " + (scheme.isEmpty() ? "this" : scheme);
        }
        URL parsed;
        try {
            parsed = new URL(url);
        } catch (MalformedURLException e) {
            return "the URL is not valid";
        }
        if (parsed.getUserInfo() != null) {
            return "credentials inside the URL are not allowed";
        }
        // only the origin is judged: a path or query the JDK's URI would refuse changes nothing about the target
        return connection(scheme, parsed.getHost(), parsed.getPort() == -1 ? parsed.getDefaultPort() : parsed.getPort())
                .refusal();
    }

    /** What may be connected to: the addresses, all allowed, or why none may be. */
    record Verdict(List<InetAddress> addresses, String refusal) {}

    /** Whether {@code host:port} may be connected to (for {@code scheme}, which the guard checks too). */
    Verdict connection(String scheme, String host, int port) {
        URI origin;
        try {
            origin = new URI(scheme, null, host, port, "/", null, null);
        } catch (URISyntaxException e) {
            return new Verdict(List.of(), "the address is not valid");
        }
        List<InetAddress> addresses;
        try {
            addresses = guard.check(origin);
        } catch (ApiException e) {
            return new Verdict(List.of(), e.getMessage());
        }
        for (InetAddress address : addresses) {
            if (isLoopback(address) && !loopbackPorts.contains(port)) {
                return new Verdict(List.of(), "loopback addresses are not allowed (port " + port + ")");
            }
        }
        return new Verdict(addresses, null);
    }

    private static boolean isLoopback(InetAddress address) {
        if (address.isLoopbackAddress()) {
            return true;
        }
        byte[] b = address.getAddress();
        // ::ffff:127.x.x.x, which the guard judges as the IPv4 address it carries
        if (b.length == 16) {
            for (int i = 0; i < 10; i++) {
                if (b[i] != 0) {
                    return false;
                }
            }
            return ((b[10] == (byte) 0xff && b[11] == (byte) 0xff) || (b[10] == 0 && b[11] == 0)) && b[12] == 127;
        }
        return false;
    }

    /** {@code "8080, 8081"} as ports; blanks and what is not a port are left out. */
    static Set<Integer> ports(String list) {
        java.util.Set<Integer> ports = new java.util.TreeSet<>();
        if (list == null) {
            return ports;
        }
        for (String part : list.split("[,\\s]+")) {
            try {
                int port = Integer.parseInt(part.trim());
                if (port > 0 && port < 65_536) {
                    ports.add(port);
                }
            } catch (NumberFormatException notAPort) {
                // left out
            }
        }
        return ports;
    }
}
