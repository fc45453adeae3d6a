package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Who may still read a share: wrong passwords are limited per client address, for each share and over all shares
 * (429 with Retry-After), never for the share as a whole;
 * and a share dies with its workspace or its owner's suspension (404, as an unknown token).
 */
@SharedServer
class ThreadShareAccessTest {

    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    record Answer(int status, JsonNode json, Map<String, String> headers, String body) {
        String code() {
            return json.path("error").path("code").asText(null);
        }

        String header(String name) {
            return headers.get(name);
        }
    }

    /**
     * {@code POST …/access} from the loopback address {@code client} (127.x.y.z: Linux routes all of 127/8 to lo, so
     * the server sees that peer), optionally naming another client in X-Forwarded-For.
     */
    static Answer access(AtriumServer server, String token, String password, String client, String forwardedFor)
            throws Exception {
        Map<String, String> headers = new java.util.LinkedHashMap<>();
        headers.put("Content-Type", "application/json");
        if (forwardedFor != null) {
            headers.put("X-Forwarded-For", forwardedFor);
        }
        RawHttp.Response r = RawHttp.exchange(
                server.base(),
                client,
                "POST",
                "/api/public/thread-shares/" + token + "/access",
                headers,
                Http.JSON.writeValueAsBytes(Map.of("password", password)));
        String body = new String(r.body(), java.nio.charset.StandardCharsets.UTF_8);
        return new Answer(r.status(), Http.JSON.readTree(body), r.headers(), body);
    }

    static Answer access(AtriumServer server, String token, String password, String client) throws Exception {
        return access(server, token, password, client, null);
    }

    static String passwordShare(User u, String thread, String password) {
        Http.Reply r =
                u.http().post("/api/threads/" + thread + "/share", Map.of("mode", "password", "password", password));
        assertEquals(201, r.status(), r.body());
        return r.json().path("share").path("token").asText();
    }

    @Test
    void tenWrongPasswordsFromOneAddressRefuseThatAddressWhileTheRightfulReaderElsewhereStillGetsIn(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        String thread = ThreadsTest.thread(u, "Guarded");
        String token = passwordShare(u, thread, "correct horse battery");
        String other = passwordShare(u, thread, "another password");
        String guesser = "127.0.3.10";
        for (int i = 0; i < 10; i++) {
            Answer wrong = access(server, token, "guess " + i, guesser);
            assertEquals(401, wrong.status(), "attempt " + i + ": " + wrong.json());
        }
        Answer limited = access(server, token, "guess 10", guesser);
        assertEquals(429, limited.status(), limited.json().toString());
        assertEquals("RATE_LIMITED", limited.code());
        assertTrue(limited.json().path("error").path("message").isTextual());
        long retryAfter = Long.parseLong(limited.header("retry-after"));
        assertTrue(retryAfter > 800 && retryAfter <= 900, "Retry-After " + retryAfter);
        assertTrue(limited.header("content-type").startsWith("application/json"));
        assertEquals(
                429,
                access(server, token, "correct horse battery", guesser).status(),
                "the guesser is refused even when right");

        Answer reader = access(server, token, "correct horse battery", "127.0.3.11");
        assertEquals(200, reader.status(), "the share is not locked for its rightful reader: " + reader.json());
        assertEquals("Guarded", reader.json().path("thread").path("title").asText());
        Answer open = access(server, other, "another password", "127.0.3.12");
        assertEquals(200, open.status(), open.json().toString());
    }

    @Test
    void xForwardedForIsNotTrustedByDefaultSoAGuesserCannotNameANewAddressPerGuess(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        String thread = ThreadsTest.thread(u, "Spoofed");
        String[] shares = {
            passwordShare(u, thread, "first secret"),
            passwordShare(u, thread, "second secret"),
            passwordShare(u, thread, "third secret")
        };
        String guesser = "127.0.3.20";
        for (int i = 0; i < 20; i++) {
            Answer wrong = access(server, shares[i % 3], "guess " + i, guesser, "198.51.100." + i);
            assertEquals(401, wrong.status(), "attempt " + i + ": " + wrong.json());
        }
        Answer limited = access(server, shares[2], "guess 20", guesser, "198.51.100.99");
        assertEquals(
                429,
                limited.status(),
                "20 failures from one peer, whatever it claims in X-Forwarded-For: " + limited.json());
    }

