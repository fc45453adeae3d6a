package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Unauthenticated dynamic client registration (RFC 7591) is bounded: the body, the number and length of every
 * field, and the rate per client address. Each test speaks from its own loopback address so their counts and the
 * other tests' (from 127.0.0.1) stay apart.
 */
@SharedServer
class OAuthRegistrationLimitsTest {

    private final AtriumServer server;

    OAuthRegistrationLimitsTest(AtriumServer server) {
        this.server = server;
    }

    private RawHttp.Response register(String from, Object metadata) throws Exception {
        byte[] body = metadata instanceof byte[] b ? b : Http.JSON.writeValueAsBytes(metadata);
        return RawHttp.exchange(
                server.base(), from, "POST", "/oauth/register", Map.of("Content-Type", "application/json"), body);
    }

    private static JsonNode json(RawHttp.Response r) throws Exception {
        return Http.JSON.readTree(new String(r.body(), StandardCharsets.UTF_8));
    }

    private static Map<String, Object> client(List<String> redirects) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("client_name", "limits");
        m.put("redirect_uris", redirects);
        m.put("token_endpoint_auth_method", "none");
        return m;
    }

    @Test
    void moreThanTwentyRedirectUrisIsInvalidRedirectUri() throws Exception {
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 21; i++) {
            many.add("https://app.example/cb/" + i);
        }
        RawHttp.Response r = register("127.0.0.21", client(many));
        assertEquals(400, r.status(), new String(r.body()));
        assertEquals("invalid_redirect_uri", json(r).path("error").asText());
        assertEquals(201, register("127.0.0.21", client(many.subList(0, 20))).status());
    }

    @Test
    void hundredThousandRedirectUrisAreRefusedWithoutBeingStored() throws Exception {
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            many.add("https://a.example/" + i);
        }
        RawHttp.Response r = register("127.0.0.22", client(many));
        assertTrue(r.status() == 413 || r.status() == 400, r.status() + " " + new String(r.body()));
        String error = json(r).path("error").asText();
        assertTrue(
                error.equals("invalid_request")
                        || error.equals("invalid_client_metadata")
                        || error.equals("invalid_redirect_uri"),
                error);
    }

    @Test
    void overlongFieldsAreInvalidClientMetadata() throws Exception {
        Map<String, Object> longName = client(List.of("https://app.example/cb"));
        longName.put("client_name", "n".repeat(201));
        assertEquals(
                "invalid_client_metadata",
                json(register("127.0.0.23", longName)).path("error").asText());
        Map<String, Object> longUri = client(List.of("https://app.example/cb"));
        longUri.put("client_uri", "https://app.example/" + "x".repeat(2000));
        assertEquals(
                "invalid_client_metadata",
                json(register("127.0.0.23", longUri)).path("error").asText());
        RawHttp.Response longRedirect =
                register("127.0.0.23", client(List.of("https://app.example/" + "x".repeat(2000))));
        assertEquals("invalid_redirect_uri", json(longRedirect).path("error").asText());
        Map<String, Object> longScope = client(List.of("https://app.example/cb"));
        longScope.put("scope", "openid ".repeat(200));
        assertEquals(
                "invalid_client_metadata",
                json(register("127.0.0.23", longScope)).path("error").asText());
        Map<String, Object> padded = client(List.of("https://app.example/cb"));
        padded.put("software_statement_padding", "p".repeat(100_000));
        RawHttp.Response big = register("127.0.0.23", padded);
        assertEquals(400, big.status());
        assertEquals("invalid_client_metadata", json(big).path("error").asText());
    }

    @Test
    void oneAddressGetsTwentyRegistrationsAnHourThen429WhileOthersStillRegister() throws Exception {
        Map<String, Object> ok = client(List.of("https://app.example/cb"));
        for (int i = 0; i < 20; i++) {
            assertEquals(201, register("127.0.0.24", ok).status(), "registration " + i);
        }
        RawHttp.Response refused = register("127.0.0.24", ok);
        assertEquals(429, refused.status(), new String(refused.body()));
        assertEquals("temporarily_unavailable", json(refused).path("error").asText());
        assertNotNull(refused.header("retry-after"));
        assertTrue(Long.parseLong(refused.header("retry-after")) > 0);
        assertEquals(201, register("127.0.0.25", ok).status(), "another address is not affected");
    }
}
