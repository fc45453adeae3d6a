package dev.atrium.browser.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class EgressProxyTest {

    /** The guard with its test switch on: loopback passes it, link-local does not. */
    private static final EgressGuard GUARD = url -> {
        try {
            InetAddress a = InetAddress.getByName(url.getHost());
            if (a.isLinkLocalAddress()) {
                throw ApiException.badRequest("link-local addresses are not allowed");
            }
            return List.of(a);
        } catch (java.net.UnknownHostException e) {
            throw ApiException.badRequest("the host does not resolve");
        }
    };

    private static String send(int port, String request) throws Exception {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(5_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void aTunnelToAnAllowedPortIsPipedAndOthersAreRefusedAndListed() throws Exception {
        try (ServerSocket upstream = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            Thread echo = new Thread(() -> {
                try (Socket c = upstream.accept()) {
                    InputStream in = c.getInputStream();
                    byte[] hello = in.readNBytes(5);
                    OutputStream out = c.getOutputStream();
                    out.write(("echo " + new String(hello, StandardCharsets.US_ASCII))
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                } catch (Exception ignored) {
                    // the test's assertions say what went wrong
                }
            });
            echo.start();
            List<String> refused = new CopyOnWriteArrayList<>();
            RequestPolicy policy = new RequestPolicy(GUARD, Set.of(upstream.getLocalPort()));
            try (EgressProxy proxy = new EgressProxy(policy, "test")) {
                proxy.onRefused((url, reason) -> refused.add(url + " " + reason));
                String tunnel = send(
                        proxy.port(),
                        "CONNECT 127.0.0.1:" + upstream.getLocalPort() + " HTTP/1.1\r\nHost: x\r\n\r\nhello");
                assertTrue(tunnel.startsWith("HTTP/1.1 200"), tunnel);
                assertTrue(tunnel.endsWith("echo hello"), tunnel);

                assertTrue(send(proxy.port(), "CONNECT 127.0.0.1:5432 HTTP/1.1\r\n\r\n")
                        .startsWith("HTTP/1.1 403"));
                assertTrue(send(proxy.port(), "GET http://169.254.169.254/x HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n")
                        .startsWith("HTTP/1.1 403"));
                assertTrue(send(proxy.port(), "CONNECT " + Chromium.SERVICES_HOST + ":443 HTTP/1.1\r\n\r\n")
                        .startsWith("HTTP/1.1 403"));
                assertEquals(2, refused.size(), refused.toString());
                assertTrue(refused.get(0).startsWith("127.0.0.1:5432 loopback addresses are not allowed"));
                assertTrue(refused.get(1).startsWith("http://169.254.169.254/x link-local"));
            }
            echo.join(5_000);
        }
    }

    @Test
    void aPlainRequestGoesOutInOriginFormWithConnectionClose() {
        String head = "GET http://example.test/a?b=1 HTTP/1.1\r\nHost: example.test\r\nProxy-Connection: keep-alive\r\n"
                + "Connection: keep-alive\r\nAccept: */*\r\n";
        String out = new String(EgressProxy.originForm(head, "GET", "/a?b=1", "HTTP/1.1"), StandardCharsets.ISO_8859_1);
        assertEquals("GET /a?b=1 HTTP/1.1\r\nHost: example.test\r\nAccept: */*\r\nConnection: close\r\n\r\n", out);
    }

    @Test
    void theHeadEndsAtTheEmptyLineAndLeavesTheBody() throws Exception {
        InputStream in = new ByteArrayInputStream(
                "POST http://x/ HTTP/1.1\r\nA: b\r\n\r\nbody".getBytes(StandardCharsets.US_ASCII));
        assertEquals("POST http://x/ HTTP/1.1\r\nA: b\r\n", EgressProxy.readHead(in));
        assertEquals("body", new String(in.readAllBytes(), StandardCharsets.US_ASCII));
        assertNull(EgressProxy.readHead(
                new ByteArrayInputStream("GET / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII))));
    }
}
