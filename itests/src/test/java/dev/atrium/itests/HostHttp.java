package dev.atrium.itests;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Requests to the server with a Host header of the test's choosing (a service's {@code <slug>.<apps domain>} or a
 * custom domain), which the JDK's HTTP client does not let a caller set: plain HTTP/1.1 over a socket, one connection per
 * request, the answer read by {@link RawHttp#read}.
 */
final class HostHttp {

    private HostHttp() {}

    static RawHttp.Response get(int port, String host, String path) throws IOException {
        return send(port, host, "GET", path, Map.of(), null);
    }

    static RawHttp.Response send(
            int port, String host, String method, String path, Map<String, String> headers, byte[] body)
            throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            s.setSoTimeout(30_000);
            StringBuilder head = new StringBuilder(method)
                    .append(' ')
                    .append(path)
                    .append(" HTTP/1.1\r\nHost: ")
                    .append(host)
                    .append("\r\nConnection: close\r\n");
            headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
            if (body != null) {
                head.append("Content-Length: ").append(body.length).append("\r\n");
            }
            head.append("\r\n");
            OutputStream out = s.getOutputStream();
            out.write(head.toString().getBytes(StandardCharsets.UTF_8));
            if (body != null) {
                out.write(body);
            }
            out.flush();
            return RawHttp.read(new BufferedInputStream(s.getInputStream()));
        }
    }

    static String text(RawHttp.Response r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }
}
