package dev.atrium.containers.podman.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only way out of a container service: its network is internal (no route beyond the host's bridge), and its env
 * names this forward proxy ({@code HTTP_PROXY}, {@code HTTPS_PROXY}), which takes {@code CONNECT host:port} (TLS) and
 * absolute-form {@code http://} requests from running containers' addresses only and connects where the kernel's
 * {@link EgressGuard} allows, to the addresses it checked: what workers' fetches may reach, containers may reach, no
 * more (not the host's loopback, not private ranges). A refusal is a 403 with the guard's reason.
 */
final class EgressProxy extends ContainerListener {

    private static final Logger LOG = LoggerFactory.getLogger(EgressProxy.class);
    private static final int HEAD_TIMEOUT_MILLIS = 30_000;
    private static final int CONNECT_TIMEOUT_MILLIS = 10_000;

    private final EgressGuard guard;
    private final BindingRelay relay;
    /** The bridge's gateway address, where the relay listens: a binding call sent through the proxy goes there. */
    private volatile String relayHost;

    private final Set<String> addresses = ConcurrentHashMap.newKeySet();

    EgressProxy(EgressGuard guard, BindingRelay relay) {
        super("podman-egress-proxy", 512);
        this.guard = guard;
        this.relay = relay;
    }

    /** Binding calls to {@code gateway} on the relay's port are the relay's (a client that proxies every request). */
    void relayAt(String gateway) {
        relayHost = gateway;
    }

    void allow(String address) {
        addresses.add(address);
    }

    void revoke(String address) {
        addresses.remove(address);
    }

    @Override
    boolean accepts(String address) {
        return addresses.contains(address);
    }

    @Override
    void serve(Socket client) {
        try (client) {
            client.setSoTimeout(HEAD_TIMEOUT_MILLIS);
            InputStream in = client.getInputStream();
            OutputStream out = client.getOutputStream();
            byte[] head = BindingRelay.readHead(in);
            if (head == null) {
                return;
            }
            String text = new String(head, StandardCharsets.ISO_8859_1);
            String[] line = text.substring(0, text.indexOf("\r\n")).split(" ");
            if (line.length != 3) {
                BindingRelay.answer(out, 400, "BAD_REQUEST", "not an HTTP request");
                return;
            }
            boolean connect = line[0].equals("CONNECT");
            String host;
            int port;
            String forwarded = null;
            try {
                if (connect) {
                    URI authority = URI.create("//" + line[1]);
                    host = authority.getHost();
                    port = authority.getPort();
                    if (host == null || port < 1) {
                        throw new IllegalArgumentException("CONNECT needs host:port");
                    }
                } else {
                    URI target = URI.create(line[1]);
                    if (!"http".equalsIgnoreCase(target.getScheme()) || target.getHost() == null) {
                        BindingRelay.answer(out, 400, "BAD_REQUEST", "this proxy takes CONNECT and http:// requests");
                        return;
                    }
                    host = target.getHost();
                    port = target.getPort() == -1 ? 80 : target.getPort();
                    forwarded = forwarded(line, target, text);
                    if (host.equals(relayHost) && port == relay.port()) {
                        relay.forwarded(client, forwarded.getBytes(StandardCharsets.ISO_8859_1));
                        return;
                    }
                }
            } catch (IllegalArgumentException e) {
                BindingRelay.answer(out, 400, "BAD_REQUEST", "the request's target is not a host and port");
                return;
            }
            List<InetSocketAddress> allowed;
            try {
                allowed = guard.addresses(host, port);
            } catch (ApiException refused) {
                BindingRelay.answer(out, 403, "FORBIDDEN", refused.getMessage().replace("\"", "'"));
                return;
            }
            try (Socket upstream = connected(allowed)) {
                client.setSoTimeout(0);
                OutputStream up = upstream.getOutputStream();
                if (connect) {
                    out.write("HTTP/1.1 200 Connection Established\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                } else {
                    up.write(forwarded.getBytes(StandardCharsets.ISO_8859_1));
                    up.flush();
                }
                Thread toUpstream = new Thread(
                        () -> {
                            try {
                                in.transferTo(up);
                                upstream.shutdownOutput();
                            } catch (IOException e) {
                                // one side closed: the other direction ends the exchange
                            }
                        },
                        "podman-egress-proxy-up");
                toUpstream.setDaemon(true);
                toUpstream.start();
                upstream.getInputStream().transferTo(out);
                toUpstream.interrupt();
            } catch (IOException e) {
                BindingRelay.answer(out, 502, "BAD_GATEWAY", "cannot connect to " + host + ":" + port);
            }
        } catch (IOException e) {
            LOG.debug("an egress connection ended early: {}", e.toString());
        }
    }

    /** The first of the guard's addresses that accepts a connection. */
    private static Socket connected(List<InetSocketAddress> allowed) throws IOException {
        IOException last = new IOException("no address");
        for (InetSocketAddress a : allowed) {
            Socket s = new Socket();
            try {
                s.connect(a, CONNECT_TIMEOUT_MILLIS);
                return s;
            } catch (IOException e) {
                BindingRelay.quietly(s);
                last = e;
            }
        }
        throw last;
    }

    /** The request in origin form, without hop-by-hop proxy headers, closing after one exchange. */
    private static String forwarded(String[] line, URI target, String head) {
        String path = target.getRawPath() == null || target.getRawPath().isEmpty() ? "/" : target.getRawPath();
        if (target.getRawQuery() != null) {
            path += "?" + target.getRawQuery();
        }
        return BindingRelay.closing(line[0] + " " + path + " " + line[2], head);
    }

    @Override
    public void close() {
        super.close();
        addresses.clear();
    }
}
