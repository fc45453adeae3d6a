package dev.atrium.kernel.api;

import java.io.IOException;
import java.util.Locale;
import java.util.Set;
import javax.servlet.ServletException;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A capability that answers requests by their Host (deployed services on their hostnames) or on a path of its own,
 * before the API sees them. The kernel's request envelope, the outermost filter, asks each registered router whether a
 * request is its own and hands it over. While a router's bundle stops, updates and starts, the kernel holds the
 * requests that router claimed when it left, and hands them to it once it is back; a request not handed over within
 * the update gate's bound is answered 503 with {@code Retry-After}, never by the API. A claim by name (host, host
 * suffix, attribute) wins over another router's claim by path prefix, so every path of a routed host stays its router's.
 */
@ConsumerType
public interface HostRouter {

    /** What this router answers now. Asked for every request, so cheap; the kernel keeps the last answer while it is away. */
    Claims claims();

    /**
     * Answers a request its {@link #claims()} cover, or returns false without touching the response when it no longer
     * can (it is being stopped): the kernel then holds the request as for a router that is away.
     */
    boolean route(HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException;

    /**
     * Requests a router answers: those for one of {@code hosts} or a host ending in one of {@code hostSuffixes} (lower
     * case, without a port), those whose path starts with one of {@code pathPrefixes}, and those carrying one of the
     * request attributes named in {@code attributes} (set by a listener of the router's own).
     */
    record Claims(Set<String> hosts, Set<String> hostSuffixes, Set<String> pathPrefixes, Set<String> attributes) {

        public static final Claims NONE = new Claims(Set.of(), Set.of(), Set.of(), Set.of());

        public Claims {
            hosts = Set.copyOf(hosts);
            hostSuffixes = Set.copyOf(hostSuffixes);
            pathPrefixes = Set.copyOf(pathPrefixes);
            attributes = Set.copyOf(attributes);
        }

        /** Whether the request is one of these; {@code host} as {@link #host} gives it. */
        public boolean cover(HttpServletRequest request, String host, String path) {
            if (host != null && hosts.contains(host)) {
                return true;
            }
            if (host != null) {
                for (String suffix : hostSuffixes) {
                    if (host.endsWith(suffix)) {
                        return true;
                    }
                }
            }
            for (String prefix : pathPrefixes) {
                if (path.startsWith(prefix)) {
                    return true;
                }
            }
            for (String attribute : attributes) {
                if (request.getAttribute(attribute) != null) {
                    return true;
                }
            }
            return false;
        }

        /** A Host header's name: lower case, without its port or a trailing dot; null when there is none or it is an IPv6 literal. */
        public static String host(String header) {
            if (header == null || header.isBlank()) {
                return null;
            }
            String h = header.trim().toLowerCase(Locale.ROOT);
            if (h.startsWith("[")) {
                return null; // an IPv6 literal is never a routed name
            }
            int colon = h.indexOf(':');
            if (colon >= 0) {
                h = h.substring(0, colon);
            }
            if (h.endsWith(".")) {
                h = h.substring(0, h.length() - 1);
            }
            return h;
        }
    }
}
