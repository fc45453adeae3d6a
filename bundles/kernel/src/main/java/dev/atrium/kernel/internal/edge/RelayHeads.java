package dev.atrium.kernel.internal.edge;

import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * The HTTP/1.1 the relay reads: request and response heads, and where a chunked body ends. Strict on purpose: a request
 * head that is anything but plain (an unusual target, a folded or bare-LF line, two framings, an Upgrade) is not
 * relayed at all, and Jetty answers it as it answers every other request, with the spec's errors.
 */
final class RelayHeads {

    /** Longest request head relayed (Jetty's own limit; a longer one goes to Jetty, which answers 431). */
    static final int MAX_REQUEST_HEAD = 8192;

    private RelayHeads() {}

    /** The index just past a head's blank line in {@code a[from, to)}, or -1 when it has not all arrived. */
    static int headEnd(byte[] a, int from, int to) {
        for (int i = from + 3; i < to; i++) {
            if (a[i] == '\n' && a[i - 1] == '\r' && a[i - 2] == '\n' && a[i - 3] == '\r') {
                return i + 1;
            }
        }
        return -1;
    }

    /** A request head the relay passes on; header lines are kept as offsets into the buffer it was read from. */
    static final class Request {
        String method;
        String target;
        String host;
        /** The Host header as sent, for X-Forwarded-Host. */
        String hostHeader;

        long contentLength = -1;
        boolean chunked;
        boolean close;
        boolean head;
        boolean connectionUpgrade;
        boolean h2c;
        String forwardedFor;
        /** Start and end (before CRLF) of each header line, and the end of its name. */
        int[] lines = new int[48];

        int count;
        int end;

        /** The head to send upstream: the target under {@code prefix}, the client's headers less the dropped, ours. */
        byte[] forUpstream(byte[] a, String prefix, Set<String> dropped, String remote) {
            StringBuilder s = new StringBuilder(end + 160);
            s.append(method).append(' ').append(prefix).append(target).append(" HTTP/1.1\r\n");
            for (int i = 0; i < count; i++) {
                int start = lines[3 * i];
                int stop = lines[3 * i + 1];
                int nameEnd = lines[3 * i + 2];
                if (is(a, start, nameEnd, "x-forwarded-for")
                        || is(a, start, nameEnd, "x-forwarded-proto")
                        || is(a, start, nameEnd, "x-forwarded-host")
                        || dropped(a, start, nameEnd, dropped)) {
                    continue;
                }
                for (int k = start; k < stop; k++) {
                    s.append((char) (a[k] & 0xff));
                }
                s.append("\r\n");
            }
            s.append("x-forwarded-for: ")
                    .append(forwardedFor == null ? remote : forwardedFor + ", " + remote)
                    .append("\r\nx-forwarded-proto: http\r\nx-forwarded-host: ")
                    .append(hostHeader)
                    .append("\r\n\r\n");
            return s.toString().getBytes(StandardCharsets.ISO_8859_1);
        }

        private static boolean dropped(byte[] a, int start, int nameEnd, Set<String> dropped) {
            for (String name : dropped) {
                if (is(a, start, nameEnd, name)) {
                    return true;
                }
            }
            return false;
        }

        private void line(int start, int stop, int nameEnd) {
            if (3 * count + 3 > lines.length) {
                lines = java.util.Arrays.copyOf(lines, lines.length * 2);
            }
            lines[3 * count] = start;
            lines[3 * count + 1] = stop;
            lines[3 * count + 2] = nameEnd;
            count++;
        }
    }

