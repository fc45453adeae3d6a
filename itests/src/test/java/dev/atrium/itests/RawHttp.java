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

    private RawHttp() {
    }

    /** One response: by its chunks, else by its Content-Length, else up to the end of the connection. */
    static Response read(InputStream in) throws IOException {
        String statusLine = line(in);
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, String> headers = new HashMap<>();
        for (String h; !(h = line(in)).isEmpty();) {
            int colon = h.indexOf(':');
            headers.put(h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            for (;;) {
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
        for (int c; (c = in.read()) != '\n';) {
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
