package dev.atrium.containers.podman.internal;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ProtocolException;
import java.nio.charset.StandardCharsets;

/** HTTP/1.1 body framings: chunked in and out, and a body bounded by its Content-Length. */
final class ChunkedStreams {

    private ChunkedStreams() {}

    /**
     * A chunked body, decoded. A read returns what the current chunk has at hand rather than waiting for a full
     * buffer: streamed output must reach the caller as it arrives.
     */
    static final class In extends InputStream {

        private final InputStream in;
        private long remaining;
        private boolean done;

        In(InputStream in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (done) {
                return -1;
            }
            if (remaining == 0) {
                remaining = nextChunkSize();
                if (remaining == 0) {
                    done = true;
                    // trailers, up to the empty line
                    while (!line().isEmpty()) {
                        // ignored
                    }
                    return -1;
                }
            }
            int n = in.read(b, off, (int) Math.min(len, remaining));
            if (n < 0) {
                throw new EOFException("the connection closed in a chunk");
            }
            remaining -= n;
            if (remaining == 0) {
                line(); // the CRLF after the chunk's data
            }
            return n;
        }

        private long nextChunkSize() throws IOException {
            String size = line();
            int semicolon = size.indexOf(';');
            if (semicolon >= 0) {
                size = size.substring(0, semicolon);
            }
            try {
                long n = Long.parseLong(size.trim(), 16);
                if (n < 0) {
                    throw new ProtocolException("bad chunk size: " + size);
                }
                return n;
            } catch (NumberFormatException e) {
                throw new ProtocolException("bad chunk size: " + size);
            }
        }

        private String line() throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(16);
            for (int c = in.read(); c != '\n'; c = in.read()) {
                if (c < 0) {
                    throw new EOFException("the connection closed in a chunk header");
                }
                if (bytes.size() > 4096) {
                    throw new ProtocolException("chunk header too long");
                }
                bytes.write(c);
            }
            String line = bytes.toString(StandardCharsets.ISO_8859_1);
            return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
        }
    }

    /** A body of {@code length} bytes; the connection's bytes after it are not read. */
    static final class Bounded extends InputStream {

        private final InputStream in;
        private long remaining;

        Bounded(InputStream in, long length) {
            this.in = in;
            this.remaining = length;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (remaining == 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, remaining));
            if (n < 0) {
                throw new EOFException("the connection closed " + remaining + " bytes before the body's end");
            }
            remaining -= n;
            return n;
        }
    }

    /** Writes each write as one chunk; {@link #finish} writes the last chunk (without closing the connection). */
    static final class Out extends FilterOutputStream {

        Out(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return;
            }
            out.write((Integer.toHexString(len) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.write(b, off, len);
            out.write(new byte[] {'\r', '\n'});
        }

        void finish() throws IOException {
            out.write(new byte[] {'0', '\r', '\n', '\r', '\n'});
            out.flush();
        }

        @Override
        public void close() throws IOException {
            flush(); // the connection is the exchange's to close
        }
    }
}
