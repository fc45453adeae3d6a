package dev.atrium.containers.podman.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/**
 * A container service's health check: {@code GET path} over HTTP/1.0 answered with any status below 500 (a 404 is a
 * server that runs). A plain socket, a second at most per step: no client with threads of its own to stop.
 */
final class HealthProbe {

    private HealthProbe() {}

    static boolean answers(URI endpoint, String path) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(endpoint.getHost(), endpoint.getPort()), 1000);
            s.setSoTimeout(1000);
            OutputStream out = s.getOutputStream();
            out.write(("GET " + path + " HTTP/1.0\r\nHost: " + endpoint.getHost()
                            + "\r\nUser-Agent: atrium-health\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            byte[] head = s.getInputStream().readNBytes(12); // "HTTP/1.1 200"
            String status = new String(head, StandardCharsets.ISO_8859_1);
            return status.startsWith("HTTP/") && status.length() == 12 && status.charAt(9) < '5';
        } catch (IOException e) {
            return false;
        }
    }
}
