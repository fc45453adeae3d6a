package dev.atrium.services.routing.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import javax.servlet.ReadListener;
import javax.servlet.ServletInputStream;
import javax.servlet.ServletOutputStream;
import javax.servlet.WriteListener;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The proxy's client against a real HTTP/1.1 peer on loopback (each answer scripted from the request it read). */
class UpstreamTest {

    private final List<String> requests = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private ServerSocket server;
    private final Upstream upstream = new Upstream();

    @AfterEach
    void close() throws IOException {
        upstream.close();
        if (server != null) {
            server.close();
        }
    }

    /** A peer that reads a request (head and body, by length or chunked, kept whole in {@link #requests}) and writes answer(request). */
    private InetSocketAddress peer(Function<String, String> answer) throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    accepted.add(s);
                    connections.incrementAndGet();
                    new Thread(() -> serve(s, answer)).start();
                } catch (IOException e) {
                    return;
                }
            }
        });
        t.setDaemon(true);
        t.start();
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort());
    }

    private void serve(Socket s, Function<String, String> answer) {
        try (s) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            for (; ; ) {
                StringBuilder head = new StringBuilder();
                int ch;
                while (!head.toString().endsWith("\r\n\r\n")) {
                    if ((ch = in.read()) < 0) {
                        return;
                    }
                    head.append((char) ch);
                }
                String h = head.toString().toLowerCase();
                StringBuilder body = new StringBuilder();
                int cl = h.indexOf("content-length: ");
                if (cl >= 0) {
                    int n = Integer.parseInt(h.substring(cl + 16, h.indexOf('\r', cl)));
                    for (int i = 0; i < n; i++) {
                        body.append((char) in.read());
                    }
                } else if (h.contains("transfer-encoding: chunked")) {
                    body.append(new String(in.readNBytes(0), StandardCharsets.ISO_8859_1));
                    StringBuilder raw = new StringBuilder();
                    while (!raw.toString().endsWith("0\r\n\r\n")) {
                        raw.append((char) in.read());
                    }
                    body.append(raw);
                }
                String request = head + body.toString();
                requests.add(request);
                String a = answer.apply(request);
                if (a == null) {
                    return; // the peer closes without answering
                }
                // "|PAUSE|" marks where the peer stops writing for a while, as a runtime that streams does
                for (String part : a.split("\\|PAUSE\\|")) {
                    out.write(part.getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                    if (!part.equals(a)) {
                        sleep(50);
                    }
                }
                if (a.toLowerCase().contains("connection: close")) {
                    return;
                }
            }
        } catch (IOException e) {
            // the test ended
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class Answer {
        int status;
        final Map<String, List<String>> headers = new LinkedHashMap<>();
        long length = -1;
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        int flushes;

        String text() {
            return body.toString(StandardCharsets.UTF_8);
        }
    }

    private static HttpServletRequest request(String method, String uri, Map<String, String> headers, byte[] body) {
        ByteArrayInputStream in = new ByteArrayInputStream(body);
        ServletInputStream sin = new ServletInputStream() {
            @Override
            public int read() {
                return in.read();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                // two bytes at a time, so a chunked body arrives in several reads
                int n = in.read(b, off, Math.min(len, 2));
                return n;
            }

            @Override
            public int available() {
                return 0;
            }

            @Override
            public boolean isFinished() {
                return in.available() == 0;
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setReadListener(ReadListener l) {
                throw new UnsupportedOperationException();
            }
        };
        return (HttpServletRequest) Proxy.newProxyInstance(
                UpstreamTest.class.getClassLoader(),
                new Class<?>[] {HttpServletRequest.class},
                (p, m, args) -> switch (m.getName()) {
                    case "getMethod" -> method;
                    case "getRequestURI" -> uri;
                    case "getContentLengthLong" ->
                        headers.containsKey("Content-Length") ? Long.parseLong(headers.get("Content-Length")) : -1L;
                    case "getHeader" -> headers.get((String) args[0]);
                    case "getHeaderNames" -> Collections.enumeration(headers.keySet());
                    case "getHeaders" ->
                        Collections.enumeration(
                                headers.containsKey((String) args[0])
                                        ? List.of(headers.get((String) args[0]))
                                        : List.of());
                    case "getInputStream" -> sin;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    private static HttpServletResponse response(Answer a) {
        ServletOutputStream sout = new ServletOutputStream() {
            @Override
            public void write(int b) {
                a.body.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                a.body.write(b, off, len);
            }

            @Override
            public void flush() {
                a.flushes++;
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(WriteListener l) {
                throw new UnsupportedOperationException();
            }
        };
        return (HttpServletResponse) Proxy.newProxyInstance(
                UpstreamTest.class.getClassLoader(),
                new Class<?>[] {HttpServletResponse.class},
                (p, m, args) -> switch (m.getName()) {
                    case "setStatus" -> {
                        a.status = (Integer) args[0];
                        yield null;
                    }
                    case "addHeader" -> {
                        a.headers
                                .computeIfAbsent((String) args[0], k -> new ArrayList<>())
                                .add((String) args[1]);
                        yield null;
                    }
                    case "setContentLengthLong" -> {
                        a.length = (Long) args[0];
                        yield null;
                    }
                    case "getOutputStream" -> sout;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    private static Upstream.Forwarded fwd() {
        return new Upstream.Forwarded("10.0.0.1, 127.0.0.1", "http", "hello.apps.localhost", "X-Atrium-Binding-Secret");
    }

    @Test
    void aGetIsPassedWithItsHeadersAndTheForwardedOnesAndTheConnectionIsUsedAgain() throws Exception {
        InetSocketAddress target = peer(r ->
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-One: a\r\nX-One: b\r\nConnection: keep-alive\r\n\r\nhello");
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Host", "hello.apps.localhost");
        headers.put("Accept", "text/plain");
        headers.put("X-Forwarded-For", "1.2.3.4");
        headers.put("X-Atrium-Binding-Secret", "nope");
        headers.put("Connection", "keep-alive");
        headers.put("X-Wide", "a\u010Ainjected: yes");
        for (int i = 0; i < 3; i++) {
            Answer a = new Answer();
            upstream.exchange(target, "/p?q=1", request("GET", "/p", headers, new byte[0]), response(a), fwd());
            assertEquals(200, a.status);
            assertEquals(5, a.length);
            assertEquals("hello", a.text());
            assertEquals(List.of("a", "b"), a.headers.get("X-One"));
            assertFalse(a.headers.containsKey("Connection"));
        }
        assertEquals(1, connections.get());
        String sent = requests.get(0);
        assertTrue(sent.startsWith("GET /p?q=1 HTTP/1.1\r\n"), sent);
        assertTrue(sent.contains("Accept: text/plain\r\n"), sent);
        assertTrue(sent.contains("x-forwarded-for: 10.0.0.1, 127.0.0.1\r\n"), sent);
        assertTrue(sent.contains("x-forwarded-host: hello.apps.localhost\r\n"), sent);
        assertFalse(sent.contains("1.2.3.4"), sent);
        assertFalse(sent.toLowerCase().contains("binding-secret"), sent);
        assertFalse(sent.toLowerCase().contains("connection:"), sent);
        assertTrue(
                sent.contains("X-Wide: a?injected: yes\r\n"),
                sent); // a character beyond Latin-1 never becomes a line break
    }

    @Test
    void aChunkedBodyIsReChunkedAndAChunkedAnswerStreamsBackFlushedPerChunk() throws Exception {
        InetSocketAddress target =
                peer(r -> "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "3;ext=1\r\none\r\n|PAUSE|3\r\ntwo\r\n0\r\nX-Trailer: t\r\n\r\n");
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Transfer-Encoding", "chunked");
        Answer a = new Answer();
        upstream.exchange(
                target,
                "/up",
                request("POST", "/up", headers, "abcde".getBytes(StandardCharsets.UTF_8)),
                response(a),
                fwd());
        assertEquals(201, a.status);
        assertEquals("onetwo", a.text());
        assertEquals(-1, a.length);
        assertTrue(a.flushes >= 1);
        String sent = requests.get(0);
        assertTrue(sent.contains("transfer-encoding: chunked\r\n\r\n2\r\nab\r\n2\r\ncd\r\n1\r\ne\r\n0\r\n\r\n"), sent);
        // the connection still serves the next exchange
        Answer b = new Answer();
        upstream.exchange(
                target,
                "/up",
                request("POST", "/up", headers, "x".getBytes(StandardCharsets.UTF_8)),
                response(b),
                fwd());
        assertEquals("onetwo", b.text());
        assertEquals(1, connections.get());
    }

    @Test
    void anAnswerWithoutLengthRunsToTheConnectionsEndAndALongHeaderLineIsRead() throws Exception {
        String longValue = "v".repeat(40_000);
        InetSocketAddress target = peer(
                r -> "HTTP/1.1 200 OK\r\nX-Long: " + longValue + "\r\nConnection: close\r\n\r\n" + "x".repeat(50_000));
        Answer a = new Answer();
        upstream.exchange(target, "/", request("GET", "/", Map.of(), new byte[0]), response(a), fwd());
        assertEquals(200, a.status);
        assertEquals(longValue, a.headers.get("X-Long").get(0));
        assertEquals(50_000, a.body.size());
    }

    @Test
    void aLengthBodyGoesAsSentAndAPooledConnectionTheRuntimeClosedIsRetriedForAGet() throws Exception {
        InetSocketAddress target = peer(r -> "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Length", "4");
        Answer a = new Answer();
        upstream.exchange(
                target, "/", request("PUT", "/", headers, "data".getBytes(StandardCharsets.UTF_8)), response(a), fwd());
        assertEquals("ok", a.text());
        assertTrue(requests.get(0).endsWith("content-length: 4\r\n\r\ndata"), requests.get(0));
        // the peer closes the pooled connection while it idles, and answers on a new one
        int port = server.getLocalPort();
        server.close();
        Thread.sleep(100);
        for (Socket s : accepted) {
            s.close();
        }
        server = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
        ServerSocket s2 = server;
        Thread t = new Thread(() -> {
            try {
                Socket s = s2.accept();
                connections.incrementAndGet();
                serve(s, r -> "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nagain");
            } catch (IOException e) {
                // closed
            }
        });
        t.setDaemon(true);
        t.start();
        Answer b = new Answer();
        upstream.exchange(target, "/", request("GET", "/", Map.of(), new byte[0]), response(b), fwd());
        assertEquals("again", b.text());
        assertEquals(2, connections.get());
    }
}
