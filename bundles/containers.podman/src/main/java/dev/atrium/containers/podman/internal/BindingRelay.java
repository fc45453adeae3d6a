package dev.atrium.containers.podman.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
final class BindingRelay extends ContainerListener {

    static final String PREFIX = "/internal/bindings/";
    private static final Logger LOG = LoggerFactory.getLogger(BindingRelay.class);
    private static final int MAX_HEAD = 64 * 1024;
    private static final int HEAD_TIMEOUT_MILLIS = 30_000;

    /** A container's address may reach this deployment's paths at {@code upstream}. */
    record Allowed(String runtimeId, InetSocketAddress upstream) {}

    private final Map<String, Allowed> byAddress = new ConcurrentHashMap<>();

    BindingRelay() {
        super("podman-bindings-relay", 256);
    }

    void allow(String address, String runtimeId, InetSocketAddress upstream) {
        byAddress.put(address, new Allowed(runtimeId, upstream));
    }

    void revoke(String address) {
        byAddress.remove(address);
    }

    @Override
    boolean accepts(String address) {
        return byAddress.containsKey(address);
    }

    @Override
    void serve(Socket client) {
        Allowed allowed = byAddress.get(client.getInetAddress().getHostAddress());
        if (allowed == null) { // revoked since the connection came
            quietly(client);
            return;
        }
        relay(client, allowed);
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
        String rewritten = closing(text.substring(0, text.indexOf("\r\n")), text);
        client.setSoTimeout(0);
        try (Socket upstream = new Socket()) {
            upstream.connect(allowed.upstream(), 5_000);
            OutputStream up = upstream.getOutputStream();
            up.write(rewritten.getBytes(StandardCharsets.ISO_8859_1));
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

    /**
     * {@code head} passed on with {@code requestLine}: without its hop-by-hop headers ({@code Connection}, {@code
     * Keep-Alive}, any {@code Proxy-*}) and closing after one exchange, so that no second request rides on a checked one.
     */
    static String closing(String requestLine, String head) {
        StringBuilder out =
                new StringBuilder(head.length() + 24).append(requestLine).append("\r\n");
        String[] lines = head.split("\r\n");
        for (int i = 1; i < lines.length; i++) {
            String lower = lines[i].toLowerCase(Locale.ROOT);
            if (lines[i].isEmpty()
                    || lower.startsWith("connection:")
                    || lower.startsWith("keep-alive:")
                    || lower.startsWith("proxy-")) {
                continue;
            }
            out.append(lines[i]).append("\r\n");
        }
        return out.append("Connection: close\r\n\r\n").toString();
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
        super.close();
        byAddress.clear();
    }
}
