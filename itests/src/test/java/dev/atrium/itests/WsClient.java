package dev.atrium.itests;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A WebSocket client over a plain socket with a Host header of the test's choosing (a service's {@code <slug>.<apps
 * domain>}), which the JDK's WebSocket client does not let a caller set: the RFC 6455 handshake, masked frames out,
 * fragmented messages joined in, control frames (ping, pong, close) returned as they arrive.
 */
final class WsClient implements AutoCloseable {

    static final int TEXT = 1, BINARY = 2, CLOSE = 8, PING = 9, PONG = 10;

    record Message(int opcode, byte[] payload) {
        String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }

        int closeCode() {
            return payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : 1005;
        }

        String closeReason() {
            return payload.length > 2 ? new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8) : "";
        }
    }

    /** The handshake's answer: 101 with a client, or any other status with its body. */
    record Handshake(int status, Map<String, String> headers, byte[] body, WsClient client) {}

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private WsClient(Socket socket, InputStream in) throws IOException {
        this.socket = socket;
        this.in = in;
        this.out = socket.getOutputStream();
    }

    static Handshake connect(int port, String host, String path, Map<String, String> headers) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        s.setSoTimeout(30_000);
        byte[] nonce = new byte[16];
        ThreadLocalRandom.current().nextBytes(nonce);
        StringBuilder head = new StringBuilder("GET ")
                .append(path)
                .append(" HTTP/1.1\r\nHost: ")
                .append(host)
                .append(
                        "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ")
                .append(Base64.getEncoder().encodeToString(nonce))
                .append("\r\n");
        headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
        head.append("\r\n");
        s.getOutputStream().write(head.toString().getBytes(StandardCharsets.UTF_8));
        s.getOutputStream().flush();
        InputStream in = new BufferedInputStream(s.getInputStream());
        String status = line(in);
        int code = Integer.parseInt(status.substring(9, 12));
        Map<String, String> answer = new LinkedHashMap<>();
        for (String h; !(h = line(in)).isEmpty(); ) {
            int colon = h.indexOf(':');
            answer.merge(
                    h.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                    h.substring(colon + 1).trim(),
                    (a, b) -> a + ", " + b);
        }
        if (code == 101) {
            return new Handshake(code, answer, new byte[0], new WsClient(s, in));
        }
        byte[] body;
        try (s) {
            String length = answer.get("content-length");
            body = length != null ? in.readNBytes(Integer.parseInt(length)) : new byte[0];
        }
        return new Handshake(code, answer, body, null);
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        for (int c; (c = in.read()) != '\n'; ) {
            if (c < 0) {
                throw new EOFException("the connection ended in the handshake's answer");
            }
            if (c != '\r') {
                b.append((char) c);
            }
        }
        return b.toString();
    }

    void sendText(String text) throws IOException {
        frame(TEXT, text.getBytes(StandardCharsets.UTF_8), true);
    }

    void sendBinary(byte[] data) throws IOException {
        frame(BINARY, data, true);
    }

    void ping(byte[] data) throws IOException {
        frame(PING, data, true);
    }

    void close(int code, String reason) throws IOException {
        byte[] r = reason.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(2 + r.length).putShort((short) code).put(r);
        frame(CLOSE, b.array(), true);
    }

    /** One frame, masked as a client's must be. */
    synchronized void frame(int opcode, byte[] payload, boolean fin) throws IOException {
        ByteArrayOutputStream f = new ByteArrayOutputStream(payload.length + 14);
        f.write((fin ? 0x80 : 0) | opcode);
        int n = payload.length;
        if (n < 126) {
            f.write(0x80 | n);
        } else if (n < 65536) {
            f.write(0x80 | 126);
            f.write(n >>> 8);
            f.write(n);
        } else {
            f.write(0x80 | 127);
            f.writeBytes(ByteBuffer.allocate(8).putLong(n).array());
        }
        byte[] mask = new byte[4];
        ThreadLocalRandom.current().nextBytes(mask);
        f.writeBytes(mask);
        byte[] masked = new byte[n];
        for (int i = 0; i < n; i++) {
            masked[i] = (byte) (payload[i] ^ mask[i & 3]);
        }
        f.writeBytes(masked);
        out.write(f.toByteArray());
        out.flush();
    }

    /** The next message (continuations joined) or control frame; EOFException when the connection ends. */
    Message read() throws IOException {
        ByteArrayOutputStream message = null;
        int messageOpcode = 0;
        for (; ; ) {
            int b0 = in.read();
            int b1 = in.read();
            if (b0 < 0 || b1 < 0) {
                throw new EOFException("the connection ended");
            }
            if ((b1 & 0x80) != 0) {
                throw new IOException("a server's frame is masked");
            }
            long n = b1 & 0x7f;
            if (n == 126) {
                n = ((in.read() & 0xff) << 8) | (in.read() & 0xff);
            } else if (n == 127) {
                n = ByteBuffer.wrap(in.readNBytes(8)).getLong();
            }
            byte[] payload = in.readNBytes((int) n);
            if (payload.length != n) {
                throw new EOFException("the connection ended in a frame");
            }
            int opcode = b0 & 0x0f;
            boolean fin = (b0 & 0x80) != 0;
            if (opcode >= 8) {
                return new Message(opcode, payload);
            }
            if (opcode != 0) {
                messageOpcode = opcode;
                message = new ByteArrayOutputStream();
            }
            if (message == null) {
                throw new IOException("a continuation without a message");
            }
            message.writeBytes(payload);
            if (fin) {
                return new Message(messageOpcode, message.toByteArray());
            }
        }
    }

    /** Whether the server closed the TCP connection (read answers end of stream) within the socket's timeout. */
    boolean endsAfterClose() {
        try {
            for (; ; ) {
                if (in.read() < 0) {
                    return true;
                }
            }
        } catch (IOException e) {
            return e instanceof java.net.SocketException;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
