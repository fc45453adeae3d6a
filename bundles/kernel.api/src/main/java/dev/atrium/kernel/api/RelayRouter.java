package dev.atrium.kernel.api;

import java.net.InetSocketAddress;
import java.util.Set;
import java.util.function.IntConsumer;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A capability whose requests the kernel's edge relays itself, below the servlet stack: on the server's plain HTTP
 * listener, a request whose head the edge reads as plain HTTP/1.1 (origin-form target, one Host, framed by
 * Content-Length or chunked, no Upgrade) is offered to each router before Jetty parses it. A router that returns a
 * {@link Relay} gets the request passed to that address as it came, its headers added to, and the answer passed back
 * as it comes, on the listener's selector threads (no request thread, no copy into a servlet response). Every other
 * request, and each one a router declines (returns null for), goes on to Jetty and the {@link HostRouter}s as before:
 * a router declines whatever needs more than a pass-through, an error of its own or a wait included.
 *
 * <p>{@link #route} runs on a selector thread for every request offered: it must be cheap and never block. A router
 * that is away (its bundle updating) is not asked; its requests then meet its {@link HostRouter}, which the kernel
 * holds them for. The relay is asked before the {@link EdgeHandler}s, so a router declines paths an edge handler answers.
 *
 * @since 2.19
 */
@ConsumerType
public interface RelayRouter {

    /**
     * Where a request goes, or null when the server's HTTP stack is to answer it.
     *
     * @param host the Host header as {@link HostRouter.Claims#host} gives it (lower case, no port)
     * @param method the request's method
     * @param target the request target as sent (path and query)
     */
    Relay route(String host, String method, String target);

    /**
     * One request's upstream: its {@code address}, a {@code pathPrefix} put before the target (empty for none), the
     * client's headers that are not passed on ({@code droppedHeaders}, lower case; the edge drops {@code
     * X-Forwarded-For}, {@code -Proto} and {@code -Host} itself and sends its own), and {@code answered}, told the
     * upstream's status once the answer has passed (0 when the upstream did not answer, and the client got a 502).
     */
    record Relay(InetSocketAddress address, String pathPrefix, Set<String> droppedHeaders, IntConsumer answered) {

        public Relay {
            pathPrefix = pathPrefix == null ? "" : pathPrefix;
            droppedHeaders = Set.copyOf(droppedHeaders);
        }
    }
}
