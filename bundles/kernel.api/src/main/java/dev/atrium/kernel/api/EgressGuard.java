package dev.atrium.kernel.api;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The server-side request forgery guard: every outbound connection the server makes on a user's behalf (an
 * import from a remote Git URL, a tool's HTTP fetch) asks it first, and again for every redirect it follows.
 * It refuses non-HTTP(S) schemes, host names under {@code .local}, {@code .internal} and {@code .localhost},
 * and any host that resolves to a loopback, private, link-local, unique-local, multicast or unspecified IPv4
 * or IPv6 address. Callers connect only to the addresses it returns, so a second DNS answer cannot change the
 * target after the check.
 */
@ProviderType
public interface EgressGuard {

    /**
     * @param url the absolute URL about to be fetched
     * @return the host's addresses, all of them allowed, in resolver order
     * @throws ApiException 400 {@code BAD_REQUEST} naming the reason when the URL may not be fetched
     */
    List<InetAddress> check(URI url);

    /**
     * What this guard refuses as address ranges, for a sandbox that filters its own connections with a deny list instead
     * of asking {@link #check} (workerd's {@code network.deny} for deployed workers): CIDR text such as
     * {@code "10.0.0.0/8"} or {@code "fe80:0:0:0:0:0:0:0/10"}, every refused range including loopback, the refused IPv4
     * ranges again in each IPv6 form that carries an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4), and the
     * machine's own interface addresses as they are at the call (ask again when writing a new configuration). Host
     * names are not judged: the sandbox filters the addresses they resolve to. The default, for a guard that cannot
     * say, is every address.
     */
    default List<String> refusedRanges() {
        return List.of("0.0.0.0/0", "0:0:0:0:0:0:0:0/0");
    }

    /**
     * The addresses a connection to {@code host:port} may go to: for an HTTP client's name resolver, so that the
     * answer checked is the answer connected to.
     *
     * @throws ApiException 400 {@code BAD_REQUEST} naming the reason when nothing there may be connected to
     */
    default List<InetSocketAddress> addresses(String host, int port) {
        URI uri;
        try {
            uri = new URI("http", null, host, port, "/", null, null);
        } catch (URISyntaxException e) {
            throw ApiException.badRequest("the address " + host + ":" + port + " is not valid");
        }
        return check(uri).stream().map(a -> new InetSocketAddress(a, port)).toList();
    }

    /**
     * {@link #addresses} for an asynchronous HTTP client's name resolver (Jetty's {@code SocketAddressResolver}): run
     * on {@code executor}, since a connection may be opened from a thread that must not wait for DNS. The future fails
     * with {@link Refused} when the guard refuses, or with the executor's refusal when it is stopping.
     */
    default CompletableFuture<List<InetSocketAddress>> resolve(String host, int port, Executor executor) {
        CompletableFuture<List<InetSocketAddress>> answer = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                try {
                    answer.complete(addresses(host, port));
                } catch (ApiException e) {
                    answer.completeExceptionally(new Refused(e.getMessage()));
                } catch (RuntimeException e) {
                    answer.completeExceptionally(new Refused("the address " + host + ":" + port + " is not valid"));
                }
            });
        } catch (RuntimeException stopping) {
            answer.completeExceptionally(stopping);
        }
        return answer;
    }

    /** The guard refused the addresses a connection would have gone to; the message says why. */
    final class Refused extends IOException {
        private static final long serialVersionUID = 1L;

        public Refused(String message) {
            super(message);
        }

        /** The guard's refusal somewhere in a failure's causes, or null. */
        public static Refused in(Throwable failure) {
            for (Throwable t = failure; t != null; t = t.getCause()) {
                if (t instanceof Refused r) {
                    return r;
                }
            }
            return null;
        }
    }
}
