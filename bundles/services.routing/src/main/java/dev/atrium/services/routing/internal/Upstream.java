package dev.atrium.services.routing.internal;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Deque;
import java.util.Enumeration;
import java.util.Map;
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
 * <p>
 * Each connection reads and writes through buffers of its own (not {@code BufferedInputStream}/{@code
 * BufferedOutputStream}): no lock per byte, no copy of a header line through a {@code ByteArrayOutputStream}, and
 * "the runtime paused" is "the buffer is empty" rather than a FIONREAD system call per chunk (issue 20, proxy).
 */
final class Upstream implements AutoCloseable {

    /** Hop-by-hop headers (RFC 9110 7.6.1), the framing the proxy sets itself, and Expect (the container answers it). */
    static final String[] HOP = {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "expect"
    };

    private static final int MAX_IDLE_PER_ENDPOINT = 256;
    private static final long MAX_IDLE_MILLIS = 2_000;
    private static final int HEAD_LIMIT = 64 * 1024;
    private static final int BUFFER = 16 * 1024;
    private static final byte[] CRLF = {'\r', '\n'};
    private static final byte[] LAST_CHUNK = "0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);

    /** The headers the proxy sets itself: what the client sent under these names is not passed on. */
    record Forwarded(String forwardedFor, String proto, String host, String dropped) {}

    static final class Conn {
        final Socket socket;
        final InputStream in;
        final OutputStream out;
        final byte[] rbuf = new byte[BUFFER];
        int rpos;
        int rlim;
        final byte[] wbuf = new byte[BUFFER];
        int wpos;
        long idleSince;

        Conn(Socket socket) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }

        /** Reads more from the runtime into an empty buffer; -1 at the connection's end. */
        int fill() throws IOException {
            int n = in.read(rbuf, 0, rbuf.length);
            rpos = 0;
            rlim = Math.max(n, 0);
            return n;
        }

        int read() throws IOException {
            if (rpos == rlim && fill() < 0) {
                return -1;
            }
            return rbuf[rpos++] & 0xff;
        }

        boolean buffered() {
            return rpos < rlim;
        }

        /** A line of the answer's head or chunk framing, without its CRLF (or LF). */
        String line() throws IOException {
            StringBuilder spill = null;
            for (; ; ) {
                if (rpos == rlim && fill() < 0) {
                    throw new EOFException("the deployment closed the connection");
                }
                for (int i = rpos; i < rlim; i++) {
                    if (rbuf[i] == '\n') {
                        int end = i > rpos && rbuf[i - 1] == '\r' ? i - 1 : i;
                        String s = new String(rbuf, rpos, end - rpos, StandardCharsets.ISO_8859_1);
                        rpos = i + 1;
                        if (spill == null) {
                            return s;
                        }
                        spill.append(s);
                        int n = spill.length();
                        if (end == i && n > 0 && spill.charAt(n - 1) == '\r') {
                            spill.setLength(n - 1); // the CR ended the previous read
                        }
                        return spill.toString();
                    }
                }
                // the line goes on past what has arrived (rare: a long header line)
                if (spill == null) {
                    spill = new StringBuilder(256);
                }
                spill.append(new String(rbuf, rpos, rlim - rpos, StandardCharsets.ISO_8859_1));
                rpos = rlim;
                if (spill.length() > HEAD_LIMIT) {
                    throw new IOException("a header line of the deployment's answer is too long");
                }
            }
        }

        void ascii(String s) throws IOException {
            int n = s.length();
            for (int i = 0; i < n; ) {
                if (wpos == wbuf.length) {
                    flush();
                }
                int k = Math.min(n - i, wbuf.length - wpos);
                for (int j = 0; j < k; j++) {
                    char ch = s.charAt(i++);
                    // as ISO-8859-1 encodes: a character beyond it is '?', never its low byte (U+010A would be a LF)
                    wbuf[wpos++] = ch <= 0xff ? (byte) ch : (byte) '?';
                }
            }
        }

