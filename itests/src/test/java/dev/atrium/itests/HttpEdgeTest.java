package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The server's edge (issue 34): what Jetty answers itself, before any filter, is the spec's error body; a client that
 * sends its headers or its body too slowly is cut without costing anybody else an answer.
 */
@SharedServer
class HttpEdgeTest {

    private final AtriumServer server;

    HttpEdgeTest(AtriumServer server) {
        this.server = server;
    }

    static Stream<Arguments> whatJettyRefuses() {
        String longTarget = "/api/" + "a".repeat(20_000);
        String bigHeader = "X-Big: " + "b".repeat(20_000);
        return Stream.of(
                Arguments.of(
                        "a target over the limit",
                        "GET " + longTarget + " HTTP/1.1\r\nHost: x\r\n\r\n",
                        414,
                        "URI_TOO_LONG"),
                Arguments.of(
                        "headers over the limit",
                        "GET /api/me HTTP/1.1\r\nHost: x\r\n" + bigHeader + "\r\n\r\n",
                        431,
                        "REQUEST_HEADER_FIELDS_TOO_LARGE"),
                Arguments.of(
                        "a negative Content-Length",
                        "POST /api/spaces HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                        400,
                        "BAD_REQUEST"),
                Arguments.of(
                        "a Content-Length that is no number",
                        "POST /api/spaces HTTP/1.1\r\nHost: x\r\nContent-Length: 12a\r\n\r\n",
                        400,
                        "BAD_REQUEST"),
                Arguments.of(
                        "two Content-Lengths",
                        "POST /api/spaces HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
                        400,
                        "BAD_REQUEST"),
                Arguments.of(
                        "a chunk size that is no number",
                        "POST /api/spaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                + "Transfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n",
                        400,
                        "BAD_REQUEST"),
                Arguments.of(
                        "an unknown HTTP version",
                        "GET /api/me HTTP/9.1\r\nHost: x\r\n\r\n",
                        505,
                        "HTTP_VERSION_NOT_SUPPORTED"),
                Arguments.of(
                        "a NUL in the path", "GET /api/spaces/%00 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "BAD_REQUEST"),
                Arguments.of(
                        "a header line without a colon",
                        "GET /api/me HTTP/1.1\r\nHost: x\r\nnocolon\r\n\r\n",
                        400,
                        "BAD_REQUEST"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("whatJettyRefuses")
    void whatJettyRefusesItselfIsTheSpecsErrorBody(String what, String request, int status, String code)
            throws IOException {
        RawHttp.Response r = UriRejectionTest.send(server, request.getBytes(StandardCharsets.ISO_8859_1));
        String body = new String(r.body(), StandardCharsets.UTF_8);
        assertEquals(status, r.status(), what + ": " + r.headers() + " " + body);
        assertTrue(String.valueOf(r.header("content-type")).startsWith("application/json"), what + ": " + r.headers());
        JsonNode error = Http.JSON.readTree(body).path("error");
        assertEquals(code, error.path("code").asText(), what + ": " + body);
        assertTrue(!error.path("message").asText().isBlank(), body);
        assertTrue(!body.contains("Exception") && !body.contains("at org."), body);
    }

    /**
     * 300 connections send one header line every 5 s (slowloris) and one sends its body at 10 bytes a second: the
     * header deadline (10 s) closes the first, the slowest body rate (1 KiB/s after 10 s) answers the second 408, and
     * meanwhile every ordinary request is answered at once.
     */
    @Test
    void slowClientsAreCutAndTheOthersAreServedMeanwhile() throws Exception {
        URI base = URI.create(server.base());
        List<Socket> loris = new ArrayList<>();
        try {
            long start = System.nanoTime();
            for (int i = 0; i < 300; i++) {
                Socket s = new Socket(base.getHost(), base.getPort());
                s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
                loris.add(s);
            }
            Socket trickle = new Socket(base.getHost(), base.getPort());
            loris.add(trickle);
            OutputStream body = trickle.getOutputStream();
            body.write(("POST /api/spaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            + "Content-Length: 1000\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            long slowest = 0;
            int round = 0;
            boolean trickleCut = false;
            while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(16)) {
                long t = System.nanoTime();
                Http.Reply ok = server.anonymous().get("/healthz");
                assertEquals(200, ok.status(), ok.body());
                slowest = Math.max(slowest, System.nanoTime() - t);
                if (!trickleCut) {
                    try {
                        body.write("          ".getBytes(StandardCharsets.US_ASCII));
                        body.flush();
                    } catch (IOException cut) {
                        trickleCut = true;
                    }
                }
                if (++round % 5 == 0) {
                    for (Socket s : loris.subList(0, 300)) {
                        try {
                            s.getOutputStream().write("X-Slow: 1\r\n".getBytes(StandardCharsets.US_ASCII));
                        } catch (IOException closed) {
                            // what the deadline is for
                        }
                    }
                }
                Thread.sleep(1_000);
            }
            int open = 0;
            for (Socket s : loris.subList(0, 300)) {
                s.setSoTimeout(2_000);
                try {
                    if (s.getInputStream().read() != -1) {
                        open++;
                    }
                } catch (SocketTimeoutException stillOpen) {
                    open++;
                } catch (IOException closed) {
                    // reset: closed
                }
            }
            assertEquals(0, open, "connections still waiting for their headers after 16 s");
            trickle.setSoTimeout(5_000);
            InputStream in = trickle.getInputStream();
            RawHttp.Response r = RawHttp.read(in);
            String text = new String(r.body(), StandardCharsets.UTF_8);
            assertEquals(408, r.status(), text);
            assertEquals(
                    "REQUEST_TIMEOUT",
                    Http.JSON.readTree(text).path("error").path("code").asText(),
                    text);
            System.out.println("slow clients: 300 slowloris connections closed, the trickled body answered 408; the "
                    + "slowest ordinary request meanwhile took " + TimeUnit.NANOSECONDS.toMillis(slowest) + " ms");
            assertTrue(slowest < TimeUnit.SECONDS.toNanos(2), "ordinary requests stayed fast: " + slowest + " ns");
        } finally {
            for (Socket s : loris) {
                s.close();
            }
        }
    }
}
