package dev.atrium.itests;

import static dev.atrium.itests.BadInputTest.assertSpecError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The kernel's envelope checks every text body under /api, /admin, /oauth and /auth once for all routes: strict
 * UTF-8, no NUL, no lone surrogate (escaped in JSON too), only UTF-8 as charset, and the body limit whatever the
 * Content-Type. Answers are the spec's error body, or OAuth's under /oauth.
 */
@SharedServer
class BodyEncodingTest {

    private final AtriumServer server;

    BodyEncodingTest(AtriumServer server) {
        this.server = server;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static void assertOAuthError(Http.Reply r, int status, String error) {
        assertEquals(status, r.status(), r.body());
        assertTrue(r.json() != null && error.equals(r.json().path("error").asText()), r.body());
        assertTrue(r.json().path("error_description").isTextual(), r.body());
        assertTrue(r.raw().headers().firstValue("Content-Type").orElse("").startsWith("application/json"), r.body());
    }

    @Test
    void aNulInAnyJsonTextFieldIsABadRequestNamingTheField() {
        AtriumServer.User u = server.newUser("*");
        String space = "/api/spaces/" + u.defaultSpaceId();
        assertSpecError(
                u.http().send("POST", "/api/spaces", "{\"name\":\"a\\u0000b\"}", "application/json"),
                400,
                "BAD_REQUEST");
        assertSpecError(
                u.http().send("PATCH", space, "{\"name\":\"a\\u0000b\"}", "application/json"), 400, "BAD_REQUEST");
        assertSpecError(
                u.http().send("PUT", space + "/common-env", "{\"vars\":{\"A\\u0000\":\"x\"}}", "application/json"),
                400,
                "BAD_REQUEST");
        assertSpecError(
                u.http().send("PATCH", space + "/model", "{\"model\":\"m\\u0000\"}", "application/json"),
                400,
                "BAD_REQUEST");
        assertSpecError(
                u.http()
                        .send(
                                "POST",
                                "/api/me/personal-access-tokens",
                                "{\"name\":\"laptop\\u0000\"}",
                                "application/json"),
                400,
                "BAD_REQUEST");
        assertSpecError(
                u.http().send("PATCH", "/api/me/settings", "{\"display_name\":\"x\\u0000\"}", "application/json"),
                400,
                "BAD_REQUEST");
        assertSpecError(
                u.http()
                        .send(
                                "POST",
                                "/api/me/oauth/clients",
                                "{\"client_name\":\"x\\u0000\",\"redirect_uris\":[\"https://a.example/cb\"]}",
                                "application/json"),
                400,
                "BAD_REQUEST");
        Http.Reply raw = u.http().send("POST", "/api/spaces", utf8("{\"name\":\"a\0b\"}"), "application/json");
        assertSpecError(raw, 400, "BAD_REQUEST");
        assertTrue(raw.json().path("error").path("message").asText().contains("NUL"), raw.body());
        // a NUL in a field name, in a nested array, in a form-encoded body
        assertSpecError(
                u.http().send("POST", "/api/spaces", "{\"na\\u0000me\":\"x\"}", "application/json"),
                400,
                "BAD_REQUEST");
        assertSpecError(
                u.http().send("POST", "/api/spaces", "{\"name\":\"x\",\"tags\":[[\"\\u0000\"]]}", "application/json"),
                400,
                "BAD_REQUEST");
    }

    @Test
    void loneSurrogatesAndMalformedUtf8AreRefused() {
        AtriumServer.User u = server.newUser("*");
        Http.Reply escaped = u.http().send("POST", "/api/spaces", "{\"name\":\"a\\ud800b\"}", "application/json");
        assertSpecError(escaped, 400, "BAD_REQUEST");
        assertTrue(escaped.json().path("error").path("message").asText().contains("surrogate"), escaped.body());
        assertSpecError(
                u.http().send("POST", "/api/spaces", "{\"name\":\"a\\udc00\"}", "application/json"),
                400,
                "BAD_REQUEST");
        // a pair written as two escapes is one character: fine
        Http.Reply pair = u.http().send("POST", "/api/spaces", "{\"name\":\"ok \\ud83d\\ude00\"}", "application/json");
        assertEquals(201, pair.status(), pair.body());
        byte[] latin1 = "{\"name\":\"caf\u00e9\"}".getBytes(StandardCharsets.ISO_8859_1);
        Http.Reply bad = u.http().send("POST", "/api/spaces", latin1, "application/json");
        assertSpecError(bad, 400, "BAD_REQUEST");
        assertTrue(bad.json().path("error").path("message").asText().contains("UTF-8"), bad.body());
        // CESU-8 (an encoded surrogate) and an overlong NUL are not UTF-8 either
        assertSpecError(
                u.http()
                        .send(
                                "POST",
                                "/api/spaces",
                                new byte[] {
                                    '{',
                                    '"',
                                    'n',
                                    'a',
                                    'm',
                                    'e',
                                    '"',
                                    ':',
                                    '"',
                                    (byte) 0xed,
                                    (byte) 0xa0,
                                    (byte) 0x80,
                                    '"',
                                    '}'
                                },
                                "application/json"),
                400,
                "BAD_REQUEST");
        assertSpecError(
                u.http()
                        .send(
                                "POST",
                                "/api/spaces",
                                new byte[] {
                                    '{', '"', 'n', 'a', 'm', 'e', '"', ':', '"', (byte) 0xc0, (byte) 0x80, '"', '}'
                                },
                                "application/json"),
                400,
                "BAD_REQUEST");
    }

    @Test
    void aCharsetOtherThanUtf8IsUnsupportedMediaTypeAsJsonNotAnHtml500() {
        AtriumServer.User u = server.newUser("*");
        for (String type : new String[] {
            "application/json; charset=bogus",
            "application/json;charset=\"x-unknown\"",
            "application/json; charset=iso-8859-1",
            "text/plain; charset=utf-16"
        }) {
            Http.Reply r = u.http().send("POST", "/api/spaces", "{\"name\":\"x\"}", type);
            assertSpecError(r, 415, "UNSUPPORTED_MEDIA_TYPE");
            assertFalse(r.body().contains("Exception"), r.body());
        }
        Http.Reply utf8 =
                u.http().send("POST", "/api/spaces", "{\"name\":\"charset ok\"}", "application/json; charset=UTF-8");
        assertEquals(201, utf8.status(), utf8.body());
        assertOAuthError(
                server.anonymous()
                        .send(
                                "POST",
                                "/oauth/token",
                                "grant_type=client_credentials",
                                "application/x-www-form-urlencoded; charset=bogus"),
                415,
                "invalid_request");
        assertOAuthError(
                server.anonymous()
                        .send("POST", "/oauth/register", "{\"client_name\":\"x\"}", "application/json; charset=bogus"),
                415,
                "invalid_request");
        assertSpecError(
                server.anonymous()
                        .send(
                                "POST",
                                "/auth/login/local",
                                "username=a&password=b",
                                "application/x-www-form-urlencoded; charset=bogus"),
                415,
                "UNSUPPORTED_MEDIA_TYPE");
    }

    @Test
    void oauthEndpointsRefuseNulInOAuthsOwnErrorFormat() {
        Http anonymous = server.anonymous();
        assertOAuthError(
                anonymous.send(
                        "POST",
                        "/oauth/register",
                        "{\"client_name\":\"evil\\u0000\",\"redirect_uris\":[\"https://a.example/cb\"]}",
                        "application/json"),
                400,
                "invalid_request");
        assertOAuthError(
                anonymous.send(
                        "POST",
                        "/oauth/register",
                        "{\"client_name\":\"x\",\"redirect_uris\":[\"https://a.example/\\ud800\"]}",
                        "application/json"),
                400,
                "invalid_request");
        assertOAuthError(
                anonymous.send(
                        "POST",
                        "/oauth/token",
                        "grant_type=client_credentials&client_id=a%00b",
                        "application/x-www-form-urlencoded"),
                400,
                "invalid_request");
        assertOAuthError(
                anonymous.send(
                        "POST",
                        "/oauth/token",
                        "grant_type=client_credentials&client_id=%C3%28",
                        "application/x-www-form-urlencoded"),
                400,
                "invalid_request");
        assertOAuthError(
                anonymous.send("POST", "/oauth/token", "grant_type=%zz", "application/x-www-form-urlencoded"),
                400,
                "invalid_request");
    }

    @Test
    void theBodyLimitHoldsWhateverTheContentType() {
        AtriumServer.User u = server.newUser("*");
        byte[] big = new byte[(1 << 20) + 10];
        Arrays.fill(big, (byte) 'a');
        for (String type :
                new String[] {"text/plain", "application/octet-stream", "application/x-anything", "application/json"}) {
            Http.Reply fork = u.http().send("POST", "/api/repos/rep_missing/fork", big, type);
            assertSpecError(fork, 413, "PAYLOAD_TOO_LARGE");
            Http.Reply init = u.http().send("POST", "/api/spaces/" + u.defaultSpaceId() + "/init-repo", big, type);
            assertSpecError(init, 413, "PAYLOAD_TOO_LARGE");
        }
        assertOAuthError(server.anonymous().send("POST", "/oauth/register", big, "text/plain"), 413, "invalid_request");
        assertOAuthError(
                server.anonymous().send("POST", "/oauth/register", big, "application/octet-stream"),
                413,
                "invalid_request");
    }

    @Test
    void routesThatDeclareALargerLimitTakeLargerUploads() {
        AtriumServer.User u = server.newUser("*");
        Http.Reply repo =
                u.http().post("/api/spaces/" + u.defaultSpaceId() + "/repos", java.util.Map.of("name", "big-upload"));
        assertEquals(201, repo.status(), repo.body());
        String id = repo.json().path("repository").path("id").asText();
        byte[] big = new byte[3 << 20];
        Arrays.fill(big, (byte) 'x');
        byte[] head = utf8("# v2 git bundle\n");
        System.arraycopy(head, 0, big, 0, head.length);
        Http.Reply imported = u.http().send("POST", "/api/repos/" + id + "/import", big, "application/x-git-bundle");
        assertNotEquals(413, imported.status(), imported.body());
        assertTrue(imported.status() < 500, imported.body());
        Http.Reply update = server.operator()
                .send("POST", "/admin/bundles/dev.atrium.nosuchbundle/update", big, "application/java-archive");
        assertNotEquals(413, update.status(), update.body());
        assertTrue(update.status() < 500, update.body());
    }

    /**
     * A refusal made before the body is read (a bad charset, a bad request target) says {@code Connection: close}:
     * Jetty closes a connection whose request body was left unread, and a client reusing it would send its next
     * request into nothing.
     */
    @Test
    void aRefusalBeforeTheBodyIsReadSaysTheConnectionCloses() throws Exception {
        String token = server.newUser().http().token();
        for (String head : new String[] {
            "POST /api/spaces HTTP/1.1\r\nContent-Type: application/json; charset=bogus\r\n",
            "POST /api/spa%2fces HTTP/1.1\r\nContent-Type: application/json\r\n"
        }) {
            byte[] request = (head + "Host: 127.0.0.1\r\nAuthorization: Bearer " + token
                            + "\r\nContent-Length: 13\r\n\r\n{\"name\":\"x\"}")
                    .getBytes(StandardCharsets.ISO_8859_1);
            RawHttp.Response r = UriRejectionTest.send(server, request);
            assertTrue(r.status() == 415 || r.status() == 400, head + " -> " + r.status());
            assertEquals(
                    "close",
                    String.valueOf(r.header("connection")).toLowerCase(java.util.Locale.ROOT),
                    head + " -> " + r.headers());
        }
    }
}
