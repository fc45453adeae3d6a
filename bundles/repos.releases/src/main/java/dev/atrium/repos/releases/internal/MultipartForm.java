package dev.atrium.repos.releases.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * A {@code multipart/form-data} body (RFC 7578) read as it arrives: each part's bytes are a stream that ends at the
 * next boundary, so a part of gigabytes passes through a buffer of 64 KiB and is never held whole.
 */
final class MultipartForm {

    /** The body is not the multipart form it says it is; the message says what is wrong. */
    static final class Malformed extends IOException {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message);
        }
    }

    /**
     * One part.
     *
     * @param name        its form field name
     * @param filename    the file name it carries, or null for a plain field
     * @param contentType its {@code Content-Type}, or null
     * @param body        its bytes, readable until the next part is asked for
     */
    record Part(String name, String filename, String contentType, InputStream body) {}

    private static final int BUFFER = 64 * 1024;
    private static final int MAX_HEADER_BYTES = 16 * 1024;
    /**
     * The most bytes skipped over, in the preamble and in parts the reader does not read: without a bound, a client could
     * keep a request (and its thread) going for good with a preamble or fields that never end, since only the file's
     * bytes are counted against the upload's size.
     */
    static final long MAX_SKIPPED_BYTES = 1024 * 1024;
    /** The most parts a form may have: an upload is one file and a few fields. */
    static final int MAX_PARTS = 64;

    private final InputStream in;
    private final byte[] delimiter;
    private final byte[] buf;
    private int pos;
    private int limit;
    /** Every index in [pos, checked) was found not to start the delimiter. */
    private int checked;

    private boolean atDelimiter;
    private boolean finished;
    private boolean started;
    private PartBody current;
    private long skipped;
    private int parts;

    MultipartForm(InputStream in, String boundary) {
        this.in = in;
        this.delimiter = ("\r\n--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        this.buf = new byte[BUFFER + delimiter.length];
        // the first boundary has no CRLF before it: begin with one, so that it is found like every other
        buf[0] = '\r';
        buf[1] = '\n';
        limit = 2;
    }

    /**
     * The {@code boundary} parameter of a {@code multipart/form-data} content type.
     *
     * @throws Malformed when the type is another one or has no usable boundary
     */
    static String boundary(String contentType) throws Malformed {
        if (contentType == null || !contentType.trim().toLowerCase(Locale.ROOT).startsWith("multipart/form-data")) {
            throw new Malformed("the upload must be multipart/form-data, with the file in a part named attachment");
        }
        for (String param : contentType.split(";")) {
            String p = param.trim();
            if (p.regionMatches(true, 0, "boundary=", 0, 9)) {
                String b = p.substring(9).trim();
                if (b.length() >= 2 && b.startsWith("\"") && b.endsWith("\"")) {
                    b = b.substring(1, b.length() - 1);
                }
                // RFC 2046 §5.1.1: 1 to 70 characters
                if (b.isEmpty() || b.length() > 70 || b.chars().anyMatch(c -> c < 0x20 || c > 0x7e)) {
                    throw new Malformed("the multipart boundary must be 1 to 70 printable ASCII characters");
                }
                return b;
            }
        }
        throw new Malformed("the multipart/form-data content type has no boundary parameter");
    }

    /** The next part, once the previous one's unread bytes are skipped; null after the last one. */
    Part next() throws IOException {
        if (!started) {
            started = true;
            skipToDelimiter(); // the preamble
        } else if (current != null) {
            skipToDelimiter();
        }
        current = null;
        if (finished) {
            return null;
        }
        ensure(2, "the body ends after a boundary");
        if (buf[pos] == '-' && buf[pos + 1] == '-') {
            finished = true;
            return null;
        }
        if (++parts > MAX_PARTS) {
            throw new Malformed("the form has more than " + MAX_PARTS + " parts");
        }
        // transport padding, then the line break that ends the boundary line
        while (true) {
            ensure(1, "the body ends after a boundary");
            if (buf[pos] == ' ' || buf[pos] == '\t') {
                pos++;
            } else {
                break;
            }
        }
        ensure(2, "the body ends after a boundary");
        if (buf[pos] != '\r' || buf[pos + 1] != '\n') {
            throw new Malformed("a multipart boundary line must end with CRLF");
        }
        pos += 2;
        String name = null;
        String filename = null;
        String type = null;
        int headerBytes = 0;
        while (true) {
            String line = line();
            if (line.isEmpty()) {
                break;
            }
            headerBytes += line.length() + 2;
            if (headerBytes > MAX_HEADER_BYTES) {
                throw new Malformed("a part's headers exceed " + MAX_HEADER_BYTES + " bytes");
            }
            int colon = line.indexOf(':');
            if (colon <= 0) {
                throw new Malformed("a part header is not Name: value");
            }
            String header = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            if (header.equals("content-disposition")) {
                name = parameter(value, "name");
                String star = parameter(value, "filename*");
                filename = star != null ? extended(star) : parameter(value, "filename");
            } else if (header.equals("content-type")) {
                type = value;
            }
        }
        if (name == null) {
            throw new Malformed("a part has no Content-Disposition: form-data; name=\"...\"");
        }
        atDelimiter = false;
        checked = pos;
        current = new PartBody();
        return new Part(name, filename, type, current);
    }

    /** A header line (ISO-8859-1, as the bytes came; RFC 7578 lets a file name be UTF-8 too: see {@link #utf8}). */
    private String line() throws IOException {
        StringBuilder sb = new StringBuilder();
        while (true) {
            ensure(2, "the body ends inside a part's headers");
            if (buf[pos] == '\r' && buf[pos + 1] == '\n') {
                pos += 2;
                return utf8(sb.toString());
            }
            sb.append((char) (buf[pos++] & 0xff));
            if (sb.length() > MAX_HEADER_BYTES) {
                throw new Malformed("a part's headers exceed " + MAX_HEADER_BYTES + " bytes");
            }
        }
    }

    /** Browsers send a file name's UTF-8 bytes as they are: decode them when they are valid UTF-8. */
    private static String utf8(String latin1) {
        byte[] bytes = latin1.getBytes(StandardCharsets.ISO_8859_1);
        String decoded = new String(bytes, StandardCharsets.UTF_8);
        return decoded.indexOf('\uFFFD') >= 0 ? latin1 : decoded;
    }

    /** A parameter of a header value ({@code name="x"} or {@code name=x}), unquoted; null when absent. */
    static String parameter(String value, String wanted) {
        int i = 0;
        int n = value.length();
        while (i < n) {
            int semi = value.indexOf(';', i);
            if (semi < 0) {
                return null;
            }
            i = semi + 1;
            while (i < n && value.charAt(i) == ' ') {
                i++;
            }
            int eq = value.indexOf('=', i);
            if (eq < 0) {
                return null;
            }
            String key = value.substring(i, eq).trim();
            i = eq + 1;
            String v;
            if (i < n && value.charAt(i) == '"') {
                StringBuilder sb = new StringBuilder();
                i++;
                while (i < n && value.charAt(i) != '"') {
                    char c = value.charAt(i);
                    if (c == '\\' && i + 1 < n) {
                        c = value.charAt(++i);
                    }
                    sb.append(c);
                    i++;
                }
                i++;
                v = sb.toString();
            } else {
                int end = value.indexOf(';', i);
                v = (end < 0 ? value.substring(i) : value.substring(i, end)).trim();
                i = end < 0 ? n : end;
            }
            if (key.equalsIgnoreCase(wanted)) {
                return v;
            }
        }
        return null;
    }

    /** RFC 8187's {@code UTF-8''percent-encoded} value. */
    private static String extended(String value) throws Malformed {
        int quote = value.indexOf("''");
        if (quote < 0 || !value.substring(0, quote).equalsIgnoreCase("UTF-8")) {
            throw new Malformed("filename* must be UTF-8''<percent-encoded name>");
        }
        try {
            return java.net.URLDecoder.decode(value.substring(quote + 2).replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new Malformed("filename* is not percent-encoded UTF-8");
        }
    }

    private void skipToDelimiter() throws IOException {
        byte[] sink = new byte[8192];
        for (int n; (n = readBody(sink, 0, sink.length)) >= 0; ) {
            skipped += n;
            if (skipped > MAX_SKIPPED_BYTES) {
                throw new Malformed("the form has more than " + MAX_SKIPPED_BYTES
                        + " bytes outside its file (a preamble, or fields that are not read)");
            }
        }
    }

    /** At least {@code n} bytes from {@code pos}, or {@link Malformed} with {@code why}. */
    private void ensure(int n, String why) throws IOException {
        while (limit - pos < n) {
            if (fill() < 0) {
                throw new Malformed(why);
            }
        }
    }

    /** Reads more of the body behind what is buffered; -1 at its end. */
    private int fill() throws IOException {
        if (pos > 0) {
            System.arraycopy(buf, pos, buf, 0, limit - pos);
            limit -= pos;
            checked -= pos;
            pos = 0;
        }
        int n = in.read(buf, limit, buf.length - limit);
        if (n > 0) {
            limit += n;
        }
        return n;
    }

    /** Bytes of the current part into {@code b}; -1 once its closing delimiter is reached (and consumed). */
    private int readBody(byte[] b, int off, int len) throws IOException {
        if (atDelimiter) {
            return -1;
        }
        while (true) {
            int found = -1;
            int last = limit - delimiter.length;
            int i = Math.max(pos, checked);
            for (; i <= last; i++) {
                if (buf[i] == delimiter[0] && matchesAt(i)) {
                    found = i;
                    break;
                }
            }
            checked = i;
            // bytes before the delimiter, or before a tail that could still become one
            int safe = found >= 0 ? found : Math.max(pos, last + 1);
            if (safe > pos) {
                int n = Math.min(len, safe - pos);
                System.arraycopy(buf, pos, b, off, n);
                pos += n;
                return n;
            }
            if (found == pos) {
                pos += delimiter.length;
                atDelimiter = true;
                return -1;
            }
            if (fill() < 0) {
                throw new Malformed("the body ends inside a part: its closing boundary is missing");
            }
        }
    }

    private boolean matchesAt(int i) {
        for (int k = 1; k < delimiter.length; k++) {
            if (buf[i + k] != delimiter[k]) {
                return false;
            }
        }
        return true;
    }

    /** The current part's bytes. */
    private final class PartBody extends InputStream {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (current != this) {
                return -1;
            }
            if (len == 0) {
                return 0;
            }
            // fill the caller's buffer: a store writes what it gets, and few large writes are faster
            int filled = 0;
            while (filled < len) {
                int n = readBody(b, off + filled, len - filled);
                if (n < 0) {
                    return filled == 0 ? -1 : filled;
                }
                filled += n;
            }
            return filled;
        }
    }
}
