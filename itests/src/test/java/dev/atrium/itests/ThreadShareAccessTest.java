package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.fasterxml.jackson.databind.JsonNode;

import dev.atrium.itests.AtriumServer.User;

/**
 * Who may still read a share: wrong passwords are limited per share and per client address (429 with Retry-After),
 * and a share dies with its workspace or its owner's suspension (404, as an unknown token).
 */
@ExtendWith(AtriumServer.Extension.class)
class ThreadShareAccessTest {

    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    record Answer(int status, JsonNode json, HttpResponse<String> raw) {
        String code() {
            return json.path("error").path("code").asText(null);
        }
    }

    /** {@code POST …/access} as a client the reverse proxy names {@code client} (its X-Forwarded-For entry). */
    static Answer access(AtriumServer server, String token, String password, String client) throws Exception {
        HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(URI.create(server.base() + "/api/public/thread-shares/" + token + "/access"))
                .header("Content-Type", "application/json").header("X-Forwarded-For", "192.0.2.200, " + client)
                .POST(HttpRequest.BodyPublishers.ofString(Http.JSON.writeValueAsString(Map.of("password", password)))).build(),
                HttpResponse.BodyHandlers.ofString());
        return new Answer(r.statusCode(), Http.JSON.readTree(r.body()), r);
    }

    static String passwordShare(User u, String thread, String password) {
        Http.Reply r = u.http().post("/api/threads/" + thread + "/share", Map.of("mode", "password", "password", password));
        assertEquals(201, r.status(), r.body());
        return r.json().path("share").path("token").asText();
    }

    @Test
    void tenWrongPasswordsLockAShareFor15MinutesWith429AndRetryAfterWhileOtherSharesStayOpen(AtriumServer server) throws Exception {
        User u = server.newUser();
        String thread = ThreadsTest.thread(u, "Guarded");
        String token = passwordShare(u, thread, "correct horse battery");
        String other = passwordShare(u, thread, "another password");
        // a fresh address per attempt: only the share's own count can stop them
        for (int i = 0; i < 10; i++) {
            Answer wrong = access(server, token, "guess " + i, "198.51.100." + (10 + i));
            assertEquals(401, wrong.status(), "attempt " + i + ": " + wrong.json());
        }
        Answer limited = access(server, token, "guess 10", "198.51.100.30");
        assertEquals(429, limited.status(), limited.json().toString());
        assertEquals("RATE_LIMITED", limited.code());
        assertTrue(limited.json().path("error").path("message").isTextual());
        long retryAfter = Long.parseLong(limited.raw().headers().firstValue("Retry-After").orElseThrow());
        assertTrue(retryAfter > 800 && retryAfter <= 900, "Retry-After " + retryAfter);
        assertTrue(limited.raw().headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        assertEquals(429, access(server, token, "correct horse battery", "198.51.100.31").status(), "locked for the right password too");

        Answer open = access(server, other, "another password", "198.51.100.32");
        assertEquals(200, open.status(), open.json().toString());
        assertEquals("Guarded", open.json().path("thread").path("title").asText());
    }

    @Test
    void oneClientAddressIsLimitedOverAllSharesAndARightPasswordDoesNotCount(AtriumServer server) throws Exception {
        User u = server.newUser();
        String thread = ThreadsTest.thread(u, "Sprayed");
        String client = "203.0.113.77";
        String first = passwordShare(u, thread, "first password");
        String second = passwordShare(u, thread, "second password");
        String third = passwordShare(u, thread, "third password");
        for (int i = 0; i < 5; i++) {
            assertEquals(200, access(server, first, "first password", client).status(), "right passwords are not failures");
        }
        for (int i = 0; i < 10; i++) {
            assertEquals(401, access(server, first, "wrong " + i, client).status());
            assertEquals(401, access(server, second, "wrong " + i, client).status());
        }
        Answer limited = access(server, third, "third password", client);
        assertEquals(429, limited.status(), "20 failures from one address: " + limited.json());
        assertEquals("RATE_LIMITED", limited.code());
        assertTrue(limited.raw().headers().firstValue("Retry-After").isPresent());
        assertEquals(200, access(server, third, "third password", "203.0.113.78").status(), "another client is not limited");
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
        String open = u.http().post("/api/threads/" + thread + "/share", Map.of()).json().path("share").path("token").asText();
        String locked = passwordShare(u, thread, "correct horse battery");
        Http anon = server.anonymous();
        assertEquals(200, anon.get("/api/public/thread-shares/" + open).status());
        assertEquals(200, access(server, locked, "correct horse battery", "198.51.100.60").status());

        assertEquals(200, u.http().delete("/api/spaces/" + spaceId).status());
        Http.Reply unknown = anon.get("/api/public/thread-shares/ats_" + "x".repeat(32));
        assertEquals(404, unknown.status());
        Http.Reply view = anon.get("/api/public/thread-shares/" + open);
        assertEquals(404, view.status());
        assertEquals(unknown.body(), view.body());
        assertEquals(unknown.body(), anon.post("/api/public/thread-shares/" + open + "/access", Map.of()).body());
        Answer access = access(server, locked, "correct horse battery", "198.51.100.60");
        assertEquals(404, access.status());
        assertEquals(unknown.body(), access.raw().body());
        assertEquals(unknown.body(), anon.get("/api/public/thread-shares/" + locked).body(),
                "a password share of a deleted workspace does not even ask for its password");
    }

    @Test
    void aShareOfASuspendedOwnerIsNotFoundUntilTheOwnerIsActiveAgain(AtriumServer server) throws Exception {
        User u = server.newUser();
        String thread = ThreadsTest.thread(u, "Owner on hold");
        assertEquals(201, u.http().post("/api/threads/" + thread + "/messages", Map.of("content", "still here")).status());
        String open = u.http().post("/api/threads/" + thread + "/share", Map.of()).json().path("share").path("token").asText();
        String locked = passwordShare(u, thread, "correct horse battery");
        Http anon = server.anonymous();
        Http.Reply unknown = anon.get("/api/public/thread-shares/ats_" + "y".repeat(32));

        assertEquals(200, server.operator().post("/admin/users/" + u.username() + "/suspend", Map.of()).status());
        Http.Reply view = anon.get("/api/public/thread-shares/" + open);
        assertEquals(404, view.status());
        assertEquals(unknown.body(), view.body());
        Answer access = access(server, locked, "correct horse battery", "198.51.100.61");
        assertEquals(404, access.status());
        assertEquals(unknown.body(), access.raw().body());

        assertEquals(200, server.operator().post("/admin/users/" + u.username() + "/activate", Map.of()).status());
        JsonNode back = anon.get("/api/public/thread-shares/" + open).json();
        assertEquals("still here", back.path("messages").get(0).path("content").asText());
        assertEquals(200, access(server, locked, "correct horse battery", "198.51.100.61").status());
    }
}
