package dev.atrium.kernel.internal.edge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.RelayRouter;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The relay on a real Jetty listener on loopback, in front of upstreams that are real sockets speaking HTTP/1.1 as a
 * test scripts them: what the client sees when an upstream cannot be reached, closes a kept connection, cuts an answer,
 * frames one by its close, or reads a large body slowly; and that a request no router takes, or one that comes while the
 * server stops, is Jetty's.
 */
class RelayConnectionTest {

    /** An upstream: each accepted connection is handed to the script, on a thread of its own. */
    interface Script {
        void serve(Socket socket, int index) throws Exception;
    }

    private Server server;
    private ServerSocket upstream;
    private volatile Script script;
    private final List<Integer> answered = new CopyOnWriteArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private volatile InetSocketAddress target;
    private volatile long minBodyBytesPerSecond = 1024;
    private volatile long bodyRateGraceMillis = 10_000;
    private ServerConnector connector;
    private int port;

    @BeforeEach
    void start() throws Exception {
        upstream = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        target = new InetSocketAddress("127.0.0.1", upstream.getLocalPort());
        Thread acceptor = new Thread(() -> {
            int index = 0;
            while (!upstream.isClosed()) {
                try {
                    Socket s = upstream.accept();
                    int i = index++;
                    Thread t = new Thread(() -> {
                        try (s) {
                            script.serve(s, i);
                        } catch (Exception ignored) {
                            // the script's connection ends
                        }
                    });
                    t.setDaemon(true);
                    t.start();
                } catch (IOException closed) {
                    return;
                }
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();

        server = new Server();
        RelayRoutes routes = new RelayRoutes();
        routes.addRouter((host, method, path) ->
                host.equals("up.test") ? new RelayRouter.Relay(target, "", Set.of(), answered::add) : null);
        Relay.Flights flights = new Relay.Flights() {
            @Override
            public ServerStop.Flight enter(BooleanSupplier stream) {
                if (stopping.get()) {
                    return null;
                }
                inFlight.incrementAndGet();
                return new ServerStop.Flight(stream);
            }

            @Override
            public void exit(ServerStop.Flight flight) {
                inFlight.decrementAndGet();
            }
        };
        HttpConnectionFactory http = new HttpConnectionFactory();
        ClientConnector upstreams = new ClientConnector();
        upstreams.setSelectors(1);
        connector = new ServerConnector(
                server,
                new Relay(routes, flights, http, upstreams, () -> minBodyBytesPerSecond, () -> bodyRateGraceMillis),
                http);
        connector.addBean(upstreams, true);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                byte[] body = ("jetty " + request.getHttpURI().getPath()).getBytes(StandardCharsets.UTF_8);
                response.setStatus(200);
                response.getHeaders().put("Content-Length", body.length);
                response.write(true, ByteBuffer.wrap(body), callback);
                return true;
            }
        });
        server.start();
        port = connector.getLocalPort();
    }

    @AfterEach
    void stop() throws Exception {
        server.stop();
        upstream.close();
    }

    /** A client connection, kept alive across requests. */
    private final class Client implements AutoCloseable {
        final Socket socket = new Socket();
        final OutputStream out;
        final InputStream in;

        Client() throws IOException {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(10_000);
            out = socket.getOutputStream();
            in = new BufferedInputStream(socket.getInputStream());
        }

