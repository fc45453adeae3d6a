package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The kernel's relay (issue 34): requests for a deployed service's host are passed to workerd on the listener's
 * selector threads, below the servlet stack, request by request on a kept connection: each gets its own forwarded
 * headers, its own route (another host, a canary share), its body passed as sent and its answer as workerd framed it.
 * A request the relay does not take (an unknown host, a head in pieces) hands the connection to the servlet stack,
 * which answers it and every later one as before. {@code atrium_relay_requests_total} and {@code
 * atrium_relay_handovers_total} show which path a request took.
 */
@SharedServer
class WorkerRelayTest {

    private static final String ECHO = """
            export default {
              async fetch(request) {
                const url = new URL(request.url);
                if (url.pathname === "/stream") {
                  const enc = new TextEncoder();
                  const body = new ReadableStream({ async start(c) {
                    for (let i = 0; i < 5; i++) { c.enqueue(enc.encode("part " + i + ";")); await new Promise(r => setTimeout(r, 5)); }
                    c.close();
                  } });
                  return new Response(body);
                }
                const headers = {};
                for (const [k, v] of request.headers) headers[k] = v;
                const body = await request.text();
                return Response.json({ who: "WHO", method: request.method, path: url.pathname + url.search, headers, body });
              }
            };
            """;

    private AtriumServer server;

    @BeforeEach
    void needsWorkerd(AtriumServer server) throws Exception {
        this.server = server;
        Assumptions.assumeTrue(
                ServicesWorkerdTest.workerdPresent(server), "the workerd deployment provider is not in the runtime");
    }

    private String deployedHost(User u, String name, String who) {
        String id = ServicesTest.createService(u, ServicesTest.unique(name));
        String slug =
                u.http().get("/api/services/" + id).get("service").get("slug").asText();
        deploy(u, id, who, Map.of());
        return slug + ".apps.localhost";
    }

    private static String deploy(User u, String serviceId, String who, Map<String, Object> extra) {
        Map<String, Object> body = new java.util.HashMap<>(extra);
        body.put(
                "bundle",
                Base64.getEncoder().encodeToString(ECHO.replace("WHO", who).getBytes(StandardCharsets.UTF_8)));
        Http.Reply r = u.http().post("/api/services/" + serviceId + "/deployments", body);
        assertEquals(201, r.status(), r.body());
        return r.get("deployment").get("id").asText();
    }

    private double metric(String series) {
        return MetricsTest.value(server.operator().get("/metrics").body(), series);
    }

    /** One kept-alive client connection, written and read by hand. */
    private final class Kept implements AutoCloseable {
        final Socket socket = new Socket();
        final OutputStream out;
        final InputStream in;

        Kept() throws IOException {
            socket.connect(new InetSocketAddress("127.0.0.1", server.port), 5_000);
            socket.setSoTimeout(30_000);
            out = socket.getOutputStream();
            in = new BufferedInputStream(socket.getInputStream());
        }

        void write(String head, byte[] body) throws IOException {
            out.write(head.getBytes(StandardCharsets.ISO_8859_1));
            if (body != null) {
                out.write(body);
            }
            out.flush();
        }

