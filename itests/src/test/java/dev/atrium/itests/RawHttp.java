package dev.atrium.itests;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 responses read off a socket byte by byte, for tests about the framing itself (chunks, lengths, the
 * connection's end) that an HTTP client library would hide.
 */
final class RawHttp {

    record Response(int status, Map<String, String> headers, byte[] body) {
        /** A header's value (names in lower case), or null. */
        String header(String name) {
            return headers.get(name);
        }
    }

    private RawHttp() {}

    /**
     * One request over a new connection from {@code localAddress} (e.g. 127.0.0.7: Linux routes all of 127/8 to the
     * loopback interface, so the server sees a distinct client address per test).
     */
    static Response exchange(
            String base, String localAddress, String method, String target, Map<String, String> headers, byte[] body)
            throws IOException {
        java.net.URI uri = java.net.URI.create(base);
        try (java.net.Socket s = new java.net.Socket()) {
            s.bind(new java.net.InetSocketAddress(java.net.InetAddress.getByName(localAddress), 0));
            s.connect(new java.net.InetSocketAddress(uri.getHost(), uri.getPort()), 5_000);
            s.setSoTimeout(30_000);
            StringBuilder head = new StringBuilder(method)
                    .append(' ')
                    .append(target)
                    .append(" HTTP/1.1\r\nHost: ")
                    .append(uri.getHost())
                    .append(':')
                    .append(uri.getPort())
                    .append("\r\nConnection: close\r\n");
            headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
            if (body != null) {
                head.append("Content-Length: ").append(body.length).append("\r\n");
            }
            head.append("\r\n");
            var out = s.getOutputStream();
            out.write(head.toString().getBytes(StandardCharsets.UTF_8));
            if (body != null) {
                out.write(body);
            }
            out.flush();
            return read(s.getInputStream());
        }
    }

    /** One response: by its chunks, else by its Content-Length, else up to the end of the connection. */
    static Response read(InputStream in) throws IOException {
        String statusLine = line(in);
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, String> headers = new HashMap<>();
        for (String h; !(h = line(in)).isEmpty(); ) {
            int colon = h.indexOf(':');
            headers.put(
                    h.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                    h.substring(colon + 1).trim());
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            for (; ; ) {
                String size = line(in);
                int n = Integer.parseInt(size.split(";")[0].trim(), 16);
                if (n == 0) {
                    if (!line(in).isEmpty()) {
                        throw new IOException("trailers after the last chunk");
                    }
                    break;
                }
                byte[] chunk = in.readNBytes(n);
                if (chunk.length < n) {
                    throw new EOFException("the connection ended inside a chunk");
                }
                body.write(chunk);
                if (in.read() != '\r' || in.read() != '\n') {
                    throw new IOException("a chunk of " + n + " bytes is not followed by CRLF");
                }
            }
        } else if (headers.containsKey("content-length")) {
            body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
        } else {
            body.write(in.readAllBytes());
        }
        return new Response(status, headers, body.toByteArray());
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int c; (c = in.read()) != '\n'; ) {
            if (c < 0) {
                throw new EOFException("the connection ended inside a response");
            }
            b.write(c);
        }
        String s = b.toString(StandardCharsets.ISO_8859_1);
        if (!s.endsWith("\r")) {
            throw new IOException("a line not ended by CRLF: " + s);
        }
        return s.substring(0, s.length() - 1);
    }
}