    @Test
    void oneClientAddressIsLimitedOverAllSharesAndARightPasswordDoesNotCount(AtriumServer server) throws Exception {
        User u = server.newUser();
        String thread = ThreadsTest.thread(u, "Sprayed");
        String client = "127.0.3.30";
        String first = passwordShare(u, thread, "first password");
        String second = passwordShare(u, thread, "second password");
        String third = passwordShare(u, thread, "third password");
        for (int i = 0; i < 5; i++) {
            assertEquals(
                    200, access(server, first, "first password", client).status(), "right passwords are not failures");
        }
        for (int i = 0; i < 10; i++) {
            assertEquals(401, access(server, first, "wrong " + i, client).status());
            assertEquals(401, access(server, second, "wrong " + i, client).status());
        }
        Answer limited = access(server, third, "third password", client);
        assertEquals(429, limited.status(), "20 failures from one address: " + limited.json());
        assertEquals("RATE_LIMITED", limited.code());
        assertTrue(limited.header("retry-after") != null);
        assertEquals(
                200, access(server, third, "third password", "127.0.3.31").status(), "another client is not limited");
    }

    @Test
    void aShareOfADeletedWorkspaceIsNotFoundLikeAnUnknownToken(AtriumServer server) throws Exception {
        User u = server.newUser();
        Http.Reply space = u.http().post("/api/spaces", Map.of("name", "Short-lived"));
        assertEquals(201, space.status(), space.body());
        String spaceId = space.json().path("space").path("id").asText();
        Http.Reply created = u.http().post("/api/spaces/" + spaceId + "/threads", Map.of("title", "Soon gone"));
        assertEquals(201, created.status(), created.body());
        String thread = created.json().path("thread").path("id").asText();
        String open = u.http()
                .post("/api/threads/" + thread + "/share", Map.of())
                .json()
                .path("share")
                .path("token")
                .asText();
        String locked = passwordShare(u, thread, "correct horse battery");
        Http anon = server.anonymous();
        assertEquals(200, anon.get("/api/public/thread-shares/" + open).status());
        assertEquals(
                200,
                access(server, locked, "correct horse battery", "127.0.3.60").status());

        assertEquals(200, u.http().delete("/api/spaces/" + spaceId).status());
        Http.Reply unknown = anon.get("/api/public/thread-shares/ats_" + "x".repeat(32));
        assertEquals(404, unknown.status());
        Http.Reply view = anon.get("/api/public/thread-shares/" + open);
        assertEquals(404, view.status());
        assertEquals(unknown.body(), view.body());
        assertEquals(
                unknown.body(),
                anon.post("/api/public/thread-shares/" + open + "/access", Map.of())
                        .body());
        Answer access = access(server, locked, "correct horse battery", "127.0.3.60");
        assertEquals(404, access.status());
        assertEquals(unknown.body(), access.body());
        assertEquals(
                unknown.body(),
                anon.get("/api/public/thread-shares/" + locked).body(),
                "a password share of a deleted workspace does not even ask for its password");
    }

    @Test
    void aShareOfASuspendedOwnerIsNotFoundUntilTheOwnerIsActiveAgain(AtriumServer server) throws Exception {
        User u = server.newUser();
        String thread = ThreadsTest.thread(u, "Owner on hold");
        assertEquals(
                201,
                u.http()
                        .post("/api/threads/" + thread + "/messages", Map.of("content", "still here"))
                        .status());
        String open = u.http()
                .post("/api/threads/" + thread + "/share", Map.of())
                .json()
                .path("share")
                .path("token")
                .asText();
        String locked = passwordShare(u, thread, "correct horse battery");
        Http anon = server.anonymous();
        Http.Reply unknown = anon.get("/api/public/thread-shares/ats_" + "y".repeat(32));

        assertEquals(
                200,
                server.operator()
                        .post("/admin/users/" + u.username() + "/suspend", Map.of())
                        .status());
        Http.Reply view = anon.get("/api/public/thread-shares/" + open);
        assertEquals(404, view.status());
        assertEquals(unknown.body(), view.body());
        Answer access = access(server, locked, "correct horse battery", "127.0.3.61");
        assertEquals(404, access.status());
        assertEquals(unknown.body(), access.body());

        assertEquals(
                200,
                server.operator()
                        .post("/admin/users/" + u.username() + "/activate", Map.of())
                        .status());
        JsonNode back = anon.get("/api/public/thread-shares/" + open).json();
        assertEquals("still here", back.path("messages").get(0).path("content").asText());
        assertEquals(
                200,
                access(server, locked, "correct horse battery", "127.0.3.61").status());
    }
}
