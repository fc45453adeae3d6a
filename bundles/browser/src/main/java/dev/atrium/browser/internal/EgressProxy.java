package dev.atrium.browser.internal;

import dev.atrium.kernel.api.NamedThreads;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's Chromium's only way out ({@code --proxy-server}, loopback not bypassed): a small HTTP proxy on an
 * ephemeral loopback port that judges every connection with the session's {@link RequestPolicy} and connects only to
 * the addresses it approved. The {@code Fetch} domain pauses HTTP requests but never a WebSocket's handshake, and
 * Chromium resolves a name again after the guard did; here both are closed: {@code CONNECT} (https, ws, wss) and plain
 * HTTP requests alike go to an address the guard returned, or are refused with 403 and listed for the session.
 */
final class EgressProxy implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(EgressProxy.class);
    private static final int MAX_HEAD = 64 * 1024;
    private static final int CONNECT_TIMEOUT_MS = 10_000;

    private final ServerSocket server;
    private final RequestPolicy policy;
    private final ExecutorService threads;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile BiConsumer<String, String> refused = (url, reason) -> {};
    private volatile boolean closed;

    EgressProxy(RequestPolicy policy, String name) throws IOException {
        this.policy = policy;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        this.threads = Executors.newCachedThreadPool(NamedThreads.factory("browser-proxy-" + name));
        threads.execute(this::accept);
    }

    int port() {
        return server.getLocalPort();
    }

    /** Where refusals go: the session lists them. */
    void onRefused(BiConsumer<String, String> sink) {
        this.refused = sink;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                open.add(client);
                threads.execute(() -> serve(client));
            } catch (IOException | java.util.concurrent.RejectedExecutionException e) {
                if (!closed) {
                    LOG.debug("browser proxy: accept failed", e);
                }
                return;
            }
        }
    }

    private void serve(Socket client) {
        Socket upstream = null;
        try {
            InputStream in = client.getInputStream();
            String head = readHead(in);
            if (head == null) {
                return;
            }
            int lineEnd = head.indexOf("\r\n");
            String[] line = head.substring(0, lineEnd).split(" ");
            if (line.length != 3) {
                answer(client, "400 Bad Request");
                return;
            }
            String method = line[0].toUpperCase(Locale.ROOT);
            String target = line[1];
            if (method.equals("CONNECT")) {
                int colon = target.lastIndexOf(':');
                String host = colon > 0 ? target.substring(0, colon) : target;
                int port = colon > 0 ? parsePort(target.substring(colon + 1)) : 443;
                if (host.startsWith("[") && host.endsWith("]")) {
                    host = host.substring(1, host.length() - 1);
                }
                // the guard sees https: a tunnel is TLS (https, wss) or a WebSocket (ws), never another scheme it knows
                upstream = connect("https", host, port, target);
                if (upstream == null) {
                    answer(client, "403 Forbidden");
                    return;
                }
                client.getOutputStream()
                        .write("HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                client.getOutputStream().flush();
            } else {
                URI uri;
                try {
                    uri = new URI(target);
                } catch (java.net.URISyntaxException e) {
                    answer(client, "400 Bad Request");
                    return;
                }
                if (!"http".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null) {
                    answer(client, "400 Bad Request");
                    return;
                }
                int port = uri.getPort() == -1 ? 80 : uri.getPort();
                upstream = connect("http", uri.getHost(), port, target);
                if (upstream == null) {
                    answer(client, "403 Forbidden");
                    return;
                }
                String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
                if (uri.getRawQuery() != null) {
                    path += "?" + uri.getRawQuery();
                }
                upstream.getOutputStream().write(originForm(head, method, path, line[2]));
                upstream.getOutputStream().flush();
            }
            Socket server = upstream;
            threads.execute(() -> pipe(client, server));
            pipe(server, client);
        } catch (IOException | RuntimeException e) {
            LOG.debug("browser proxy: a connection ended", e);
        } finally {
            close(client);
            if (upstream != null) {
                close(upstream);
            }
        }
    }

    /** A socket to an address the policy approved, or null (the refusal listed). */
    private Socket connect(String scheme, String host, int port, String shown) {
        if (port <= 0) {
            refused.accept(shown, "the port is not valid");
            return null;
        }
        if (host.equalsIgnoreCase(Chromium.SERVICES_HOST)) {
            return null; // Chromium's own background request, not the page's: refused, not listed
        }
        RequestPolicy.Verdict verdict = policy.connection(scheme, host, port);
        if (verdict.refusal() != null) {
            refused.accept(shown, verdict.refusal());
            return null;
        }
        List<InetAddress> addresses = verdict.addresses();
        for (InetAddress address : addresses) {
            Socket socket = new Socket();
            try {
                open.add(socket);
                socket.connect(new InetSocketAddress(address, port), CONNECT_TIMEOUT_MS);
                return socket;
            } catch (IOException unreachable) {
                close(socket);
            }
        }
        return null;
    }

    /**
     * The request head with its target in origin form, without the proxy's headers, and {@code Connection: close}: the
     * browser's next request on this connection might be for another host, which this proxy would not judge.
     */
    static byte[] originForm(String head, String method, String path, String version) {
        StringBuilder out = new StringBuilder(method)
                .append(' ')
                .append(path)
                .append(' ')
                .append(version)
                .append("\r\n");
        for (String header : head.substring(head.indexOf("\r\n") + 2).split("\r\n")) {
            String name = header.contains(":")
                    ? header.substring(0, header.indexOf(':')).trim()
                    : "";
            if (header.isEmpty()
                    || name.equalsIgnoreCase("proxy-connection")
                    || name.equalsIgnoreCase("proxy-authorization")
                    || name.equalsIgnoreCase("connection")
                    || name.equalsIgnoreCase("keep-alive")) {
                continue;
            }
            out.append(header).append("\r\n");
        }
        out.append("Connection: close\r\n\r\n");
        return out.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** The request line and headers up to the empty line, or null when the client closed first. */
    static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int last4 = 0;
        while (head.size() < MAX_HEAD) {
            int b = in.read(); // one byte at a time: a request body after the head stays in the socket for the pipe
            if (b == -1) {
                return null;
            }
            head.write(b);
            last4 = (last4 << 8) | b;
            if (last4 == 0x0D0A0D0A) {
                String text = head.toString(StandardCharsets.ISO_8859_1);
                return text.substring(0, text.length() - 2);
            }
        }
        throw new IOException("the request head is larger than " + MAX_HEAD + " bytes");
    }

    private static int parsePort(String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static void answer(Socket client, String status) throws IOException {
        OutputStream out = client.getOutputStream();
        out.write(("HTTP/1.1 " + status + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    private void pipe(Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            for (int n; (n = in.read(buffer)) != -1; ) {
                out.write(buffer, 0, n);
                out.flush();
            }
            to.shutdownOutput();
        } catch (IOException ended) {
            close(from);
            close(to);
        }
    }

    private void close(Socket socket) {
        open.remove(socket);
        try {
            socket.close();
        } catch (IOException e) {
            // closed
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closed
        }
        for (Socket s : List.copyOf(open)) {
            close(s);
        }
        threads.shutdownNow();
    }
}
