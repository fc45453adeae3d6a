package dev.atrium.containers.podman.internal;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.ProtocolException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A minimal HTTP/1.1 client over a unix domain socket: the JDK's HttpClient cannot connect to one, and the podman
 * service must not listen on TCP (its rootful API would give any local process root). One connection per request
 * ({@code Connection: close}): connecting to a local socket costs microseconds, and it lets a body run until close.
 */
final class UnixHttp {

    private static final int MAX_HEAD_LINE = 64 * 1024;

    private final Path socket;
    private final ScheduledExecutorService timer;

    /** @param timer closes connections whose {@link #request} outlives its timeout */
    UnixHttp(Path socket, ScheduledExecutorService timer) {
        this.socket = socket;
        this.timer = timer;
    }

    /** A request body: its length ({@code -1}: unknown, sent chunked) and how it is written. */
    interface Body {
        long length();

        void writeTo(OutputStream out) throws IOException;

        static Body of(byte[] bytes) {
            return new Body() {
                @Override
                public long length() {
                    return bytes.length;
                }

                @Override
                public void writeTo(OutputStream out) throws IOException {
                    out.write(bytes);
                }
            };
        }

        static Body of(Path file) throws IOException {
            long size = Files.size(file);
            return new Body() {
                @Override
                public long length() {
                    return size;
                }

                @Override
                public void writeTo(OutputStream out) throws IOException {
                    try (InputStream in = Files.newInputStream(file)) {
                        long copied = in.transferTo(out);
                        if (copied != size) {
                            throw new IOException(file + " changed while it was sent");
                        }
                    }
                }
            };
        }
    }

    /** A whole response. */
    record Response(int status, Map<String, String> headers, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /**
     * Sends a request and reads the whole response; the connection is closed when {@code timeout} passes first.
     *
     * @throws InterruptedIOException when the timeout passed
     */
    Response request(String method, String target, String contentType, Body body, Duration timeout) throws IOException {
        Exchange exchange = open(method, target, contentType, body);
        AtomicBoolean timedOut = new AtomicBoolean();
        ScheduledFuture<?> deadline = timer.schedule(
                () -> {
                    timedOut.set(true);
                    exchange.close();
                },
                timeout.toMillis(),
                TimeUnit.MILLISECONDS);
        try (exchange) {
            exchange.readHead();
            byte[] bytes = exchange.body().readAllBytes();
            return new Response(exchange.status(), exchange.headers(), bytes);
        } catch (IOException e) {
            if (timedOut.get()) {
                throw new InterruptedIOException(method + " " + target + ": no answer within " + timeout);
            }
            throw e;
        } finally {
            deadline.cancel(false);
        }
    }

    /** Opens a connection and sends the request; the caller reads the response with {@link Exchange#readHead}. */
    Exchange open(String method, String target, String contentType, Body body) throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            channel.connect(UnixDomainSocketAddress.of(socket));
            Exchange exchange = new Exchange(channel);
            exchange.send(method, target, contentType, body);
            return exchange;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * One request and its response, read as it comes. Closing it closes the connection (from any thread: a reader
     * blocked in {@link #body()} then fails).
     */
    static final class Exchange implements Closeable {

        private final SocketChannel channel;
        private final InputStream in;
        private final OutputStream out;
        private boolean head;
        private String method = "";
        private int status;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private InputStream body;

        Exchange(SocketChannel channel) {
            this.channel = channel;
            this.in = new BufferedInputStream(Channels.newInputStream(channel), 16 * 1024);
            this.out = new BufferedOutputStream(Channels.newOutputStream(channel), 16 * 1024);
        }

        void send(String method, String target, String contentType, Body body) throws IOException {
            this.method = method;
            StringBuilder request = new StringBuilder()
                    .append(method)
                    .append(' ')
                    .append(target)
                    .append(" HTTP/1.1\r\nHost: podman\r\nConnection: close\r\n");
            if (body != null) {
                if (contentType != null) {
                    request.append("Content-Type: ").append(contentType).append("\r\n");
                }
                if (body.length() >= 0) {
                    request.append("Content-Length: ").append(body.length()).append("\r\n");
                } else {
                    request.append("Transfer-Encoding: chunked\r\n");
                }
            } else if (!"GET".equals(method) && !"HEAD".equals(method)) {
                request.append("Content-Length: 0\r\n");
            }
            request.append("\r\n");
            out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
            if (body != null) {
                if (body.length() >= 0) {
                    body.writeTo(out);
                } else {
                    ChunkedStreams.Out chunked = new ChunkedStreams.Out(out);
                    body.writeTo(chunked);
                    chunked.finish();
                }
            }
            out.flush();
        }

        /** Reads the status line and the headers (skipping interim 1xx answers), once. */
        void readHead() throws IOException {
            if (head) {
                return;
            }
            do {
                String statusLine = line();
                String[] parts = statusLine.split(" ", 3);
                if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
                    throw new ProtocolException("not an HTTP response: " + statusLine);
                }
                try {
                    status = Integer.parseInt(parts[1]);
                } catch (NumberFormatException e) {
                    throw new ProtocolException("not an HTTP status: " + statusLine);
                }
                headers.clear();
                for (String header = line(); !header.isEmpty(); header = line()) {
                    int colon = header.indexOf(':');
                    if (colon > 0) {
                        headers.put(
                                header.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                                header.substring(colon + 1).trim());
                    }
                }
            } while (status >= 100 && status < 200 && status != 101);
            head = true;
            body = bodyStream();
        }

        private InputStream bodyStream() throws ProtocolException {
            if ("HEAD".equals(method) || status == 204 || status == 304) {
                return InputStream.nullInputStream();
            }
            String encoding = headers.get("transfer-encoding");
            if (encoding != null && encoding.toLowerCase(Locale.ROOT).contains("chunked")) {
                return new ChunkedStreams.In(in);
            }
            String length = headers.get("content-length");
            if (length != null) {
                try {
                    return new ChunkedStreams.Bounded(in, Long.parseLong(length));
                } catch (NumberFormatException e) {
                    throw new ProtocolException("bad Content-Length: " + length);
                }
            }
            return in; // until the server closes the connection
        }

        int status() {
            return status;
        }

        Map<String, String> headers() {
            return headers;
        }

        /** The decoded body: by Content-Length, chunked, or until the connection closes. */
        InputStream body() throws IOException {
            readHead();
            return body;
        }

        private String line() throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
            for (int c = in.read(); c != '\n'; c = in.read()) {
                if (c < 0) {
                    throw new EOFException("the connection closed in the response head");
                }
                if (bytes.size() >= MAX_HEAD_LINE) {
                    throw new ProtocolException("response head line too long");
                }
                bytes.write(c);
            }
            String line = bytes.toString(StandardCharsets.ISO_8859_1);
            return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
        }

        @Override
        public void close() {
            try {
                channel.close();
            } catch (IOException e) {
                // nothing to do: the connection is gone either way
            }
        }
    }
}