    /**
     * Reads the request head in {@code a[from, end)} ({@code end} from {@link #headEnd}), or null when it is not one the
     * relay passes on.
     */
    static Request request(byte[] a, int from, int end) {
        Request r = new Request();
        r.end = end;
        int eol = lineEnd(a, from, end);
        if (eol < 0) {
            return null;
        }
        int sp1 = indexOf(a, from, eol, (byte) ' ');
        if (sp1 <= from) {
            return null;
        }
        for (int i = from; i < sp1; i++) {
            if (!token(a[i])) {
                return null;
            }
        }
        int sp2 = indexOf(a, sp1 + 1, eol, (byte) ' ');
        if (sp2 < 0 || !is(a, sp2 + 1, eol, "HTTP/1.1")) {
            return null; // HTTP/1.0, HTTP/2 prior knowledge, a target with a space: Jetty's
        }
        if (!plainTarget(a, sp1 + 1, sp2)) {
            return null;
        }
        r.method = new String(a, from, sp1 - from, StandardCharsets.ISO_8859_1);
        r.target = new String(a, sp1 + 1, sp2 - sp1 - 1, StandardCharsets.ISO_8859_1);
        r.head = r.method.equals("HEAD");
        boolean transferEncoding = false;
        for (int start = eol + 2; start < end - 2; ) {
            int stop = lineEnd(a, start, end);
            if (stop < 0) {
                return null;
            }
            int colon = indexOf(a, start, stop, (byte) ':');
            if (colon <= start) {
                return null; // a folded line (it starts with a space) or no name
            }
            for (int i = start; i < colon; i++) {
                if (!token(a[i])) {
                    return null;
                }
            }
            int vs = colon + 1;
            while (vs < stop && (a[vs] == ' ' || a[vs] == '\t')) {
                vs++;
            }
            int ve = stop;
            while (ve > vs && (a[ve - 1] == ' ' || a[ve - 1] == '\t')) {
                ve--;
            }
            for (int i = vs; i < ve; i++) {
                byte b = a[i];
                if ((b < 0x20 && b != '\t') || b == 0x7f) {
                    return null;
                }
            }
            int n = colon - start;
            if (n == 4 && is(a, start, colon, "host")) {
                if (r.host != null || ve == vs) {
                    return null;
                }
                r.hostHeader = new String(a, vs, ve - vs, StandardCharsets.ISO_8859_1);
                r.host = dev.atrium.kernel.api.HostRouter.Claims.host(r.hostHeader);
                if (r.host == null) {
                    return null;
                }
            } else if (n == 14 && is(a, start, colon, "content-length")) {
                if (r.contentLength >= 0 || ve == vs || ve - vs > 15) {
                    return null;
                }
                long length = 0;
                for (int i = vs; i < ve; i++) {
                    if (a[i] < '0' || a[i] > '9') {
                        return null;
                    }
                    length = length * 10 + (a[i] - '0');
                }
                r.contentLength = length;
            } else if (n == 17 && is(a, start, colon, "transfer-encoding")) {
                if (transferEncoding || !is(a, vs, ve, "chunked")) {
                    return null;
                }
                transferEncoding = true;
                r.chunked = true;
            } else if (n == 10 && is(a, start, colon, "connection")) {
                boolean upgrade = false;
                for (String token : lower(a, vs, ve).split(",")) {
                    token = token.trim();
                    r.close |= token.equals("close");
                    upgrade |= token.equals("upgrade") || token.equals("http2-settings");
                }
                if (upgrade) {
                    // only with "Upgrade: h2c", which is declined by leaving it out (RFC 9110 7.8): Java's HTTP
                    // client asks it of every plain HTTP request
                    r.connectionUpgrade = true;
                    start = stop + 2;
                    continue;
                }
            } else if (n == 7 && is(a, start, colon, "upgrade")) {
                if (!is(a, vs, ve, "h2c")) {
                    return null; // a WebSocket keeps Jetty's path
                }
                r.h2c = true;
                start = stop + 2;
                continue;
            } else if (n == 14 && is(a, start, colon, "http2-settings")) {
                start = stop + 2;
                continue;
            } else if (n == 2 && is(a, start, colon, "te")) {
                return null; // trailers asked for, which the relay does not read
            } else if (n == 15 && is(a, start, colon, "x-forwarded-for")) {
                String v = new String(a, vs, ve - vs, StandardCharsets.ISO_8859_1);
                r.forwardedFor = r.forwardedFor == null ? v : r.forwardedFor + ", " + v;
            }
            r.line(start, stop, colon);
            start = stop + 2;
        }
        if (r.host == null || (r.chunked && r.contentLength >= 0) || (r.connectionUpgrade && !r.h2c)) {
            return null;
        }
        return r;
    }

    /**
     * An origin-form target with nothing Jetty or the envelope would refuse, decode or normalise: visible ASCII, no
     * dot segment, no empty segment, no path parameter, no encoded control character, dot, slash, backslash or
     * semicolon, no fragment. Percent-encoded UTF-8 passes as sent; the worker decodes it.
     */
    static boolean plainTarget(byte[] a, int from, int to) {
        if (to <= from || a[from] != '/') {
            return false;
        }
        int pathEnd = to;
        for (int i = from; i < to; i++) {
            byte b = a[i];
            if (b <= 0x20 || b >= 0x7f || b == '#' || b == '\\' || b == '"' || b == '<' || b == '>' || b == '`'
                    || b == '{' || b == '}' || b == '|' || b == '^') {
                return false;
            }
            if (b == '?' && pathEnd == to) {
                pathEnd = i;
            }
            if (b == '%') {
                if (i + 2 >= to || hex(a[i + 1]) < 0 || hex(a[i + 2]) < 0) {
                    return false;
                }
                int v = hex(a[i + 1]) * 16 + hex(a[i + 2]);
                if (v < 0x20 || v == '.' || v == '/' || v == '\\' || v == ';' || v == 0x7f) {
                    return false;
                }
            }
        }
        for (int i = from; i < pathEnd; i++) {
            if (a[i] == ';') {
                return false; // path parameters: Jetty strips them
            }
            if (a[i] == '/' && i + 1 < pathEnd && a[i + 1] == '.') {
                int next = i + 2;
                if (next == pathEnd
                        || a[next] == '/'
                        || (a[next] == '.' && (next + 1 == pathEnd || a[next + 1] == '/'))) {
                    return false;
                }
            }
            if (a[i] == '/' && i + 1 < pathEnd && a[i + 1] == '/') {
                return false;
            }
        }
        return true;
    }

