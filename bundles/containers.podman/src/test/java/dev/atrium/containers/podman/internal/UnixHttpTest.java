package dev.atrium.containers.podman.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UnixHttpTest {

    @TempDir
    Path dir;

    private ServerSocketChannel server;
    private ScheduledThreadPoolExecutor timer;
    private UnixHttp http;
    private final BlockingQueue<String> requests = new LinkedBlockingQueue<>();

    /** What the fake server answers to one connection, given the request it read. */
    interface Handler {
        void answer(OutputStream out) throws Exception;
    }

    @BeforeEach
    void listen() throws IOException {
        Path socket = dir.resolve("s.sock");
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        timer = new ScheduledThreadPoolExecutor(1);
        http = new UnixHttp(socket, timer);
    }

    @AfterEach
    void close() throws IOException {
        server.close();
        timer.shutdownNow();
    }

    /** Serves one connection on a thread: reads the request (head and Content-Length or chunked body), answers. */
    private Thread serveOnce(Handler handler) {
        Thread t = new Thread(() -> {
            try (SocketChannel c = server.accept()) {
                InputStream in = Channels.newInputStream(c);
                requests.add(readRequest(in));
                OutputStream out = Channels.newOutputStream(c);
                handler.answer(out);
                out.flush();
            } catch (Exception e) {
                requests.add("server failed: " + e);
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static String readRequest(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                break;
            }
            head.write(c);
        }
        String h = head.toString(StandardCharsets.ISO_8859_1);
        String body = "";
        java.util.regex.Matcher length =
                java.util.regex.Pattern.compile("(?i)Content-Length: (\\d+)").matcher(h);
        if (length.find()) {
            body = new String(in.readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.UTF_8);
        } else if (h.toLowerCase().contains("transfer-encoding: chunked")) {
            body = new String(new ChunkedStreams.In(in).readAllBytes(), StandardCharsets.UTF_8);
        }
        return h + body;
    }

    private static void write(OutputStream out, String s) throws IOException {
        out.write(s.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    @Test
    void aBodyOfKnownLengthIsSentAndTheAnswerReadByContentLength() throws Exception {
        serveOnce(out -> write(out, "HTTP/1.1 201 Created\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello"));
        UnixHttp.Response r = http.request(
                "POST",
                "/v1.41/x?y=1",
                "application/json",
                UnixHttp.Body.of("{\"a\":1}".getBytes(StandardCharsets.UTF_8)),
                Duration.ofSeconds(5));
        assertEquals(201, r.status());
        assertEquals("hello", r.text());
        assertEquals("b", r.headers().get("x-a"));
        String request = requests.poll(5, TimeUnit.SECONDS);
        assertTrue(request.startsWith("POST /v1.41/x?y=1 HTTP/1.1\r\n"), request);
        assertTrue(request.contains("Content-Type: application/json\r\n"), request);
        assertTrue(request.endsWith("\r\n\r\n{\"a\":1}"), request);
    }

    @Test
    void aChunkedAnswerIsDecoded() throws Exception {
        serveOnce(out -> write(
                out,
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\na;x=y\r\n0123456789\r\n0\r\n\r\n"));
        assertEquals(
                "abc0123456789",
                http.request("GET", "/", null, null, Duration.ofSeconds(5)).text());
    }

    @Test
    void anAnswerWithoutLengthIsReadUntilTheServerCloses() throws Exception {
        serveOnce(out -> write(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close"));
        assertEquals(
                "until close",
                http.request("GET", "/", null, null, Duration.ofSeconds(5)).text());
    }

    @Test
    void interimAnswersAreSkipped() throws Exception {
        serveOnce(out -> write(out, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"));
        UnixHttp.Response r = http.request("DELETE", "/c", null, null, Duration.ofSeconds(5));
        assertEquals(204, r.status());
        assertEquals(0, r.body().length);
    }

    @Test
    void aBodyOfUnknownLengthIsSentChunked() throws Exception {
        serveOnce(out -> write(out, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
        UnixHttp.Body body = new UnixHttp.Body() {
            @Override
            public long length() {
                return -1;
            }

            @Override
            public void writeTo(OutputStream out) throws IOException {
                out.write("part one, ".getBytes(StandardCharsets.UTF_8));
                out.write("part two".getBytes(StandardCharsets.UTF_8));
            }
        };
        http.request("POST", "/import", "application/x-tar", body, Duration.ofSeconds(5));
        String request = requests.poll(5, TimeUnit.SECONDS);
        assertTrue(request.contains("Transfer-Encoding: chunked\r\n"), request);
        assertTrue(request.endsWith("part one, part two"), request);
    }

    @Test
    void aStreamedAnswerArrivesAsItIsWrittenNotWhenItEnds() throws Exception {
        CountDownLatch firstRead = new CountDownLatch(1);
        serveOnce(out -> {
            write(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n");
            // the rest only once the client saw the first part
            assertTrue(firstRead.await(5, TimeUnit.SECONDS));
            write(out, "6\r\nsecond\r\n0\r\n\r\n");
        });
        try (UnixHttp.Exchange exchange = http.open("POST", "/exec/x/start", null, null)) {
            exchange.readHead();
            InputStream body = exchange.body();
            byte[] buffer = new byte[100];
            int n = body.read(buffer);
            assertEquals("first", new String(buffer, 0, n, StandardCharsets.UTF_8));
            firstRead.countDown();
            assertArrayEquals("second".getBytes(StandardCharsets.UTF_8), body.readAllBytes());
        }
    }

    @Test
    void anAnswerThatDoesNotComeInTimeFailsTheCall() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        serveOnce(out -> never.await(10, TimeUnit.SECONDS));
        long t0 = System.nanoTime();
        assertThrows(InterruptedIOException.class, () -> http.request("GET", "/", null, null, Duration.ofMillis(200)));
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(3));
        never.countDown();
    }
}
