package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.atrium.itests.AtriumServer.User;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Custom domains are verified against peers the test controls on loopback: a DNS server (the services' configured
 * resolver, {@code ATRIUM_SERVICES_DNS_RESOLVER}) answering TXT records the test sets and A 127.0.0.1 for every name,
 * and an HTTP server (on {@code ATRIUM_SERVICES_CHALLENGE_HTTP_PORT}) serving the challenge tokens the test sets. A
 * verified domain routes to its service when a worker provider is installed.
 */
class ServiceDomainsTest {

    private static AtriumServer server;
    private static TestDns dns;
    private static HttpServer http;
    private static final Map<String, String> CHALLENGES = new ConcurrentHashMap<>();

    @BeforeAll
    static void launch() throws Exception {
        dns = new TestDns();
        http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/.well-known/atrium-challenge/", exchange -> {
            String token = exchange.getRequestURI().getPath().replaceFirst(".*/", "");
            String host = exchange.getRequestHeaders().getFirst("Host").replaceFirst(":\\d+$", "");
            String answer = CHALLENGES.get(host);
            byte[] body =
                    (answer == null ? "no" : answer.equals(token) ? token : "wrong").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(answer == null ? 404 : 200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        http.start();
        server = AtriumServer.launch(
                Files.createTempDirectory("atrium-domains-"),
                TestDatabase.create(),
                Map.of(
                        "ATRIUM_SERVICES_DNS_RESOLVER", "127.0.0.1:" + dns.port(),
                        "ATRIUM_SERVICES_CHALLENGE_HTTP_PORT",
                                "" + http.getAddress().getPort()));
    }

    @AfterAll
    static void stop() throws Throwable {
        if (server != null) {
            server.close();
        }
        if (http != null) {
            http.stop(0);
        }
        if (dns != null) {
            dns.close();
        }
    }

    @Test
    void aDomainIsVerifiedByItsDnsTxtRecordOrItsHttpChallengeAndThenRoutesToItsService() throws Exception {
        User u = server.newUser();
        String id = ServicesTest.createService(u, ServicesTest.unique("domains"));
        String base = "/api/services/" + id + "/custom-domains";

        // DNS: not verified until the TXT record holds the token
        JsonNode d1 = u.http().post(base, Map.of("domain", "shop.example.test")).get("domain");
        String v1 = base + "/" + d1.get("id").asText() + "/verify";
        Http.Reply notYet = u.http().post(v1, Map.of("method", "dns"));
        assertEquals(200, notYet.status(), notYet.body());
        assertFalse(notYet.get("verified").asBoolean());
        assertEquals("pending", notYet.get("domain").get("status").asText());
        assertTrue(notYet.get("detail").asText().contains("TXT"), notYet.body());
        dns.txt.put("_atrium-challenge.shop.example.test", "atrium-verification=wrong-token");
        assertFalse(u.http().post(v1, Map.of("method", "dns")).get("verified").asBoolean());
        dns.txt.put(
                "_atrium-challenge.shop.example.test",
                d1.get("verification").get("dns").get("value").asText());
        Http.Reply verified = u.http().post(v1, Map.of("method", "dns"));
        assertTrue(verified.get("verified").asBoolean(), verified.body());
        assertEquals("verified", verified.get("domain").get("status").asText());
        assertEquals("dns", verified.get("domain").get("verified_by").asText());

        // a pending claim of another Principal did not block it, and cannot take it now
        User squatter = server.newUser();
        String theirs = ServicesTest.createService(squatter, ServicesTest.unique("squat"));
        Http.Reply claim = squatter.http()
                .post("/api/services/" + theirs + "/custom-domains", Map.of("domain", "shop.example.test"));
        assertEquals(201, claim.status(), claim.body());
        Http.Reply taken = squatter.http()
                .post(
                        "/api/services/" + theirs + "/custom-domains/"
                                + claim.get("domain").get("id").asText() + "/verify",
                        Map.of("method", "dns"));
        assertEquals(409, taken.status(), taken.body());

        // HTTP: the challenge URL at the domain (its A record from the configured resolver, the address approved by the
        // guard)
        JsonNode d2 = u.http().post(base, Map.of("domain", "www.example.test")).get("domain");
        String v2 = base + "/" + d2.get("id").asText() + "/verify";
        assertFalse(u.http().post(v2, Map.of("method", "http")).get("verified").asBoolean());
        CHALLENGES.put("www.example.test", "not-the-token");
        assertFalse(u.http().post(v2, Map.of("method", "http")).get("verified").asBoolean());
        CHALLENGES.put(
                "www.example.test",
                d2.get("verification").get("http").get("body").asText());
        Http.Reply byHttp = u.http().post(v2, null);
        assertTrue(byHttp.get("verified").asBoolean(), byHttp.body());
        assertEquals("http", byHttp.get("domain").get("verified_by").asText());

        // no certificate until one is ordered (ServiceCertificatesTest orders them from pebble)
        assertEquals("none", byHttp.get("domain").get("ssl").get("status").asText());

        // with a worker provider, the verified domain reaches the service; an unverified one stays the API's
        JsonNode d3 =
                u.http().post(base, Map.of("domain", "pending.example.test")).get("domain");
        assertEquals("pending", d3.get("status").asText());
        // an API route any caller may read: /healthz would answer 503 while another test's change settles
        RawHttp.Response pendingHealth = HostHttp.get(server.port, "pending.example.test", "/api/openapi.json");
        assertEquals(200, pendingHealth.status(), HostHttp.text(pendingHealth));
        if (ServicesWorkerdTest.workerdPresent(server)) {
            Http.Reply deployed = u.http()
                    .post("/api/services/" + id + "/deployments", Map.of("bundle", ServicesWorkerdTest.code("domain")));
            assertEquals(201, deployed.status(), deployed.body());
            assertEquals("version domain", HostHttp.text(HostHttp.get(server.port, "shop.example.test", "/")));
            assertEquals(
                    "version domain",
                    HostHttp.text(HostHttp.get(server.port, "WWW.example.test.:" + server.port, "/")));
            assertEquals(
                    200,
                    HostHttp.get(server.port, "pending.example.test", "/api/openapi.json")
                            .status(),
                    "an unverified domain stays the API's");
            // a removed domain no longer routes
            assertEquals(
                    200, u.http().delete(base + "/" + d1.get("id").asText()).status());
            assertEquals(
                    200,
                    HostHttp.get(server.port, "shop.example.test", "/api/openapi.json")
                            .status());
        }
    }
}
