package dev.atrium.containers.podman.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a container reaches its bindings. The internal binding endpoint answers loopback only, and a container must not
 * reach the host's loopback (PostgreSQL trusts it), so this relay listens on the host for the containers' bridge and
 * passes on, to the endpoint on loopback, only requests from a running deployment's container address for that
 * deployment's own binding paths ({@code /internal/bindings/<its runtime id>/…}, without dot segments). Everything
 * else is answered 404 here and never reaches the server. One request per connection ({@code Connection: close}), so
 * a second request cannot follow a checked first one on the same connection.
 */
final class BindingRelay implements AutoCloseable {

    static final String PREFIX = "/internal/bindings/";
    private static final Logger LOG = LoggerFactory.getLogger(BindingRelay.class);
    private static final int MAX_HEAD = 64 * 1024;
    private static final int HEAD_TIMEOUT_MILLIS = 30_000;

    /** A container's address may reach this deployment's paths at {@code upstream}. */
    record Allowed(String runtimeId, InetSocketAddress upstream) {}

    private final Map<String, Allowed> byAddress = new ConcurrentHashMap<>();
    private final ExecutorService pool;
    private ServerSocket server;
    private Thread acceptor;
    private volatile boolean closed;

    BindingRelay() {
        AtomicInteger n = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(0, 256, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, "podman-bindings-relay-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * The port, listening from the first call on. On every address of the host: the bridge's own address exists only
     * while a container is on it, and a container's env must name the port before it starts; connections from any
     * address but a running deployment's container are closed unread.
     */
    synchronized int port() throws IOException {
        if (closed) {
            throw new IOException("the bindings relay is closed");
        }
        if (server == null) {
            ServerSocket s = new ServerSocket();
            s.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0), 128);
            server = s;
            acceptor = new Thread(this::accept, "podman-bindings-relay");
            acceptor.setDaemon(true);
            acceptor.start();
        }
        return server.getLocalPort();
    }

    void allow(String address, String runtimeId, InetSocketAddress upstream) {
        byAddress.put(address, new Allowed(runtimeId, upstream));
    }

    void revoke(String address) {
        byAddress.remove(address);
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("the bindings relay stopped accepting: {}", e.toString());
                }
                return;
            }
            Allowed allowed = byAddress.get(client.getInetAddress().getHostAddress());
            if (allowed == null) {
                quietly(client);
                continue;
            }
            try {
                pool.execute(() -> relay(client, allowed));
            } catch (java.util.concurrent.RejectedExecutionException busy) {
                quietly(client);
            }
        }
    }

    private void relay(Socket client, Allowed allowed) {
        try (client) {
            client.setSoTimeout(HEAD_TIMEOUT_MILLIS);
            byte[] head = readHead(client.getInputStream());
            if (head != null) {
                forward(client, allowed, head);
            }
        } catch (IOException e) {
            LOG.debug("a binding call through the relay ended early: {}", e.toString());
        }
    }

    /**
     * A binding call a container sent through its HTTP proxy ({@link EgressProxy} hands it here, its head in origin
     * form): checked and passed on as if it had come straight here. The caller closes the socket.
     */
    void forwarded(Socket client, byte[] head) throws IOException {
        Allowed allowed = byAddress.get(client.getInetAddress().getHostAddress());
        if (allowed == null) {
            answer(client.getOutputStream(), 404, "NOT_FOUND", "not a binding of this deployment");
            return;
        }
        forward(client, allowed, head);
    }

    private void forward(Socket client, Allowed allowed, byte[] head) throws IOException {
        InputStream in = client.getInputStream();
        String text = new String(head, StandardCharsets.ISO_8859_1);
        String[] requestLine = text.substring(0, text.indexOf("\r\n")).split(" ");
        if (requestLine.length != 3 || !permitted(requestLine[1], allowed.runtimeId())) {
            answer(client.getOutputStream(), 404, "NOT_FOUND", "not a binding of this deployment");
            return;
        }
        StringBuilder rewritten = new StringBuilder(text.length() + 24);
        String[] lines = text.split("\r\n");
        rewritten.append(lines[0]).append("\r\n");
        for (int i = 1; i < lines.length; i++) {
            String lower = lines[i].toLowerCase(Locale.ROOT);
            if (lines[i].isEmpty()
                    || lower.startsWith("connection:")
                    || lower.startsWith("keep-alive:")
                    || lower.startsWith("proxy-connection:")) {
                continue;
            }
            rewritten.append(lines[i]).append("\r\n");
        }
        rewritten.append("Connection: close\r\n\r\n");
        client.setSoTimeout(0);
        try (Socket upstream = new Socket()) {
            upstream.connect(allowed.upstream(), 5_000);
            OutputStream up = upstream.getOutputStream();
            up.write(rewritten.toString().getBytes(StandardCharsets.ISO_8859_1));
            up.flush();
            Thread body = new Thread(() -> pipe(in, up, upstream), "podman-bindings-relay-body");
            body.setDaemon(true);
            body.start();
            upstream.getInputStream().transferTo(client.getOutputStream());
            body.interrupt();
        }
    }

    /** The request body (and anything after it) to the upstream until the client or the upstream closes. */
    private static void pipe(InputStream in, OutputStream up, Socket upstream) {
        try {
            in.transferTo(up);
            upstream.shutdownOutput();
        } catch (IOException e) {
            // one of the two closed: the response side ends the exchange
        }
    }

    /** Only the deployment's own binding paths, without {@code .} or {@code ..} segments (also percent-encoded). */
    static boolean permitted(String target, String runtimeId) {
        String path = target.indexOf('?') >= 0 ? target.substring(0, target.indexOf('?')) : target;
        if (!path.startsWith(PREFIX + runtimeId + "/") || path.indexOf('\\') >= 0) {
            return false;
        }
        for (String segment : path.split("/", -1)) {
            String s = segment.toLowerCase(Locale.ROOT).replace("%2e", ".");
            if (s.equals(".") || s.equals("..") || s.contains("%2f") || s.contains("%5c")) {
                return false;
            }
        }
        return true;
    }

    /** The bytes up to and with the blank line; null when the client closed first or sent too much. */
    static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (head.size() < MAX_HEAD) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            head.write(b);
            matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
            if (matched == 4) {
                return head.toByteArray();
            }
        }
        return null;
    }

    static void answer(OutputStream out, int status, String code, String message) throws IOException {
        byte[] body = ("{\"error\":{\"code\":\"" + code + "\",\"message\":\"" + message + "\"}}")
                .getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 " + status + " " + code + "\r\nContent-Type: application/json\r\nContent-Length: "
                        + body.length + "\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
    }

    static void quietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            if (server != null) {
                try {
                    server.close();
                } catch (IOException e) {
                    LOG.debug("closing the bindings relay: {}", e.toString());
                }
            }
        }
        pool.shutdownNow();
        try {
            if (acceptor != null) {
                acceptor.join(2_000);
            }
            pool.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        byAddress.clear();
    }

    /** For the log: where it listens, or that it does not yet. */
    @Override
    public synchronized String toString() {
        return server == null ? "bindings relay (not listening)" : "bindings relay on port " + server.getLocalPort();
    }
}
