package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * With a public base URL configured, the Host header decides nothing the server publishes: the OAuth issuer,
 * discovery documents and the URLs in them come from the operator's setting. Without one, the shared test server
 * (which has none) still follows Host and says so at start.
 */
@SharedServer
class PublicBaseUrlTest {

    private static final String PUBLIC = "https://atrium.example.test";
    private static AtriumServer configured;

    private final AtriumServer shared;

    PublicBaseUrlTest(AtriumServer shared) {
        this.shared = shared;
    }

    @BeforeAll
    static void launch() throws Exception {
        configured = AtriumServer.launch(
                Files.createTempDirectory("atrium-public-url-"),
                TestDatabase.create(),
                Map.of("ATRIUM_PUBLIC_URL", PUBLIC + "/"));
    }

    @AfterAll
    static void stop() throws Throwable {
        if (configured != null) {
            configured.close();
        }
    }

    /** GET with the Host header a client chose. */
    private static JsonNode get(AtriumServer server, String path, String host) throws Exception {
        return get(server, path, host, "");
    }

    /** GET with the Host header a client chose and {@code extraHeaders} (each ending in CRLF); expects 200. */
    private static JsonNode get(AtriumServer server, String path, String host, String extraHeaders) throws Exception {
        java.net.URI base = java.net.URI.create(server.base());
        RawHttp.Response r;
        try (java.net.Socket s = new java.net.Socket(base.getHost(), base.getPort())) {
            s.setSoTimeout(10_000);
            s.getOutputStream()
                    .write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + extraHeaders
                                    + "Connection: close\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
            r = RawHttp.read(s.getInputStream());
        }
        assertEquals(200, r.status(), new String(r.body(), StandardCharsets.UTF_8));
        return Http.JSON.readTree(r.body());
    }

    @Test
    void theConfiguredUrlIsTheIssuerWhateverTheHostHeaderSays() throws Exception {
        for (String path :
                new String[] {"/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"}) {
            JsonNode meta = get(configured, path, "evil.example");
            assertEquals(PUBLIC, meta.path("issuer").asText(), meta.toString());
            assertEquals(PUBLIC + "/oauth/token", meta.path("token_endpoint").asText());
            assertEquals(
                    PUBLIC + "/.well-known/jwks.json", meta.path("jwks_uri").asText());
            assertTrue(!meta.toString().contains("evil.example"), meta.toString());
        }
    }

    @Test
    void theIdTokenAndDeviceUrlsUseTheConfiguredUrl() throws Exception {
        AtriumServer.User u = configured.newUser("*");
        Http.Reply client = u.http()
                .post(
                        "/api/me/oauth/clients",
                        Map.of(
                                "client_name",
                                "device app",
                                "token_endpoint_auth_method",
                                "none",
                                "redirect_uris",
                                java.util.List.of("http://127.0.0.1:9/cb")));
        assertEquals(201, client.status(), client.body());
        String clientId = client.json().path("client").path("client_id").asText();
        java.net.URI base = java.net.URI.create(configured.base());
        RawHttp.Response r;
        byte[] form = ("client_id=" + clientId + "&scope=threads:read").getBytes(StandardCharsets.US_ASCII);
        try (java.net.Socket s = new java.net.Socket(base.getHost(), base.getPort())) {
            s.setSoTimeout(10_000);
            s.getOutputStream()
                    .write(("POST /oauth/device_authorization HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n"
                                    + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: "
                                    + form.length + "\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().write(form);
            r = RawHttp.read(s.getInputStream());
        }
        JsonNode device = Http.JSON.readTree(r.body());
        assertEquals(200, r.status(), device.toString());
        assertEquals(PUBLIC + "/oauth/device", device.path("verification_uri").asText());
    }

    @Test
    void cloneUrlsUseTheConfiguredUrl() throws Exception {
        AtriumServer.User u = configured.newUser("*");
        Http.Reply created = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/repos", Map.of("name", "published"));
        assertEquals(201, created.status(), created.body());
        String id = created.json().path("repository").path("id").asText();
        assertEquals(
                PUBLIC + "/git/" + u.username() + "/published.git",
                created.json().path("repository").path("clone_url").asText());
        JsonNode repo = get(
                configured,
                "/api/repos/" + id,
                "evil.example",
                "Authorization: Bearer " + u.http().token() + "\r\n");
        assertEquals(
                PUBLIC + "/git/" + u.username() + "/published.git",
                repo.path("repository").path("clone_url").asText(),
                repo.toString());
    }

    @Test
    void withoutAConfiguredUrlTheHostHeaderDecidesAndTheServerWarnedAtStart() throws Exception {
        JsonNode meta = get(shared, "/.well-known/openid-configuration", "somewhere.example:8443");
        assertEquals("http://somewhere.example:8443", meta.path("issuer").asText());
        assertTrue(shared.fullLog().contains("no public base URL is configured"), "the start-up warning is in the log");
        assertTrue(!configured.fullLog().contains("no public base URL is configured"));
    }
}