        void send(String head) throws IOException {
            out.write(head.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
        }

        Answer get(String host, String path) throws IOException {
            send("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
            return read(in);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    record Answer(int status, Map<String, String> headers, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** An answer by its length, its chunks or the connection's end. */
    static Answer read(InputStream in) throws IOException {
        int status = Integer.parseInt(line(in).split(" ")[1]);
        Map<String, String> headers = new HashMap<>();
        for (String h; !(h = line(in)).isEmpty(); ) {
            int colon = h.indexOf(':');
            headers.put(
                    h.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                    h.substring(colon + 1).trim());
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            for (int n; (n = Integer.parseInt(line(in).trim(), 16)) > 0; ) {
                body.write(in.readNBytes(n));
                line(in);
            }
            line(in);
        } else if (headers.containsKey("content-length")) {
            body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
        } else {
            body.write(in.readAllBytes());
        }
        return new Answer(status, headers, body.toByteArray());
    }

    static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int c; (c = in.read()) != '\n'; ) {
            if (c < 0) {
                throw new java.io.EOFException("the connection ended");
            }
            if (c != '\r') {
                b.write(c);
            }
        }
        return b.toString(StandardCharsets.ISO_8859_1);
    }

    /** Reads one request head (and a Content-Length body) from the relay; null at the connection's end. */
    static String readRequest(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        long length = 0;
        for (String l; ; ) {
            try {
                l = line(in);
            } catch (java.io.EOFException end) {
                return null;
            }
            if (l.isEmpty()) {
                break;
            }
            head.append(l).append('\n');
            if (l.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                length = Long.parseLong(l.substring(15).trim());
            }
        }
        in.skipNBytes(length);
        return head.toString();
    }

    static void answer(OutputStream out, String body, String extraHeaders) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + b.length + "\r\n" + extraHeaders + "\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.write(b);
        out.flush();
    }

    /** The router hears of an answer once its last bytes are written, which may be just after the client read them. */
    private void awaitAnswered(List<Integer> statuses) throws InterruptedException {
        for (int i = 0; i < 200 && answered.size() < statuses.size(); i++) {
            Thread.sleep(10);
        }
        assertEquals(statuses, answered);
    }

    private void awaitNoneInFlight() throws InterruptedException {
        for (int i = 0; i < 200 && inFlight.get() != 0; i++) {
            Thread.sleep(10);
        }
        assertEquals(0, inFlight.get(), "every relayed request left the stop's count");
    }

    @Test
    void anUpstreamThatCannotBeReachedIs502WithTheSpecBodyAndTheConnectionStays() throws Exception {
        ServerSocket gone = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
        target = new InetSocketAddress("127.0.0.1", gone.getLocalPort());
        gone.close();
        try (Client c = new Client()) {
            Answer a = c.get("up.test", "/x");
            assertEquals(502, a.status());
            assertEquals("application/json", a.headers().get("content-type"));
            assertTrue(a.text().contains("\"code\":\"BAD_GATEWAY\""), a.text());
            assertEquals("jetty /next", c.get("other.test", "/next").text(), "the same connection, now Jetty's");
        }
        awaitAnswered(List.of(0));
        awaitNoneInFlight();
    }

    @Test
    void aKeptUpstreamConnectionThatClosesInsteadOfAnsweringIsTriedAgainOnce() throws Exception {
        script = (s, index) -> {
            InputStream in = new BufferedInputStream(s.getInputStream());
            if (index == 0) {
                readRequest(in);
                answer(s.getOutputStream(), "first", "");
                readRequest(in); // the second request: closed without an answer, as a server timing out an idle one
                return;
            }
            for (String r; (r = readRequest(in)) != null; ) {
                answer(s.getOutputStream(), "again " + r.lines().findFirst().orElse(""), "");
            }
        };
        try (Client c = new Client()) {
            assertEquals("first", c.get("up.test", "/1").text());
            assertEquals("again GET /2 HTTP/1.1", c.get("up.test", "/2").text());
        }
        awaitAnswered(List.of(200, 200));
        awaitNoneInFlight();
    }

    @Test
    void anAnswerCutOffMidBodyEndsTheClientsConnection() throws Exception {
        script = (s, index) -> {
            readRequest(new BufferedInputStream(s.getInputStream()));
            s.getOutputStream()
                    .write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten.."
                            .getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
        };
        try (Client c = new Client()) {
            c.send("GET / HTTP/1.1\r\nHost: up.test\r\n\r\n");
            byte[] all = c.in.readAllBytes(); // ends: the relay closes the client's connection
            String text = new String(all, StandardCharsets.ISO_8859_1);
            assertTrue(text.endsWith("only ten.."), text);
        }
        awaitNoneInFlight();
    }

    @Test
    void anAnswerFramedByItsCloseEndsTheClientConnectionWhileAnUpstreamCloseAloneDoesNot() throws Exception {
        script = (s, index) -> {
            InputStream in = new BufferedInputStream(s.getInputStream());
            String r = readRequest(in);
            if (r.startsWith("GET /unframed")) {
                s.getOutputStream().write("HTTP/1.1 200 OK\r\n\r\nto the end".getBytes(StandardCharsets.ISO_8859_1));
            } else {
                answer(s.getOutputStream(), "closing", "Connection: close\r\n");
            }
        };
        try (Client c = new Client()) {
            Answer closing = c.get("up.test", "/closing");
            assertEquals("closing", closing.text());
            // the upstream closes its connection: the client's stays, the next request gets a new upstream one
            Answer again = c.get("up.test", "/closing");
            assertEquals("closing", again.text());
            Answer unframed = c.get("up.test", "/unframed");
            assertEquals("to the end", unframed.text(), "read to the connection's end");
        }
        awaitAnswered(List.of(200, 200, 200));
        awaitNoneInFlight();
    }

    @Test
    void anHttp10AnswerWithBareLfLinesReachesTheClientAsHttp11() throws Exception {
        script = (s, index) -> {
            readRequest(new BufferedInputStream(s.getInputStream()));
            s.getOutputStream()
                    .write("HTTP/1.0 200 OK\r\nContent-Type: text/plain\n\nfrom a CGI script\n"
                            .getBytes(StandardCharsets.ISO_8859_1));
        };
        try (Client c = new Client()) {
            c.send("GET /cgi-bin/x HTTP/1.1\r\nHost: up.test\r\n\r\n");
            String all = new String(c.in.readAllBytes(), StandardCharsets.ISO_8859_1);
            assertEquals("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfrom a CGI script\n", all);
        }
        awaitAnswered(List.of(200));
        awaitNoneInFlight();
    }

    @Test
    void aLargeBodyPassesBothWaysAtTheUpstreamsPace() throws Exception {
        byte[] sent = new byte[6 << 20];
        new Random(7).nextBytes(sent);
        script = (s, index) -> {
            InputStream in = new BufferedInputStream(s.getInputStream());
            StringBuilder head = new StringBuilder();
            for (String l; !(l = line(in)).isEmpty(); ) {
                head.append(l).append('\n');
            }
            assertTrue(head.toString().contains("Transfer-Encoding: chunked"), head.toString());
            // the chunked body as it came, read slowly, then echoed back with a length
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buffer = new byte[64 << 10];
            for (int n; (n = Integer.parseInt(line(in).trim(), 16)) > 0; ) {
                got.write(in.readNBytes(n));
                line(in);
                Thread.sleep(1);
            }
            line(in);
            byte[] body = got.toByteArray();
            s.getOutputStream()
                    .write(("HTTP/1.1 200 OK\r\nContent-Length: " + body.length + "\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
            for (int off = 0; off < body.length; off += buffer.length) {
                s.getOutputStream().write(body, off, Math.min(buffer.length, body.length - off));
            }
            s.getOutputStream().flush();
        };
        try (Client c = new Client()) {
            c.send("POST /echo HTTP/1.1\r\nHost: up.test\r\nTransfer-Encoding: chunked\r\n\r\n");
            Thread writer = new Thread(() -> {
                try {
                    for (int off = 0; off < sent.length; off += 100_000) {
                        int n = Math.min(100_000, sent.length - off);
                        c.out.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
                        c.out.write(sent, off, n);
                        c.out.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
                    }
                    c.out.write("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                    c.out.flush();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            writer.start();
            Answer a = read(c.in);
            writer.join();
            assertEquals(200, a.status());
            assertArrayEquals(sent, a.body());
            assertEquals("jetty /after", c.get("elsewhere.test", "/after").text());
        }
        awaitNoneInFlight();
    }

    /** An upstream that reads a request head, then whatever comes until the relay closes the connection. */
    private ReadsUntilClosed readsUntilClosed() {
        ReadsUntilClosed s = new ReadsUntilClosed();
        script = s;
        return s;
    }

    private static final class ReadsUntilClosed implements Script {
        final java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);

        @Override
        public void serve(Socket socket, int index) throws Exception {
            InputStream in = socket.getInputStream();
            while (in.read() >= 0) {
                // the body's bytes, as the relay passes them
            }
            closed.countDown();
        }
    }

    private static void assertTooSlow(Answer a, long startedNanos) {
        assertEquals(408, a.status(), a.text());
        assertTrue(a.text().contains("\"code\":\"REQUEST_TIMEOUT\""), a.text());
        assertTrue(a.text().contains("slower than 1024 bytes per second"), a.text());
        assertEquals("close", a.headers().get("connection"));
        long took = (System.nanoTime() - startedNanos) / 1_000_000;
        assertTrue(took < 8_000, "answered after " + took + " ms");
    }

    @Test
    void aRelayedBodyThatTricklesIsAnswered408AndItsConnectionsClosed() throws Exception {
        bodyRateGraceMillis = 500;
        ReadsUntilClosed upstreamSide = readsUntilClosed();
        try (Client c = new Client()) {
            long started = System.nanoTime();
            c.send("POST /upload HTTP/1.1\r\nHost: up.test\r\nContent-Length: 100000\r\n\r\n");
            Thread trickle = new Thread(() -> {
                try {
                    for (int i = 0; i < 100; i++) {
                        c.out.write("0123456789".getBytes(StandardCharsets.ISO_8859_1));
                        c.out.flush();
                        Thread.sleep(100);
                    }
                } catch (IOException | InterruptedException cut) {
                    // the relay closed the connection
                }
            });
            trickle.setDaemon(true);
            trickle.start();
            assertTooSlow(read(c.in), started);
            assertEquals(-1, c.in.read(), "the client's connection is closed");
            assertTrue(
                    upstreamSide.closed.await(5, java.util.concurrent.TimeUnit.SECONDS),
                    "the upstream's connection is closed");
        }
        awaitAnswered(List.of(0));
        awaitNoneInFlight();
    }

    @Test
    void aRelayedBodyThatStopsArrivingIsAnswered408AtTheClientsIdleTimeout() throws Exception {
        bodyRateGraceMillis = 500;
        connector.setIdleTimeout(1_000);
        ReadsUntilClosed upstreamSide = readsUntilClosed();
        try (Client c = new Client()) {
            long started = System.nanoTime();
            c.send("POST /upload HTTP/1.1\r\nHost: up.test\r\nContent-Length: 100000\r\n\r\n0123456789");
            assertTooSlow(read(c.in), started);
            assertEquals(-1, c.in.read(), "the client's connection is closed");
            assertTrue(
                    upstreamSide.closed.await(5, java.util.concurrent.TimeUnit.SECONDS),
                    "the upstream's connection is closed");
        }
        awaitNoneInFlight();
    }

    @Test
    void aRelayedBodyIsNotMeteredWhenTheRateCheckIsOff() throws Exception {
        minBodyBytesPerSecond = 0;
        bodyRateGraceMillis = 0;
        script = (s, index) -> {
            InputStream in = new BufferedInputStream(s.getInputStream());
            String head = readRequest(in);
            answer(s.getOutputStream(), "got " + head.lines().findFirst().orElse(""), "");
        };
        try (Client c = new Client()) {
            c.send("POST /slow HTTP/1.1\r\nHost: up.test\r\nContent-Length: 4\r\n\r\n");
            for (char ch : "abcd".toCharArray()) {
                Thread.sleep(300);
                c.out.write(ch);
                c.out.flush();
            }
            Answer a = read(c.in);
            assertEquals(200, a.status(), a.text());
            assertEquals("got POST /slow HTTP/1.1", a.text());
        }
    }

    @Test
    void requestsNoRouterTakesOrThatComeWhileTheServerStopsAreJettys() throws Exception {
        script = (s, index) -> {
            InputStream in = new BufferedInputStream(s.getInputStream());
            for (String r; (r = readRequest(in)) != null; ) {
                answer(s.getOutputStream(), "relayed", "");
            }
        };
        try (Client c = new Client()) {
            assertEquals("relayed", c.get("up.test", "/a").text());
            stopping.set(true);
            assertEquals("jetty /b", c.get("up.test", "/b").text(), "the server's edge answers it (503 there)");
        }
        stopping.set(false);
        try (Client c = new Client()) {
            c.send("GET /c HTTP/1.0\r\nHost: up.test\r\n\r\n");
            assertEquals(
                    "jetty /c",
                    new String(c.in.readAllBytes(), StandardCharsets.ISO_8859_1).replaceAll("(?s).*\r\n\r\n", ""),
                    "HTTP/1.0 is Jetty's");
        }
        awaitAnswered(List.of(200));
        awaitNoneInFlight();
    }
}
