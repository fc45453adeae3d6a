package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ambiguous request targets, sent byte for byte over a socket as a hostile client would (an HTTP library would
 * normalize them first): the kernel's envelope refuses them with the spec's JSON 400, not Jetty's HTML or empty one.
 */
@SharedServer
class UriRejectionTest {

    private final AtriumServer server;

    UriRejectionTest(AtriumServer server) {
        this.server = server;
    }

    static RawHttp.Response send(AtriumServer server, byte[] requestHead) throws IOException {
        URI base = URI.create(server.base());
        try (Socket s = new Socket(base.getHost(), base.getPort())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(requestHead);
            out.flush();
            return RawHttp.read(s.getInputStream());
        }
    }

    static RawHttp.Response get(AtriumServer server, String target) throws IOException {
        return send(
                server,
                ("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
    }

    static JsonNode specError(RawHttp.Response r, String target) throws IOException {
        String body = new String(r.body(), StandardCharsets.UTF_8);
        assertEquals(400, r.status(), target + " -> " + body);
        assertTrue(
                String.valueOf(r.header("content-type")).startsWith("application/json"), target + " -> " + r.headers());
        JsonNode json = Http.JSON.readTree(body);
        assertEquals("BAD_REQUEST", json.path("error").path("code").asText(), target + " -> " + body);
        assertTrue(
                json.path("error").path("message").asText().startsWith("the request path")
                        || json.path("error").path("message").asText().startsWith("the query string"),
                body);
        return json;
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "/api/spaces/%2e%2e/%2e%2e/admin/users",
                "/api/spaces/%2E%2E",
                "/api/spaces/.%2e/x",
                "/api/spaces/%2e/x",
                "/api/spaces/..%2fadmin",
                "/api/spaces/%2Fetc",
                "/api/spaces/%5c..%5cx",
                "/api/spaces/%25",
                "/api/spaces/%252e%252e",
                "/api/spaces/%u002e%u002e",
                "/api/spaces/%c3%28",
                "/api/spaces/%ff",
                "/api/spaces/%ed%a0%80",
                "/api/spaces/%c0%ae%c0%ae",
                "/api/spaces/%01",
                "/api/spaces/%0d%0aX-Injected:%20yes",
                "/api/spaces/%1f",
                "/api/spaces/%7f",
                "/api//spaces",
                "/api/spaces/",
                "/api/./spaces",
                "/api/spaces/..;/x",
                "/api/spaces;x=1",
                "/api/spaces/%3bx",
                "/static/../api/spaces",
                "/x/%2e%2e/api/spaces",
                "/api/spaces?q=%00",
                "/api/spaces?q=%c3%28",
                "/api/spaces?q=%zz"
            })
    void ambiguousTargetsAreTheSpecs400(String target) throws IOException {
        if (target.equals("/api/spaces/")) {
            // a trailing slash is an ordinary path: the route answers (401: no token), not the envelope
            assertEquals(401, get(server, target).status());
            return;
        }
        specError(get(server, target), target);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/oauth/register/%2e%2e", "/oauth/register/%0a", "/oauth//token", "/oauth/register/%2F"})
    void underOAuthTheRefusalIsOAuthsErrorFormat(String target) throws IOException {
        RawHttp.Response r = get(server, target);
        String body = new String(r.body(), StandardCharsets.UTF_8);
        assertEquals(400, r.status(), body);
        JsonNode json = Http.JSON.readTree(body);
        assertEquals("invalid_request", json.path("error").asText(), body);
        assertTrue(json.path("error_description").asText().startsWith("the request path"), body);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/api/sp%61ces", "/healthz", "/api/spaces"})
    void encodedUnreservedCharactersAndPlainPathsPass(String target) throws IOException {
        RawHttp.Response r = get(server, target);
        // /api/sp%61ces is /api/spaces to Jetty but not to CXF, which matches the raw path: 404, still the spec's body
        assertTrue(
                r.status() == 401 || r.status() == 200 || r.status() == 404,
                target + " -> " + r.status() + " " + new String(r.body(), StandardCharsets.UTF_8));
        assertTrue(
                String.valueOf(r.header("content-type")).startsWith("application/json"), target + " -> " + r.headers());
    }

    @ParameterizedTest
    @ValueSource(strings = {"GET /api/\u00e9 HTTP/1.1", "GET /api/spaces?q=\u00ff HTTP/1.1"})
    void rawNonAsciiBytesInTheTargetAreTheSpecs400(String line) throws IOException {
        RawHttp.Response r = send(
                server,
                (line + "\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        specError(r, line);
    }

    /**
     * What Jetty's HTTP parser refuses before any filter runs, so the envelope never sees it: a raw CR, LF or other
     * control byte or a space in the request line, and {@code %00} anywhere in the path (Jetty's URI decoding refuses an
     * encoded NUL whatever the compliance mode). The kernel's listener gives the server the spec's error handler, so
     * these are the spec's 400 too, with nothing of the application in them.
     */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "GET /api/spa\rces HTTP/1.1",
                "GET /api/a b HTTP/1.1",
                "GET /api/\u0001 HTTP/1.1",
                "GET /api/spaces/%00 HTTP/1.1",
                "GET /oauth/register/%00 HTTP/1.1"
            })
    void requestLinesJettysParserRefusesAreTheSpecs400(String line) throws IOException {
        RawHttp.Response r = send(
                server,
                (line + "\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        String body = new String(r.body(), StandardCharsets.UTF_8);
        assertEquals(400, r.status(), body);
        assertTrue(
                String.valueOf(r.header("content-type")).startsWith("application/json"),
                r.headers().toString());
        JsonNode error = Http.JSON.readTree(body).path("error");
        assertEquals("BAD_REQUEST", error.path("code").asText(), body);
        assertTrue(!error.path("message").asText().isEmpty(), body);
        assertTrue(!body.contains("Exception") && !body.contains("at org."), body);
    }
}