        RawHttp.Response get(String host, String path, String extraHeaders) throws IOException {
            write("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + extraHeaders + "\r\n", null);
            return RawHttp.read(in);
        }

        JsonNode json(RawHttp.Response r) throws IOException {
            assertEquals(200, r.status(), HostHttp.text(r));
            return Http.JSON.readTree(r.body());
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    @Test
    void eachRequestOnAKeptConnectionIsRelayedWithItsOwnForwardedHeadersAndBody() throws Exception {
        User u = server.newUser();
        String host = deployedHost(u, "relay-echo", "one");
        double relayedBefore = metric("atrium_relay_requests_total");
        try (Kept c = new Kept()) {
            JsonNode first = c.json(
                    c.get(
                            host,
                            "/first?x=1&y=%C3%A9",
                            "X-Forwarded-For: 203.0.113.9\r\nX-Forwarded-Host: evil.example\r\nX-Atrium-Binding-Secret: guess\r\n"));
            assertEquals("GET", first.get("method").asText());
            assertEquals("/first?x=1&y=%C3%A9", first.get("path").asText());
            JsonNode h = first.get("headers");
            assertEquals("203.0.113.9, 127.0.0.1", h.get("x-forwarded-for").asText(), "the client's chain, then us");
            assertEquals(host, h.get("x-forwarded-host").asText(), "the client's X-Forwarded-Host is replaced");
            assertEquals("http", h.get("x-forwarded-proto").asText());
            assertFalse(h.has("x-atrium-binding-secret"), "the binding secret never comes from a client");

            byte[] body = "{\"a\":\"é\"}".getBytes(StandardCharsets.UTF_8);
            c.write(
                    "POST /second HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nContent-Length: "
                            + body.length + "\r\n\r\n",
                    body);
            JsonNode second = c.json(RawHttp.read(c.in));
            assertEquals("POST", second.get("method").asText());
            assertEquals("{\"a\":\"é\"}", second.get("body").asText());
            assertEquals(
                    "127.0.0.1", second.get("headers").get("x-forwarded-for").asText(), "not the first one's");

            // a chunked body, sent in two writes
            c.write(
                    "PUT /third HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
                    null);
            Thread.sleep(50);
            c.write("6;ext=1\r\n world\r\n0\r\n\r\n", null);
            JsonNode third = c.json(RawHttp.read(c.in));
            assertEquals("PUT", third.get("method").asText());
            assertEquals("hello world", third.get("body").asText());

            // Java's HTTP client asks every plain request for h2c: declined, and the request relayed as HTTP/1.1
            JsonNode fourth = c.json(
                    c.get(
                            host,
                            "/fourth",
                            "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA\r\n"));
            assertFalse(fourth.get("headers").has("upgrade"));
            assertFalse(fourth.get("headers").has("http2-settings"));
        }
        assertTrue(
                metric("atrium_relay_requests_total") >= relayedBefore + 4,
                "the four requests took the relay, not the servlet stack");
    }

    @Test
    void pipelinedRequestsAStreamedAnswerAndAHeadRequestKeepTheirOrderAndFraming() throws Exception {
        User u = server.newUser();
        String host = deployedHost(u, "relay-frames", "frames");
        try (Kept c = new Kept()) {
            c.write(
                    "GET /p1 HTTP/1.1\r\nHost: " + host + "\r\n\r\nGET /stream HTTP/1.1\r\nHost: " + host
                            + "\r\n\r\nHEAD /p3 HTTP/1.1\r\nHost: " + host + "\r\n\r\nGET /p4 HTTP/1.1\r\nHost: " + host
                            + "\r\n\r\n",
                    null);
            assertEquals("/p1", c.json(RawHttp.read(c.in)).get("path").asText());
            RawHttp.Response stream = RawHttp.read(c.in);
            assertEquals(200, stream.status());
            assertEquals("part 0;part 1;part 2;part 3;part 4;", HostHttp.text(stream));
            // a HEAD answer has a length and no body: the next answer follows at once
            String status = line(c.in);
            assertTrue(status.startsWith("HTTP/1.1 200"), status);
            long length = -1;
            for (String l; !(l = line(c.in)).isEmpty(); ) {
                if (l.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                    length = Long.parseLong(l.substring(15).trim());
                }
            }
            assertTrue(length > 0, "the HEAD answer tells the GET's length");
            assertEquals("/p4", c.json(RawHttp.read(c.in)).get("path").asText());
        }
    }

    @Test
    void oneConnectionReachesTwoServicesAndACanaryShareRequestByRequest() throws Exception {
        User u = server.newUser();
        String a = deployedHost(u, "relay-a", "service a");
        String b = deployedHost(u, "relay-b", "service b");
        String id = ServicesTest.createService(u, ServicesTest.unique("relay-canary"));
        String slug =
                u.http().get("/api/services/" + id).get("service").get("slug").asText();
        deploy(u, id, "old", Map.of());
        deploy(u, id, "new", Map.of("strategy", "canary", "canary_percent", 50));
        String canary = slug + ".apps.localhost";
        try (Kept c = new Kept()) {
            assertEquals("service a", c.json(c.get(a, "/", "")).get("who").asText());
            assertEquals("service b", c.json(c.get(b, "/", "")).get("who").asText());
            assertEquals("service a", c.json(c.get(a, "/", "")).get("who").asText());
            int fresh = 0;
            for (int i = 0; i < 200; i++) {
                String who = c.json(c.get(canary, "/", "")).get("who").asText();
                if (who.equals("new")) {
                    fresh++;
                } else {
                    assertEquals("old", who);
                }
            }
            assertTrue(fresh >= 60 && fresh <= 140, fresh + " of 200 on one connection went to the canary");
        }
    }

    @Test
    void aRequestTheRelayDoesNotTakeHandsTheConnectionToTheServletStackForGood() throws Exception {
        User u = server.newUser();
        String host = deployedHost(u, "relay-handover", "kept");
        double handoversBefore = metric("atrium_relay_handovers_total");
        try (Kept c = new Kept()) {
            assertEquals("kept", c.json(c.get(host, "/", "")).get("who").asText());
            RawHttp.Response unknown = c.get("no-such-service-here.apps.localhost", "/", "");
            assertEquals(404, unknown.status());
            assertEquals(
                    "NOT_FOUND",
                    Http.JSON.readTree(unknown.body()).get("error").get("code").asText());
            // the servlet stack's Host routing answers the service from here on
            assertEquals("kept", c.json(c.get(host, "/after", "")).get("who").asText());
            RawHttp.Response api = c.get("127.0.0.1:" + server.port, "/healthz", "");
            assertEquals(200, api.status());
        }
        // a head that comes in pieces is Jetty's too, and still the worker's answer
        try (Kept c = new Kept()) {
            c.write("GET /slow HTTP/1.1\r\nHo", null);
            Thread.sleep(100);
            c.write("st: " + host + "\r\n\r\n", null);
            assertEquals("/slow", c.json(RawHttp.read(c.in)).get("path").asText());
        }
        assertTrue(metric("atrium_relay_handovers_total") >= handoversBefore + 2);
    }

    @Test
    void aTargetTheServletStackWouldNormaliseIsNotRelayed() throws Exception {
        User u = server.newUser();
        String host = deployedHost(u, "relay-odd", "odd");
        double relayedBefore = metric("atrium_relay_requests_total");
        try (Kept c = new Kept()) {
            RawHttp.Response r = c.get(host, "/a/%2e%2e/b", "");
            // whatever the servlet stack answers (the envelope refuses an encoded dot segment), it is not a relay of it
            assertTrue(r.status() == 400 || r.status() == 200, r.status() + " " + HostHttp.text(r));
        }
        assertEquals(relayedBefore, metric("atrium_relay_requests_total"), 0.0);
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int ch; (ch = in.read()) != '\n'; ) {
            if (ch < 0) {
                throw new IOException("the connection ended");
            }
            if (ch != '\r') {
                b.write(ch);
            }
        }
        return b.toString(StandardCharsets.ISO_8859_1);
    }
}