    /** What the relay needs of a response head: its status and how its body ends. */
    static final class Response {
        int status;
        long contentLength = -1;
        boolean chunked;
        /** Neither length nor chunked (and a body allowed): the body ends when the upstream closes. */
        boolean untilClose;

        boolean close;
        boolean stream;
        /** The head to send the client instead of the upstream's, or null to send it as it came. */
        byte[] rewritten;
    }

    /**
     * The index just past a response head's blank line in {@code a[from, to)}, or -1: lines may end in a bare LF, as
     * RFC 9112 2.2 lets a recipient accept (busybox's httpd passes a CGI script's LF lines on).
     */
    static int responseHeadEnd(byte[] a, int from, int to) {
        for (int i = from; i < to - 1; i++) {
            if (a[i] == '\n') {
                if (a[i + 1] == '\n') {
                    return i + 2;
                }
                if (a[i + 1] == '\r' && i + 2 < to && a[i + 2] == '\n') {
                    return i + 3;
                }
            }
        }
        return -1;
    }

    /**
     * Reads the response head in {@code a[from, end)} ({@code end} from {@link #responseHeadEnd}), or null when it is
     * not HTTP/1.x. A head that is not HTTP/1.1 with CRLF lines gets {@link Response#rewritten}: the client hears the
     * relay's own version (RFC 9110 6.2) and CRLF lines.
     */
    static Response response(byte[] a, int from, int end, boolean requestWasHead) {
        int eol = indexOf(a, from, end, (byte) '\n');
        int statusEnd = eol > from && a[eol - 1] == '\r' ? eol - 1 : eol;
        if (eol < 0 || statusEnd - from < 12 || !is(a, from, from + 7, "HTTP/1.") || a[from + 8] != ' ') {
            return null;
        }
        int status = 0;
        for (int i = from + 9; i < from + 12; i++) {
            if (a[i] < '0' || a[i] > '9') {
                return null;
            }
            status = status * 10 + (a[i] - '0');
        }
        Response r = new Response();
        r.status = status;
        boolean http10 = a[from + 7] == '0';
        boolean normal = !http10 && statusEnd == eol - 1;
        r.close = http10;
        boolean transferEncoding = false;
        StringBuilder rewritten = new StringBuilder(end - from + 32)
                .append("HTTP/1.1")
                .append(new String(a, from + 8, statusEnd - from - 8, StandardCharsets.ISO_8859_1))
                .append("\r\n");
        for (int start = eol + 1; start < end; ) {
            int nl = indexOf(a, start, end, (byte) '\n');
            int stop = nl > start && a[nl - 1] == '\r' ? nl - 1 : nl;
            if (stop == start) {
                break; // the blank line
            }
            normal &= stop == nl - 1;
            rewritten
                    .append(new String(a, start, stop - start, StandardCharsets.ISO_8859_1))
                    .append("\r\n");
            int colon = indexOf(a, start, stop, (byte) ':');
            if (colon > start) {
                int vs = colon + 1;
                while (vs < stop && (a[vs] == ' ' || a[vs] == '\t')) {
                    vs++;
                }
                int ve = stop;
                while (ve > vs && (a[ve - 1] == ' ' || a[ve - 1] == '\t')) {
                    ve--;
                }
                int n = colon - start;
                if (n == 14 && is(a, start, colon, "content-length")) {
                    try {
                        r.contentLength = Long.parseLong(new String(a, vs, ve - vs, StandardCharsets.ISO_8859_1));
                    } catch (NumberFormatException e) {
                        return null;
                    }
                } else if (n == 17 && is(a, start, colon, "transfer-encoding")) {
                    transferEncoding = true;
                    r.chunked = lower(a, vs, ve).endsWith("chunked");
                } else if (n == 10 && is(a, start, colon, "connection")) {
                    String v = lower(a, vs, ve);
                    r.close = v.contains("close") || (http10 && !v.contains("keep-alive"));
                } else if (n == 12 && is(a, start, colon, "content-type")) {
                    r.stream = lower(a, vs, ve).startsWith("text/event-stream");
                }
            }
            start = nl + 1;
        }
        if (transferEncoding) {
            r.contentLength = -1;
        }
        boolean bodiless = requestWasHead || status == 204 || status == 304 || status < 200;
        if (bodiless) {
            r.contentLength = 0;
            r.chunked = false;
        } else if (!r.chunked && r.contentLength < 0) {
            r.untilClose = true;
            r.close = true;
        }
        if (!normal) {
            r.rewritten = rewritten.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
        }
        return r;
    }

