package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.atrium.itests.AtriumServer.User;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.text.PDFTextStripper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Browser sessions on a real headless Chromium (issue 38, part 2), on the shared server, whose sessions may reach
 * loopback only on {@link AtriumServer#BROWSER_PAGES_PORT}, where this class serves its pages: a form filled and
 * submitted and its result read; a screenshot of the asked viewport and a PDF that PDFBox opens; a redirect to
 * PostgreSQL's port, a WebSocket to it and an image on the metadata address refused and listed for the session; an idle session reaped
 * with its Chromium and its profile; the per-Principal and the server's caps answering 429; another Principal's session id 404 on every
 * route; a bundle stop (the feature switched off) ending every Chromium and removing every profile.
 */
@SharedServer
@Timeout(120)
class BrowserSessionsTest {

    private static final HttpClient RAW = HttpClient.newHttpClient();
    private static HttpServer pages;

    @BeforeAll
    static void servePages() throws IOException {
        pages = HttpServer.create(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), AtriumServer.BROWSER_PAGES_PORT), 0);
        pages.createContext("/form", e -> html(e, "Form", """
                <form action="/result" method="get">
                  <label for="who">Your name</label><input id="who" name="who">
                  <select name="color"><option value="r">Red</option><option value="g">Green</option></select>
                  <button type="submit">Send</button>
                </form>
                <a href="/tall">Tall page</a>
                <table><tr><th>Planet</th><th>Moons</th></tr><tr><td>Mars</td><td>2</td></tr></table>
                """));
        pages.createContext("/result", e -> {
            Map<String, String> q = query(e.getRequestURI());
            html(e, "Result", "<p id=\"greeting\">Hello " + q.get("who") + ", you chose " + q.get("color") + "</p>");
        });
        pages.createContext("/tall", e -> html(e, "Tall", "<div style=\"height:3000px\">Tall page text</div>"));
        // a small page that builds a text of ten million characters
        pages.createContext(
                "/huge",
                e -> html(
                        e,
                        "Huge",
                        "<p id=\"huge\"></p><script>"
                                + "document.getElementById('huge').textContent = 'x'.repeat(10000000);</script>"));
        pages.createContext("/redirect", e -> {
            e.getResponseHeaders().add("Location", "http://127.0.0.1:5432/");
            e.sendResponseHeaders(302, -1);
            e.close();
        });
        pages.createContext(
                "/metadata-image",
                e -> html(e, "Image", "<img src=\"http://169.254.169.254/x.png\" alt=\"metadata\"><p>page</p>"));
        // a WebSocket's handshake is never paused by the Fetch domain: the session's proxy refuses its connection
        pages.createContext(
                "/websocket",
                e -> html(e, "Socket", "<script>new WebSocket('ws://127.0.0.1:5432/');</script><p>socket</p>"));
        pages.start();
    }

    @AfterAll
    static void stopPages() {
        if (pages != null) {
            pages.stop(0);
        }
    }

    private static void html(HttpExchange e, String title, String body) throws IOException {
        byte[] bytes = ("<!doctype html><html><head><title>" + title + "</title></head><body>" + body
                        + "</body></html>")
                .getBytes(StandardCharsets.UTF_8);
        e.getResponseHeaders().add("Content-Type", "text/html; charset=utf-8");
        e.sendResponseHeaders(200, bytes.length);
        e.getResponseBody().write(bytes);
        e.close();
    }

    private static Map<String, String> query(URI uri) {
        Map<String, String> q = new java.util.HashMap<>();
        String raw = uri.getRawQuery();
        if (raw != null) {
            for (String pair : raw.split("&")) {
                String[] kv = pair.split("=", 2);
                q.put(kv[0], kv.length > 1 ? URLDecoder.decode(kv[1], StandardCharsets.UTF_8) : "");
            }
        }
        return q;
    }

    private static String page(String path) {
        return "http://127.0.0.1:" + AtriumServer.BROWSER_PAGES_PORT + path;
    }

    private static JsonNode created(User user, Map<String, Object> body) {
        Http.Reply r = user.http().post("/api/spaces/" + user.defaultSpaceId() + "/browser-sessions", body);
        assertEquals(201, r.status(), r.body());
        return r.json().path("browser_session");
    }

    private static JsonNode ok(Http.Reply r) {
        assertEquals(200, r.status(), r.body());
        return r.json();
    }

    private static HttpResponse<byte[]> bytes(User user, String method, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(user.http().base() + path))
                .header("Authorization", "Bearer " + user.http().token())
                .timeout(Duration.ofSeconds(30))
                .method(method, HttpRequest.BodyPublishers.noBody())
                .build();
        return RAW.send(request, HttpResponse.BodyHandlers.ofByteArray());
    }

    /** The width and height in a PNG's IHDR chunk. */
    private static int[] pngSize(byte[] png) {
        assertTrue(png.length > 24, "too short for a PNG");
        assertEquals(0x89, png[0] & 0xff, "PNG signature");
        assertEquals("IHDR", new String(png, 12, 4, StandardCharsets.US_ASCII));
        ByteBuffer b = ByteBuffer.wrap(png);
        return new int[] {b.getInt(16), b.getInt(20)};
    }

    @Test
    void aFormIsFilledAndSubmittedAndThePageIsCapturedAsPngAndPdf(AtriumServer server) throws Exception {
        User user = server.newUser();
        JsonNode session = created(user, Map.of("width", 640, "height", 480));
        String id = session.path("id").asText();
        assertEquals(640, session.path("viewport").path("width").asInt());
        String base = "/api/browser-sessions/" + id;
        Http http = user.http();

        JsonNode navigated = ok(http.post(base + "/goto", Map.of("url", page("/form"))));
        assertEquals("Form", navigated.path("title").asText(), navigated.toString());
        ok(http.post(base + "/action", Map.of("kind", "type", "role", "textbox", "name", "Your name", "text", "Ada")));
        ok(http.post(base + "/action", Map.of("kind", "select", "selector", "select[name=color]", "value", "Green")));
        JsonNode table = ok(http.post(base + "/extract", Map.of("kind", "table")));
        assertEquals("Planet", table.path("table").path("headers").path(0).asText(), table.toString());
        assertEquals("Mars", table.path("table").path("rows").path(0).path(0).asText(), table.toString());
        JsonNode links = ok(http.post(base + "/extract", Map.of("kind", "links")));
        assertEquals(page("/tall"), links.path("links").path(0).path("href").asText(), links.toString());
        JsonNode clicked = ok(http.post(base + "/action", Map.of("kind", "click", "role", "button", "name", "Send")));
        assertTrue(clicked.path("url").asText().startsWith(page("/result")), clicked.toString());
        JsonNode text = ok(http.post(base + "/extract", Map.of("kind", "text", "selector", "#greeting")));
        assertEquals("Hello Ada, you chose g", text.path("text").asText(), text.toString());
        JsonNode tree = ok(http.post(base + "/extract", Map.of("kind", "accessibility")));
        assertTrue(tree.path("nodes").toString().contains("Hello Ada"), tree.toString());
        assertTrue(http.get(base + "/html").body().contains("<p id=\"greeting\">Hello Ada, you chose g</p>"));

        HttpResponse<byte[]> shot = bytes(user, "GET", base + "/screenshot");
        assertEquals(200, shot.statusCode());
        assertEquals("image/png", shot.headers().firstValue("Content-Type").orElse(""));
        int[] size = pngSize(shot.body());
        assertEquals(640, size[0]);
        assertEquals(480, size[1]);

        ok(http.post(base + "/goto", Map.of("url", page("/tall"))));
        int[] full =
                pngSize(bytes(user, "GET", base + "/screenshot?full_page=true").body());
        assertEquals(640, full[0]);
        assertTrue(full[1] >= 3000, "a full page of 3000 px and more: " + full[1]);

        // a page's HTML or text too long to answer is 413, and only its length crossed into the server
        ok(http.post(base + "/goto", Map.of("url", page("/huge"))));
        Http.Reply huge = http.get(base + "/html");
        assertEquals(
                413, huge.status(), huge.body().length() > 300 ? huge.body().substring(0, 300) : huge.body());
        assertEquals("PAYLOAD_TOO_LARGE", huge.errorCode());
        Http.Reply hugeText = http.post(base + "/extract", Map.of("kind", "text"));
        assertEquals(413, hugeText.status(), hugeText.body().length() > 300 ? "(long)" : hugeText.body());
        ok(http.post(base + "/goto", Map.of("url", page("/tall"))));

        HttpResponse<byte[]> pdf = bytes(user, "POST", base + "/pdf");
        assertEquals(200, pdf.statusCode());
        assertEquals("application/pdf", pdf.headers().firstValue("Content-Type").orElse(""));
        try (PDDocument doc = PDDocument.load(pdf.body())) {
            assertTrue(doc.getNumberOfPages() >= 1);
            assertTrue(new PDFTextStripper().getText(doc).contains("Tall page text"));
        }

        long pid = ok(http.get(base)).path("browser_session").path("pid").asLong();
        assertTrue(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "Chromium runs");
        List<ProcessHandle> children =
                ProcessHandle.of(pid).orElseThrow().descendants().toList();
        assertEquals(200, http.delete(base).status());
        assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "Chromium is gone");
        for (ProcessHandle p : children) {
            assertFalse(running(p), "Chromium's child " + p.pid() + " is gone");
        }
        assertFalse(Files.exists(profile(server, id)), "the profile is gone");
        assertEquals("NOT_FOUND", http.get(base).errorCode());
        // the session's minutes, rounded up, reach billing (one event keyed by the session)
        BillingTest.eventually(
                "the session's minute is counted", () -> BillingTest.usedOf(user, "browser_minutes") == 1, 10);
    }

    @Test
    void requestsToLoopbackAndMetadataAddressesAreRefusedAndListed(AtriumServer server) throws Exception {
        User user = server.newUser();
        String id = created(user, Map.of()).path("id").asText();
        String base = "/api/browser-sessions/" + id;
        Http http = user.http();
        try {
            JsonNode redirected = ok(http.post(base + "/goto", Map.of("url", page("/redirect"))));
            assertEquals("net::ERR_BLOCKED_BY_CLIENT", redirected.path("error").asText(), redirected.toString());
            assertTrue(redirected.path("blocked").toString().contains("http://127.0.0.1:5432/"), redirected.toString());

            JsonNode imaged = ok(http.post(base + "/goto", Map.of("url", page("/metadata-image"))));
            assertEquals("Image", imaged.path("title").asText(), imaged.toString());
            assertTrue(imaged.path("blocked").toString().contains("169.254.169.254"), imaged.toString());

            Http.Reply direct = http.post(base + "/goto", Map.of("url", "http://127.0.0.1:5432/"));
            assertEquals(400, direct.status(), direct.body());

            ok(http.post(base + "/goto", Map.of("url", page("/websocket"))));
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (!ok(http.get(base))
                            .path("browser_session")
                            .path("blocked")
                            .toString()
                            .contains("\"127.0.0.1:5432\"")
                    && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }

            List<String> blocked = StreamSupport.stream(
                            ok(http.get(base))
                                    .path("browser_session")
                                    .path("blocked")
                                    .spliterator(),
                            false)
                    .map(b -> b.path("url").asText())
                    .toList();
            assertTrue(blocked.contains("http://127.0.0.1:5432/"), blocked.toString());
            assertTrue(blocked.contains("http://169.254.169.254/x.png"), blocked.toString());
            assertTrue(blocked.contains("127.0.0.1:5432"), "the WebSocket's connection: " + blocked);
            assertTrue(
                    blocked.stream().noneMatch(u -> u.contains(".invalid") || u.contains("google")),
                    "Chromium's own background requests are not the page's: " + blocked);
        } finally {
            http.delete(base);
        }
    }

    @Test
    void anIdleSessionEndsWithItsChromiumAndProfile(AtriumServer server) throws Exception {
        User user = server.newUser();
        JsonNode session = created(user, Map.of("idle_timeout_seconds", 1));
        String id = session.path("id").asText();
        ProcessHandle chromium = ProcessHandle.of(session.path("pid").asLong()).orElseThrow();
        List<ProcessHandle> tree = chromium.descendants().toList();
        assertFalse(tree.isEmpty(), "Chromium runs renderers and helpers");
        assertTrue(Files.isDirectory(profile(server, id)));

        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (user.http().get("/api/browser-sessions/" + id).status() == 200 && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        assertEquals("NOT_FOUND", user.http().get("/api/browser-sessions/" + id).errorCode());
        assertFalse(chromium.isAlive(), "Chromium is gone");
        for (ProcessHandle p : tree) {
            assertFalse(running(p), "Chromium's child " + p.pid() + " is gone");
        }
        assertFalse(Files.exists(profile(server, id)), "the profile is gone");
    }

    @Test
    void thePrincipalsAndTheServersCapsAre429AndAnotherPrincipalsSessionIs404(AtriumServer server) throws Exception {
        User owner = server.newUser();
        User stranger = server.newUser();
        String first = created(owner, Map.of()).path("id").asText();
        String second = created(owner, Map.of()).path("id").asText();
        List<String> others = new java.util.ArrayList<>();
        try {
            Http.Reply third =
                    owner.http().post("/api/spaces/" + owner.defaultSpaceId() + "/browser-sessions", Map.of());
            assertEquals(429, third.status(), third.body());
            assertEquals("RATE_LIMITED", third.errorCode());
            long retryAfter = Long.parseLong(
                    third.raw().headers().firstValue("Retry-After").orElseThrow());
            assertTrue(retryAfter >= 1, "Retry-After " + retryAfter);

            String missing = "/api/browser-sessions/bs_00000000000000000000";
            String theirs = "/api/browser-sessions/" + first;
            Http s = stranger.http();
            for (String route : List.of("", "/html", "/screenshot")) {
                Http.Reply answer = s.get(theirs + route);
                assertEquals(404, answer.status(), route + ": " + answer.body());
                assertEquals(s.get(missing + route).body(), answer.body(), route);
            }
            assertEquals(s.delete(missing).body(), s.delete(theirs).body());
            assertEquals(404, s.delete(theirs).status());
            assertEquals(
                    404, s.post(theirs + "/goto", Map.of("url", page("/form"))).status());
            assertEquals(404, bytes(stranger, "POST", theirs + "/pdf").statusCode());
            // the stranger's workspace cannot hold the owner's session either
            assertEquals(
                    404,
                    s.post("/api/spaces/" + owner.defaultSpaceId() + "/browser-sessions", Map.of())
                            .status());

            assertEquals(200, owner.http().get(theirs).status(), "the owner's session is untouched");

            // the server's cap (4 on the shared server): two more sessions, the stranger's, and a third user is refused
            for (int i = 0; i < 2; i++) {
                others.add(created(stranger, Map.of()).path("id").asText());
            }
            User newcomer = server.newUser();
            String create = "/api/spaces/" + newcomer.defaultSpaceId() + "/browser-sessions";
            Http.Reply full = newcomer.http().post(create, Map.of());
            assertEquals(429, full.status(), full.body());
            assertTrue(full.body().contains("this server runs at most 4"), full.body());
            assertTrue(full.raw().headers().firstValue("Retry-After").isPresent());
            for (String id : others) {
                assertEquals(200, s.delete("/api/browser-sessions/" + id).status());
            }
            others.clear();
            Http.Reply room = newcomer.http().post(create, Map.of());
            assertEquals(201, room.status(), "room again once sessions ended: " + room.body());
            assertEquals(
                    200,
                    newcomer.http()
                            .delete("/api/browser-sessions/"
                                    + room.json()
                                            .path("browser_session")
                                            .path("id")
                                            .asText())
                            .status());
        } finally {
            owner.http().delete("/api/browser-sessions/" + first);
            owner.http().delete("/api/browser-sessions/" + second);
            others.forEach(id -> stranger.http().delete("/api/browser-sessions/" + id));
        }
    }

    @Test
    void stoppingTheBundleEndsEveryChromiumAndRemovesTheProfiles(AtriumServer server) throws Exception {
        User user = server.newUser();
        JsonNode session = created(user, Map.of());
        String id = session.path("id").asText();
        ProcessHandle chromium = ProcessHandle.of(session.path("pid").asLong()).orElseThrow();
        List<ProcessHandle> tree = chromium.descendants().toList();
        assertTrue(Files.isDirectory(profile(server, id)));
        try {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/browser/disable", Map.of())
                            .status());
            chromium.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
            for (ProcessHandle p : tree) {
                assertFalse(running(p), "Chromium's child " + p.pid() + " is gone");
            }
            assertFalse(Files.exists(profile(server, id)), "the profile is gone");
        } finally {
            assertEquals(
                    200,
                    server.operator()
                            .post("/admin/features/browser/enable", Map.of())
                            .status());
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        Http.Reply back = user.http().get("/api/browser-sessions/" + id);
        while (!back.body().contains("browser session not found") && System.nanoTime() < deadline) {
            Thread.sleep(100);
            back = user.http().get("/api/browser-sessions/" + id);
        }
        assertEquals(
                "browser session not found",
                back.json().path("error").path("message").asText(),
                back.body());
    }

    /**
     * Whether the process runs: a zombie does not (Chromium's children are reparented to init when it is killed, and
     * init reaps them when it gets to it; {@link ProcessHandle#isAlive} counts them until then).
     */
    static boolean running(ProcessHandle p) {
        try {
            String stat = Files.readString(Path.of("/proc/" + p.pid() + "/stat"));
            String state = stat.substring(stat.lastIndexOf(')') + 1).trim();
            return !state.startsWith("Z") && !state.startsWith("X");
        } catch (IOException | RuntimeException gone) {
            return false;
        }
    }

    private static Path profile(AtriumServer server, String id) {
        return server.data.resolve("browser-sessions").resolve(id);
    }
}
