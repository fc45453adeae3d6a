package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * WebSockets through Atrium's Host routing to a real worker in workerd (issue 20): the client's upgrade is relayed to
 * the worker's {@code WebSocketPair}, messages of every kind pass both ways, closes with their codes, the worker's
 * choice of subprotocol and its refusals reach the client, and nothing is left behind when clients or the deployment
 * go away (threads and sockets of the server's JVM). Skipped (aborted) without the workerd deployment provider, as {@link ServicesWorkerdTest}.
 */
@SharedServer
class WorkerWebSocketsTest {

    static final String ECHO = """
            const closes = [];
            export default {
              async fetch(request) {
                const url = new URL(request.url);
                if (url.pathname === "/closes") return Response.json(closes);
                if (request.headers.get("Upgrade") !== "websocket") return new Response("a WebSocket lives here", { status: 426 });
                if (url.pathname === "/refuse-big") return new Response("x".repeat(2 << 20), { status: 400 });
                if (url.pathname === "/refuse") return new Response(JSON.stringify({ refused: true }), { status: 403, headers: { "content-type": "application/json", "x-why": "not-you" } });
                const offered = (request.headers.get("Sec-WebSocket-Protocol") ?? "").split(",").map(s => s.trim()).filter(Boolean);
                const [client, server] = Object.values(new WebSocketPair());
                server.binaryType = "arraybuffer"; // this compatibility date's default is Blob
                server.accept();
                server.addEventListener("message", e => {
                  if (e.data === "close-me") { server.close(4001, "asked to"); return; }
                  if (e.data === "about") { server.send(JSON.stringify({ host: request.headers.get("host"), forwardedHost: request.headers.get("x-forwarded-host"), urlHost: url.host, path: url.pathname + url.search, offered, cookie: request.headers.get("cookie") })); return; }
                  server.send(e.data);
                });
                if (url.pathname === "/greet") server.send("welcome");
                if (url.pathname === "/close-at-once") server.close(4003, "not today");
                server.addEventListener("close", e => {
                  closes.push(e.code + " " + e.reason);
                  try { server.close(e.code, e.reason); } catch (ignored) {}
                });
                const headers = offered.includes("echo.v2") ? { "Sec-WebSocket-Protocol": "echo.v2" } : {};
                return new Response(null, { status: 101, webSocket: client, headers });
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

    record Svc(String id, String host) {}

    private Svc echoService(User u, String name) {
        String id = ServicesTest.createService(u, ServicesTest.unique(name));
        String slug =
                u.http().get("/api/services/" + id).get("service").get("slug").asText();
        Http.Reply r = u.http()
                .post(
                        "/api/services/" + id + "/deployments",
                        Map.of("bundle", Base64.getEncoder().encodeToString(ECHO.getBytes(StandardCharsets.UTF_8))));
        assertEquals(201, r.status(), r.body());
        return new Svc(id, slug + ".apps.localhost");
    }

    private WsClient open(Svc s, String path) throws Exception {
        WsClient.Handshake h = WsClient.connect(server.port, s.host(), path, Map.of());
        assertEquals(101, h.status(), new String(h.body(), StandardCharsets.UTF_8));
        return h.client();
    }

    @Test
    void textBinaryLargeMessagesAndPingsPassBothWaysWithTheWorkersSubprotocol() throws Exception {
        User u = server.newUser();
        Svc s = echoService(u, "ws-echo");
        WsClient.Handshake h = WsClient.connect(
                server.port,
                s.host(),
                "/room/7?x=1",
                Map.of("Sec-WebSocket-Protocol", "chat.v1, echo.v2", "Cookie", "session=abc"));
        assertEquals(101, h.status(), new String(h.body(), StandardCharsets.UTF_8));
        assertEquals(
                "echo.v2",
                h.headers().get("sec-websocket-protocol"),
                "the worker's choice of the offered subprotocols");
        try (WsClient ws = h.client()) {
            ws.sendText("about");
            JsonNode about = Http.JSON.readTree(ws.read().text());
            assertEquals(
                    s.host(), about.get("host").asText(), "the worker sees the client's Host, as on plain requests");
            assertEquals(s.host(), about.get("urlHost").asText());
            assertEquals(s.host(), about.get("forwardedHost").asText());
            assertEquals("/room/7?x=1", about.get("path").asText());
            assertEquals("[\"chat.v1\",\"echo.v2\"]", about.get("offered").toString());
            assertEquals("session=abc", about.get("cookie").asText());

            ws.sendText("héllo ✓");
            WsClient.Message text = ws.read();
            assertEquals(WsClient.TEXT, text.opcode());
            assertEquals("héllo ✓", text.text());

            byte[] small = {0, 1, 2, (byte) 0xff};
            ws.sendBinary(small);
            WsClient.Message bin = ws.read();
            assertEquals(WsClient.BINARY, bin.opcode(), () -> bin.text());
            assertArrayEquals(small, bin.payload());

            // beyond Jetty's 64 KiB frame size and the relay's fragments: one message each way, whole
            byte[] big = new byte[300 * 1024];
            new Random(11).nextBytes(big);
            ws.sendBinary(big);
            WsClient.Message bigBack = ws.read();
            assertEquals(WsClient.BINARY, bigBack.opcode());
            assertArrayEquals(big, bigBack.payload());
            String bigText = "ü".repeat(100_000) + "end";
            ws.sendText(bigText);
            WsClient.Message bigTextBack = ws.read();
            assertEquals(WsClient.TEXT, bigTextBack.opcode());
            assertEquals(bigText, bigTextBack.text());

            // a message sent in fragments arrives as one
            ws.frame(WsClient.TEXT, "frag".getBytes(StandardCharsets.UTF_8), false);
            ws.frame(0, "mented".getBytes(StandardCharsets.UTF_8), true);
            assertEquals("fragmented", ws.read().text());

            // the client's ping reaches the worker's runtime, whose pong comes back
            ws.ping("are-you-there".getBytes(StandardCharsets.UTF_8));
            WsClient.Message pong = ws.read();
            assertEquals(WsClient.PONG, pong.opcode());
            assertEquals("are-you-there", pong.text());

            // many messages in a row, in order
            for (int i = 0; i < 200; i++) {
                ws.sendText("m" + i);
            }
            for (int i = 0; i < 200; i++) {
                assertEquals("m" + i, ws.read().text());
            }
            ws.close(1000, "done");
            WsClient.Message close = ws.read();
            assertEquals(WsClient.CLOSE, close.opcode());
            assertEquals(1000, close.closeCode());
        }
    }

    @Test
    void closesPassWithTheirCodesBothWays() throws Exception {
        User u = server.newUser();
        Svc s = echoService(u, "ws-close");
        // what the worker sends or closes at once is waiting for the client when its WebSocket opens
        try (WsClient ws = open(s, "/greet")) {
            assertEquals("welcome", ws.read().text());
            ws.sendText("after");
            assertEquals("after", ws.read().text());
        }
        try (WsClient ws = open(s, "/close-at-once")) {
            WsClient.Message close = ws.read();
            assertEquals(WsClient.CLOSE, close.opcode());
            assertEquals(4003, close.closeCode());
            assertEquals("not today", close.closeReason());
        }
        // the worker closes: the client gets its code and reason
        try (WsClient ws = open(s, "/")) {
            ws.sendText("close-me");
            WsClient.Message close = ws.read();
            assertEquals(WsClient.CLOSE, close.opcode());
            assertEquals(4001, close.closeCode());
            assertEquals("asked to", close.closeReason());
            ws.close(4001, "");
            assertTrue(ws.endsAfterClose(), "the connection ends after the close handshake");
        }
        // the client closes: the worker sees its code and reason, and answers it
        try (WsClient ws = open(s, "/")) {
            ws.sendText("x");
            assertEquals("x", ws.read().text());
            ws.close(4002, "client leaves");
            WsClient.Message close = ws.read();
            assertEquals(WsClient.CLOSE, close.opcode());
            assertEquals(4002, close.closeCode());
        }
        JsonNode closes = null;
        for (int i = 0; i < 50; i++) {
            closes = Http.JSON.readTree(HostHttp.text(HostHttp.get(server.port, s.host(), "/closes")));
            if (closes.toString().contains("4002 client leaves")) {
                break;
            }
            Thread.sleep(100);
        }
        assertTrue(closes.toString().contains("4002 client leaves"), closes.toString());
    }

    @Test
    void aRefusalReachesTheClientAsTheWorkersAnswerAndUnknownHostsStay404() throws Exception {
        User u = server.newUser();
        Svc s = echoService(u, "ws-refuse");
        WsClient.Handshake refused = WsClient.connect(server.port, s.host(), "/refuse", Map.of());
        assertEquals(403, refused.status());
        assertNull(refused.client());
        assertEquals("not-you", refused.headers().get("x-why"));
        assertEquals("{\"refused\":true}", new String(refused.body(), StandardCharsets.UTF_8));

        // a refusal too large to hold is not passed on
        WsClient.Handshake big = WsClient.connect(server.port, s.host(), "/refuse-big", Map.of());
        assertEquals(502, big.status());
        assertEquals(
                "BAD_GATEWAY",
                Http.JSON.readTree(big.body()).path("error").path("code").asText());

        WsClient.Handshake unknown = WsClient.connect(server.port, "no-such-service-ws.apps.localhost", "/", Map.of());
        assertEquals(404, unknown.status());
        JsonNode error = Http.JSON.readTree(unknown.body()).get("error");
        assertEquals("NOT_FOUND", error.get("code").asText());
        assertTrue(error.get("message").asText().contains("no-such-service-ws"), error.toString());

        // plain requests to the same host are proxied as before
        RawHttp.Response plain = HostHttp.get(server.port, s.host(), "/");
        assertEquals(426, plain.status());
    }

    @Test
    void closedClientsAndAStoppedDeploymentLeaveNoThreadsBehind() throws Exception {
        User u = server.newUser();
        Svc s = echoService(u, "ws-leak");
        // a first round brings the relay's pools to their working size; a leak would add threads for every round after
        // it, the pools none. Jetty's own request pool is left out of the count (see threads())
        rounds(s, 1);
        Thread.sleep(1000);
        int baseline = threads();
        int socketsBefore = sockets();
        String before = threadNames();
        rounds(s, 3);
        int afterClients = settledThreads(baseline + 5);
        int socketsAfter = sockets();
        for (int i = 0; i < 50 && socketsAfter > socketsBefore + 5; i++) {
            Thread.sleep(200);
            socketsAfter = sockets();
        }
        System.out.println("worker WebSockets: server sockets " + socketsBefore + " after the first 25 WebSockets, "
                + socketsAfter + " after 75 more");
        assertTrue(
                socketsAfter <= socketsBefore + 5,
                "sockets " + socketsBefore + " before 75 WebSockets, " + socketsAfter + " after they closed");
        System.out.println("worker WebSockets: server threads " + baseline + " after the first 25 WebSockets, "
                + afterClients + " after 75 more");
        assertTrue(
                afterClients <= baseline + 5,
                "threads " + baseline + " before 75 WebSockets, " + afterClients + " after they closed; by name "
                        + before + " then " + threadNames());
        List<String> stuck = jettyThreadsInAtrium();
        assertTrue(stuck.isEmpty(), "Jetty threads still in Atrium's code after the WebSockets closed: " + stuck);

        // the deployment goes away under open WebSockets: every client is closed, none hangs
        List<WsClient> open = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            WsClient ws = open(s, "/");
            ws.sendText("before");
            assertEquals("before", ws.read().text());
            open.add(ws);
        }
        assertEquals(200, u.http().delete("/api/services/" + s.id()).status());
        for (WsClient ws : open) {
            try (ws) {
                WsClient.Message last = ws.read();
                assertEquals(WsClient.CLOSE, last.opcode(), "a client is closed when its worker goes away");
                // workerd closes its WebSockets as it stops (1000 or no code), or its connection drops (1001)
                assertTrue(
                        last.closeCode() == 1000 || last.closeCode() == 1001,
                        last.closeCode() + " " + last.closeReason());
            }
        }
        int afterDeployment = settledThreads(baseline + 5);
        System.out.println(
                "worker WebSockets: server threads " + afterDeployment + " after the deployment went away under 10");
        assertTrue(
                afterDeployment <= baseline + 5,
                "threads " + baseline + " before, " + afterDeployment + " after the deployment went away; by name "
                        + before + " then " + threadNames());
        stuck = jettyThreadsInAtrium();
        assertTrue(stuck.isEmpty(), "Jetty threads still in Atrium's code after the deployment went away: " + stuck);
        assertEquals(404, WsClient.connect(server.port, s.host(), "/", Map.of()).status());
    }

    /** Rounds of 25 WebSockets open at once, each echoing a message; half closed properly, half just dropped. */
    private void rounds(Svc s, int count) throws Exception {
        for (int round = 0; round < count; round++) {
            List<WsClient> clients = new ArrayList<>();
            for (int i = 0; i < 25; i++) {
                WsClient ws = open(s, "/");
                ws.sendText("r" + round + "c" + i);
                clients.add(ws);
            }
            for (int i = 0; i < clients.size(); i++) {
                assertEquals("r" + round + "c" + i, clients.get(i).read().text());
            }
            for (int i = 0; i < clients.size(); i++) {
                WsClient ws = clients.get(i);
                if (i % 2 == 0) {
                    ws.close(1000, "");
                    assertEquals(WsClient.CLOSE, ws.read().opcode());
                }
                ws.close();
            }
        }
    }

    /** The server JVM's thread count once it is at most {@code target}, or what it is after 20 s. */
    private int settledThreads(int target) throws Exception {
        int n = threads();
        for (int i = 0; i < 100 && n > target; i++) {
            Thread.sleep(200);
            n = threads();
        }
        return n;
    }

    /** The server's threads by name, digits dropped (so a pool's threads count together). */
    private String threadNames() throws Exception {
        java.util.TreeMap<String, Integer> names = new java.util.TreeMap<>();
        try (var tasks = Files.list(Path.of("/proc/" + jvm() + "/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    names.merge(Files.readString(t.resolve("comm")).trim().replaceAll("[0-9]+", "#"), 1, Integer::sum);
                } catch (java.io.IOException gone) {
                    // the thread ended meanwhile
                }
            }
        }
        return names.toString();
    }

    /** The server JVM's open sockets (its clients' and its own to workerd). */
    private int sockets() throws Exception {
        int n = 0;
        try (var fds = Files.list(Path.of("/proc/" + jvm() + "/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    if (Files.readSymbolicLink(fd).toString().startsWith("socket:")) {
                        n++;
                    }
                } catch (java.io.IOException gone) {
                    // closed meanwhile
                }
            }
        }
        return n;
    }

    /** The server's JVM: the launched process, or the java process under it (when launched through a script). */
    private long jvm() {
        ProcessHandle launched = server.process.toHandle();
        if (launched.info().command().orElse("").endsWith("/java")) {
            return launched.pid();
        }
        return launched.descendants()
                .filter(p -> p.info().command().orElse("").endsWith("/java"))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no JVM under the server's process"))
                .pid();
    }

    /**
     * The server's threads outside Jetty's request pool. That pool is elastic (it grows with concurrent requests, more
     * so on a loaded machine, and shrinks only after its idle timeout), so its size says nothing about a leak; a pool
     * thread stuck in a relay does, and {@link #jettyThreadsInAtrium()} looks for those.
     */
    private int threads() throws Exception {
        int n = 0;
        try (var tasks = Files.list(Path.of("/proc/" + jvm() + "/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    if (!Files.readString(t.resolve("comm")).startsWith("qtp")) {
                        n++;
                    }
                } catch (java.io.IOException gone) {
                    // the thread ended meanwhile
                }
            }
        }
        return n;
    }

    /** Jetty's request threads that are inside Atrium's code, by their stacks; settled for up to 10 s. */
    private List<String> jettyThreadsInAtrium() throws Exception {
        Path jcmd =
                Path.of(ProcessHandle.current().info().command().orElseThrow()).resolveSibling("jcmd");
        List<String> busy = List.of();
        for (int i = 0; i < 50; i++) {
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(jvm()), "Thread.print")
                    .redirectErrorStream(true)
                    .start();
            String dump = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.waitFor(), dump);
            busy = new ArrayList<>();
            for (String block : dump.split("\n\s*\n")) {
                if (block.startsWith("\"qtp") && block.contains("dev.atrium.")) {
                    busy.add(block);
                }
            }
            if (busy.isEmpty()) {
                break;
            }
            Thread.sleep(200);
        }
        return busy;
    }
}