    /**
     * Finds where a chunked body ends, fed the bytes as they pass (chunk sizes, extensions, data, the last chunk and
     * trailers); the bytes themselves are passed on unchanged.
     */
    static final class Chunks {
        private static final int SIZE = 0;
        private static final int EXTENSION = 1;
        private static final int SIZE_LF = 2;
        private static final int DATA = 3;
        private static final int DATA_CR = 4;
        private static final int DATA_LF = 5;
        private static final int TRAILER_START = 6;
        private static final int TRAILER = 7;
        private static final int TRAILER_LF = 8;
        private static final int END_LF = 9;
        static final int DONE = 10;

        private int state = SIZE;
        private long size;
        private int digits;

        /**
         * Reads {@code a[from, to)}: the index just past the body's end, {@code -1} when it goes on past {@code to},
         * or {@code -2} when the framing is broken.
         */
        int feed(byte[] a, int from, int to) {
            int i = from;
            while (i < to) {
                byte b = a[i];
                switch (state) {
                    case SIZE -> {
                        int h = hex(b);
                        if (h >= 0) {
                            if (++digits > 15) {
                                return -2;
                            }
                            size = size * 16 + h;
                        } else if (digits == 0) {
                            return -2;
                        } else if (b == '\r') {
                            state = SIZE_LF;
                        } else if (b == ';' || b == ' ' || b == '\t') {
                            state = EXTENSION;
                        } else {
                            return -2;
                        }
                        i++;
                    }
                    case EXTENSION -> {
                        if (b == '\r') {
                            state = SIZE_LF;
                        } else if (b == '\n') {
                            return -2;
                        }
                        i++;
                    }
                    case SIZE_LF -> {
                        if (b != '\n') {
                            return -2;
                        }
                        state = size == 0 ? TRAILER_START : DATA;
                        i++;
                    }
                    case DATA -> {
                        long n = Math.min(size, to - i);
                        size -= n;
                        i += (int) n;
                        if (size == 0) {
                            state = DATA_CR;
                        }
                    }
                    case DATA_CR, DATA_LF, TRAILER_LF, END_LF -> {
                        if (b != (state == DATA_CR ? '\r' : '\n')) {
                            return -2;
                        }
                        i++;
                        if (state == END_LF) {
                            state = DONE;
                            return i;
                        }
                        digits = 0;
                        state = state == DATA_CR ? DATA_LF : state == DATA_LF ? SIZE : TRAILER_START;
                    }
                    case TRAILER_START -> {
                        state = b == '\r' ? END_LF : TRAILER;
                        i++;
                    }
                    case TRAILER -> {
                        if (b == '\r') {
                            state = TRAILER_LF;
                        }
                        i++;
                    }
                    default -> {
                        return i;
                    }
                }
            }
            return -1;
        }
    }

    private static int lineEnd(byte[] a, int from, int to) {
        for (int i = from; i < to - 1; i++) {
            if (a[i] == '\r') {
                return a[i + 1] == '\n' ? i : -1;
            }
            if (a[i] == '\n') {
                return -1; // a bare LF
            }
        }
        return -1;
    }

    private static int indexOf(byte[] a, int from, int to, byte b) {
        for (int i = from; i < to; i++) {
            if (a[i] == b) {
                return i;
            }
        }
        return -1;
    }

    /** Whether {@code a[from, to)} is {@code s}, ignoring ASCII case. */
    static boolean is(byte[] a, int from, int to, String s) {
        if (to - from != s.length()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            int x = a[from + i];
            int y = s.charAt(i);
            if (x != y && ((x | 0x20) != (y | 0x20) || !Character.isLetter(y))) {
                return false;
            }
        }
        return true;
    }

    private static String lower(byte[] a, int from, int to) {
        char[] c = new char[to - from];
        for (int i = from; i < to; i++) {
            int b = a[i] & 0xff;
            c[i - from] = (char) (b >= 'A' && b <= 'Z' ? b + 32 : b);
        }
        return new String(c);
    }

    private static boolean token(byte b) {
        return (b >= 'a' && b <= 'z')
                || (b >= 'A' && b <= 'Z')
                || (b >= '0' && b <= '9')
                || "!#$%&'*+-.^_`|~".indexOf(b) >= 0;
    }

    private static int hex(byte b) {
        if (b >= '0' && b <= '9') {
            return b - '0';
        }
        if (b >= 'a' && b <= 'f') {
            return b - 'a' + 10;
        }
        if (b >= 'A' && b <= 'F') {
            return b - 'A' + 10;
        }
        return -1;
    }
}