        void write(byte[] b, int off, int len) throws IOException {
            if (len >= wbuf.length) {
                flush();
                out.write(b, off, len);
                return;
            }
            if (len > wbuf.length - wpos) {
                flush();
            }
            System.arraycopy(b, off, wbuf, wpos, len);
            wpos += len;
        }

        void flush() throws IOException {
            if (wpos > 0) {
                int n = wpos;
                wpos = 0;
                out.write(wbuf, 0, n);
            }
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

    static boolean hop(String name) {
        for (String h : HOP) {
            if (h.equalsIgnoreCase(name)) {
                return true;
            }
        }
        return false;
    }

    void exchange(
            InetSocketAddress target,
            String pathAndQuery,
            HttpServletRequest request,
            HttpServletResponse response,
            Forwarded forwarded)
            throws IOException {
        String method = request.getMethod();
        long length = request.getContentLengthLong();
        boolean chunked = length < 0 && request.getHeader("Transfer-Encoding") != null;
        boolean hasBody = length > 0 || chunked;
        Conn c = null;
        boolean reused = false;
        for (int attempt = 0; ; attempt++) {
            c = attempt == 0 ? pooled(target, hasBody) : null;
            reused = c != null;
            if (c == null) {
                c = open(target);
            }
            try {
                head(c, method, pathAndQuery, request, forwarded, length, chunked);
                if (hasBody) {
                    body(request.getInputStream(), c, length, chunked);
                }
                c.flush();
                if (reused && !hasBody && c.fill() < 0) {
                    throw new EOFException("closed while idle");
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
        // bytes past the answer would be read as the next one's: such a connection is not used again
        if (keep && !closed && !c.buffered()) {
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
        for (Conn c; (c = q.poll()) != null; ) {
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

    private static void head(
            Conn c,
            String method,
            String pathAndQuery,
            HttpServletRequest request,
            Forwarded fwd,
            long length,
            boolean chunked)
            throws IOException {
        c.ascii(method);
        c.ascii(" ");
        c.ascii(pathAndQuery);
        c.ascii(" HTTP/1.1\r\n");
        for (Enumeration<String> names = request.getHeaderNames(); names.hasMoreElements(); ) {
            String name = names.nextElement();
            if (hop(name)
                    || name.equalsIgnoreCase("x-forwarded-for")
                    || name.equalsIgnoreCase("x-forwarded-proto")
                    || name.equalsIgnoreCase("x-forwarded-host")
                    || name.equalsIgnoreCase(fwd.dropped())) {
                continue;
            }
            for (Enumeration<String> values = request.getHeaders(name); values.hasMoreElements(); ) {
                String v = values.nextElement();
                if (v.indexOf('\r') < 0 && v.indexOf('\n') < 0) {
                    c.ascii(name);
                    c.ascii(": ");
                    c.ascii(v);
                    c.ascii("\r\n");
                }
            }
        }
        c.ascii("x-forwarded-for: ");
        c.ascii(fwd.forwardedFor());
        c.ascii("\r\nx-forwarded-proto: ");
        c.ascii(fwd.proto());
        if (fwd.host() != null) {
            c.ascii("\r\nx-forwarded-host: ");
            c.ascii(fwd.host());
        }
        if (length > 0) {
            c.ascii("\r\ncontent-length: ");
            c.ascii(Long.toString(length));
        } else if (chunked) {
            c.ascii("\r\ntransfer-encoding: chunked");
        }
        c.ascii("\r\n\r\n");
    }

    private static void body(InputStream in, Conn c, long length, boolean chunked) throws IOException {
        byte[] buffer = new byte[BUFFER];
        if (!chunked) {
            long left = length;
            while (left > 0) {
                int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
                if (n < 0) {
                    throw new EOFException("the client's body ended early");
                }
                c.write(buffer, 0, n);
                left -= n;
            }
            return;
        }
        int n;
        while ((n = in.read(buffer)) >= 0) {
            if (n > 0) {
                c.ascii(Integer.toHexString(n));
                c.write(CRLF, 0, 2);
                c.write(buffer, 0, n);
                c.write(CRLF, 0, 2);
                if (in.available() == 0) {
                    c.flush();
                }
            }
        }
        c.write(LAST_CHUNK, 0, LAST_CHUNK.length);
    }

    /** Reads the answer and passes it on; whether the connection may be used again. */
    private static boolean answer(Conn c, String method, HttpServletResponse response) throws IOException {
        String status;
        for (; ; ) {
            status = c.line();
            if (!(status.length() >= 10 && status.startsWith("HTTP/1.") && status.charAt(9) == '1')) {
                break;
            }
            // 1xx (100 Continue, 103 Early Hints) is not passed on
            while (!c.line().isEmpty()) {
                // its headers neither
            }
        }
        if (!status.startsWith("HTTP/1.") || status.length() < 12) {
            throw new NoAnswer("the deployment answered something that is not HTTP/1.x", null);
        }
        int code = Integer.parseInt(status, 9, 12, 10);
        boolean http10 = status.startsWith("HTTP/1.0");
        long length = -1;
        boolean chunked = false;
        boolean close = http10;
        response.setStatus(code);
        for (String h = c.line(); !h.isEmpty(); h = c.line()) {
            int colon = h.indexOf(':');
            if (colon <= 0) {
                continue;
            }
            String name = h.substring(0, colon).trim();
            String value = h.substring(colon + 1).trim();
            if (name.equalsIgnoreCase("content-length")) {
                length = Long.parseLong(value);
            } else if (name.equalsIgnoreCase("transfer-encoding")) {
                chunked = value.toLowerCase(java.util.Locale.ROOT).contains("chunked");
            } else if (name.equalsIgnoreCase("connection")) {
                close = value.toLowerCase(java.util.Locale.ROOT).contains("close")
                        || (http10 && !value.equalsIgnoreCase("keep-alive"));
            } else if (!hop(name)) {
                response.addHeader(name, value);
            }
        }
        if (method.equals("HEAD") || code == 204 || code == 304) {
            if (length >= 0) {
                response.setContentLengthLong(length);
            }
            return !close;
        }
        OutputStream out = response.getOutputStream();
        if (chunked) {
            for (; ; ) {
                String size = c.line();
                int semi = size.indexOf(';');
                long n = Long.parseLong((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
                if (n == 0) {
                    while (!c.line().isEmpty()) {
                        // trailers are dropped
                    }
                    break;
                }
                copy(c, out, n, true);
                if (c.read() != '\r' || c.read() != '\n') {
                    throw new IOException("a chunk is not followed by CRLF");
                }
                if (!c.buffered()) {
                    out.flush();
                }
            }
            return !close;
        }
        if (length >= 0) {
            response.setContentLengthLong(length);
            copy(c, out, length, true);
            return !close;
        }
        for (; ; ) {
            if (!c.buffered() && c.fill() < 0) {
                return false;
            }
            out.write(c.rbuf, c.rpos, c.rlim - c.rpos);
            c.rpos = c.rlim;
            out.flush();
        }
    }

    /** Passes {@code length} bytes on, straight from the connection's buffer; flushed whenever the runtime pauses. */
    private static void copy(Conn c, OutputStream out, long length, boolean flushWhenPaused) throws IOException {
        long left = length;
        while (left > 0) {
            if (!c.buffered() && c.fill() < 0) {
                throw new EOFException("the deployment's answer ended early");
            }
            int n = (int) Math.min(c.rlim - c.rpos, left);
            out.write(c.rbuf, c.rpos, n);
            c.rpos += n;
            left -= n;
            if (flushWhenPaused && left > 0 && !c.buffered()) {
                out.flush();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Deque<Conn> q : idle.values()) {
            for (Conn c; (c = q.poll()) != null; ) {
                c.close();
            }
        }
    }
}
