package dev.atrium.services.internal;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;

import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * The proxy's HTTP/1.1 client to a deployment on loopback: a lean blocking pass-through on the request's own thread
 * (no hand-over to another pool), over keep-alive connections pooled per endpoint. The request body streams from the
 * client to the runtime (as sent: by its length, or re-chunked), the response streams back (by its length, chunked, or
 * to the connection's end), flushed whenever the runtime pauses, so server-sent events and long answers pass as they are
 * written. A pooled connection the runtime closed meanwhile is retried once on a new one when no body was sent yet.
 */
final class Upstream implements AutoCloseable {

    /** Hop-by-hop headers (RFC 9110 7.6.1), the framing the proxy sets itself, and Expect (the container answers it). */
    static final Set<String> HOP = Set.of("connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te",
            "trailer", "transfer-encoding", "upgrade", "content-length", "expect");
    private static final int MAX_IDLE_PER_ENDPOINT = 256;
    private static final long MAX_IDLE_MILLIS = 2_000;
    private static final int HEAD_LIMIT = 64 * 1024;

    private static final class Conn {
        final Socket socket;
        final InputStream in;
        final OutputStream out;
        long idleSince;

        Conn(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new BufferedInputStream(socket.getInputStream(), 16 * 1024);
            this.out = new BufferedOutputStream(socket.getOutputStream(), 16 * 1024);
        }

        void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    private final Map<InetSocketAddress, Deque<Conn>> idle = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** Thrown when nothing reached the client yet: the caller may answer with an error of its own. */
    static final class NoAnswer extends IOException {
        private static final long serialVersionUID = 1L;

        NoAnswer(String message, Throwable cause) {
            super(message, cause);
        }
    }

    void exchange(InetSocketAddress target, String pathAndQuery, HttpServletRequest request, HttpServletResponse response,
            Map<String, String> extraHeaders) throws IOException {
        String method = request.getMethod();
        long length = request.getContentLengthLong();
        boolean chunked = length < 0 && request.getHeader("Transfer-Encoding") != null;
        boolean hasBody = length > 0 || chunked;
        byte[] head = head(method, pathAndQuery, request, extraHeaders, length, chunked);
        Conn c = null;
        boolean reused = false;
        for (int attempt = 0;; attempt++) {
            c = attempt == 0 ? pooled(target, hasBody) : null;
            reused = c != null;
            if (c == null) {
                c = open(target);
            }
            try {
                c.out.write(head);
                if (hasBody) {
                    body(request.getInputStream(), c.out, length, chunked);
                }
                c.out.flush();
                if (reused && !hasBody) {
                    c.in.mark(1);
                    if (c.in.read() < 0) {
                        throw new EOFException("closed while idle");
                    }
                    c.in.reset();
                }
                break;
            } catch (IOException e) {
                c.close();
                if (!reused || hasBody || attempt > 0) {
                    throw new NoAnswer("the deployment did not take the request: " + e.getMessage(), e);
                }
            }
        }
        boolean keep;
        try {
            keep = answer(c, method, response);
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
        if (keep && !closed) {
            c.idleSince = System.currentTimeMillis();
            Deque<Conn> q = idle.computeIfAbsent(target, k -> new ConcurrentLinkedDeque<>());
            if (q.size() < MAX_IDLE_PER_ENDPOINT) {
                q.push(c);
                return;
            }
        }
        c.close();
    }

    private Conn pooled(InetSocketAddress target, boolean hasBody) {
        Deque<Conn> q = idle.get(target);
        if (q == null) {
            return null;
        }
        long now = System.currentTimeMillis();
        for (Conn c; (c = q.poll()) != null;) {
            // a body cannot be sent again: it goes only over a connection the runtime surely still keeps
            if (now - c.idleSince < (hasBody ? MAX_IDLE_MILLIS / 4 : MAX_IDLE_MILLIS) && !c.socket.isClosed()) {
                return c;
            }
            c.close();
        }
        return null;
    }

    private static Conn open(InetSocketAddress target) throws IOException {
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(target, 5_000);
            s.setSoTimeout(300_000);
            return new Conn(s);
        } catch (IOException e) {
            s.close();
            throw new NoAnswer("the deployment does not answer: " + e.getMessage(), e);
        }
    }

    private static byte[] head(String method, String pathAndQuery, HttpServletRequest request, Map<String, String> extra, long length,
            boolean chunked) {
        StringBuilder sb = new StringBuilder(512).append(method).append(' ').append(pathAndQuery).append(" HTTP/1.1\r\n");
        for (Enumeration<String> names = request.getHeaderNames(); names.hasMoreElements();) {
            String name = names.nextElement();
            String lower = name.toLowerCase(Locale.ROOT);
            if (HOP.contains(lower) || extra.containsKey(lower)) {
                continue;
            }
            for (Enumeration<String> values = request.getHeaders(name); values.hasMoreElements();) {
                String v = values.nextElement();
                if (v.indexOf('\r') < 0 && v.indexOf('\n') < 0) {
                    sb.append(name).append(": ").append(v).append("\r\n");
                }
            }
        }
        extra.forEach((k, v) -> {
            if (v != null) {
                sb.append(k).append(": ").append(v).append("\r\n");
            }
        });
        if (length > 0) {
            sb.append("content-length: ").append(length).append("\r\n");
        } else if (chunked) {
            sb.append("transfer-encoding: chunked\r\n");
        }
        sb.append("\r\n");
        return sb.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    private static void body(InputStream in, OutputStream out, long length, boolean chunked) throws IOException {
        byte[] buffer = new byte[16 * 1024];
        if (!chunked) {
            long left = length;
            while (left > 0) {
                int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
                if (n < 0) {
                    throw new EOFException("the client's body ended early");
                }
                out.write(buffer, 0, n);
                left -= n;
            }
            return;
        }
        int n;
        while ((n = in.read(buffer)) >= 0) {
            if (n > 0) {
                out.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
                out.write(buffer, 0, n);
                out.write('\r');
                out.write('\n');
                if (in.available() == 0) {
                    out.flush();
                }
            }
        }
        out.write("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
    }

    /** Reads the answer and passes it on; whether the connection may be used again. */
    private static boolean answer(Conn c, String method, HttpServletResponse response) throws IOException {
        String status;
        List<String[]> headers = new ArrayList<>();
        for (;;) {
            status = line(c.in);
            headers.clear();
            for (String h; !(h = line(c.in)).isEmpty();) {
                int colon = h.indexOf(':');
                if (colon > 0) {
                    headers.add(new String[] { h.substring(0, colon).trim(), h.substring(colon + 1).trim() });
                }
            }
            if (!(status.length() >= 10 && status.startsWith("HTTP/1.") && status.charAt(9) == '1')) {
                break; // 1xx (100 Continue, 103 Early Hints) is not passed on
            }
        }
        if (!status.startsWith("HTTP/1.") || status.length() < 12) {
            throw new NoAnswer("the deployment answered something that is not HTTP/1.x", null);
        }
        int code = Integer.parseInt(status.substring(9, 12));
        boolean http10 = status.startsWith("HTTP/1.0");
        long length = -1;
        boolean chunked = false;
        boolean close = http10;
        response.setStatus(code);
        for (String[] h : headers) {
            String lower = h[0].toLowerCase(Locale.ROOT);
            switch (lower) {
                case "content-length" -> length = Long.parseLong(h[1]);
                case "transfer-encoding" -> chunked = h[1].toLowerCase(Locale.ROOT).contains("chunked");
                case "connection" -> close = h[1].toLowerCase(Locale.ROOT).contains("close") || (http10 && !h[1].equalsIgnoreCase("keep-alive"));
                default -> {
                    if (!HOP.contains(lower)) {
                        response.addHeader(h[0], h[1]);
                    }
                }
            }
        }
        if (method.equals("HEAD") || code == 204 || code == 304) {
            if (length >= 0) {
                response.setContentLengthLong(length);
            }
            return !close;
        }
        OutputStream out = response.getOutputStream();
        byte[] buffer = new byte[16 * 1024];
        if (chunked) {
            for (;;) {
                String size = line(c.in);
                int semi = size.indexOf(';');
                long n = Long.parseLong((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
                if (n == 0) {
                    while (!line(c.in).isEmpty()) {
                        // trailers are dropped
                    }
                    break;
                }
                copy(c.in, out, n, buffer);
                if (c.in.read() != '\r' || c.in.read() != '\n') {
                    throw new IOException("a chunk is not followed by CRLF");
                }
                if (c.in.available() == 0) {
                    out.flush();
                }
            }
            return !close;
        }
        if (length >= 0) {
            response.setContentLengthLong(length);
            copy(c.in, out, length, buffer);
            return !close;
        }
        int n;
        while ((n = c.in.read(buffer)) >= 0) {
            out.write(buffer, 0, n);
            if (c.in.available() == 0) {
                out.flush();
            }
        }
        return false;
    }

    private static void copy(InputStream in, OutputStream out, long length, byte[] buffer) throws IOException {
        long left = length;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) {
                throw new EOFException("the deployment's answer ended early");
            }
            out.write(buffer, 0, n);
            left -= n;
            if (left > 0 && in.available() == 0) {
                out.flush();
            }
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream(64);
        for (int ch; (ch = in.read()) != '\n';) {
            if (ch < 0) {
                throw new EOFException("the deployment closed the connection");
            }
            if (b.size() > HEAD_LIMIT) {
                throw new IOException("a header line of the deployment's answer is too long");
            }
            b.write(ch);
        }
        int size = b.size();
        byte[] bytes = b.toByteArray();
        return new String(bytes, 0, size > 0 && bytes[size - 1] == '\r' ? size - 1 : size, StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() {
        closed = true;
        for (Deque<Conn> q : idle.values()) {
            for (Conn c; (c = q.poll()) != null;) {
                c.close();
            }
        }
    }
}
