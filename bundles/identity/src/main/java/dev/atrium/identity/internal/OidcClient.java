package dev.atrium.identity.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Digests;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The relying-party side of OpenID Connect: discovery, the authorization request with PKCE and nonce, the code
 * exchange, and ID token validation (signature by the provider's JWKS, issuer, audience, expiry, nonce).
 */
final class OidcClient {

    /** Why a login was refused. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    record Provider(String name, String issuer, String clientId, String clientSecret, String scopes) {}

    private static final Duration CACHE = Duration.ofMinutes(10);
    private static final long SKEW = 120;

    private final HttpClient http = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(5))
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
    private final Map<String, Cached> discovery = new ConcurrentHashMap<>();
    private final Map<String, Cached> jwks = new ConcurrentHashMap<>();

    private record Cached(JsonNode value, Instant at) {}

    JsonNode discover(String issuer) throws Refused {
        Cached c = discovery.get(issuer);
        if (c != null && c.at().plus(CACHE).isAfter(Instant.now())) {
            return c.value();
        }
        JsonNode doc = get(issuer.replaceAll("/+$", "") + "/.well-known/openid-configuration");
        if (!issuer.replaceAll("/+$", "").equals(doc.path("issuer").asText().replaceAll("/+$", ""))) {
            throw new Refused("the provider's discovery document names another issuer");
        }
        discovery.put(issuer, new Cached(doc, Instant.now()));
        return doc;
    }

    String authorizationUrl(Provider p, String redirectUri, String state, String nonce, String verifier)
            throws Refused {
        JsonNode doc = discover(p.issuer());
        String endpoint = doc.path("authorization_endpoint").asText(null);
        if (endpoint == null) {
            throw new Refused("the provider has no authorization_endpoint");
        }
        String challenge = Digests.sha256Base64Url(verifier);
        return Util.withQuery(
                endpoint,
                "response_type",
                "code",
                "client_id",
                p.clientId(),
                "redirect_uri",
                redirectUri,
                "scope",
                p.scopes(),
                "state",
                state,
                "nonce",
                nonce,
                "code_challenge",
                challenge,
                "code_challenge_method",
                "S256");
    }

    /** Exchanges the code and returns the validated ID token's claims. */
    JsonNode exchange(Provider p, String code, String redirectUri, String verifier, String nonce) throws Refused {
        JsonNode doc = discover(p.issuer());
        String tokenEndpoint = doc.path("token_endpoint").asText(null);
        if (tokenEndpoint == null) {
            throw new Refused("the provider has no token_endpoint");
        }
        String form = "grant_type=authorization_code&code=" + Util.enc(code) + "&redirect_uri=" + Util.enc(redirectUri)
                + "&code_verifier=" + Util.enc(verifier);
        HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(tokenEndpoint))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .header("Accept", "application/json");
        if (p.clientSecret() != null && !p.clientSecret().isEmpty()) {
            rb.header(
                    "Authorization",
                    "Basic "
                            + Base64.getEncoder()
                                    .encodeToString((Util.enc(p.clientId()) + ":" + Util.enc(p.clientSecret()))
                                            .getBytes(StandardCharsets.UTF_8)));
        } else {
            form += "&client_id=" + Util.enc(p.clientId());
        }
        JsonNode tokens;
        try {
            HttpResponse<String> r = http.send(
                    rb.POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
            tokens = Jwt.JSON.readTree(r.body());
            if (r.statusCode() != 200) {
                throw new Refused(
                        "the provider refused the code: " + tokens.path("error").asText("HTTP " + r.statusCode()));
            }
        } catch (IOException e) {
            throw new Refused("the provider's token endpoint failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Refused("interrupted");
        }
        String idToken = tokens.path("id_token").asText(null);
        if (idToken == null) {
            throw new Refused("the provider sent no ID token");
        }
        return validate(p, doc, idToken, nonce);
    }

    JsonNode validate(Provider p, JsonNode doc, String idToken, String nonce) throws Refused {
        Jwt jwt;
        try {
            jwt = Jwt.parse(idToken);
        } catch (IllegalArgumentException e) {
            throw new Refused("the ID token is malformed");
        }
        if (!jwt.alg().matches("RS256|RS384|RS512|ES256")) {
            throw new Refused("the ID token's algorithm " + jwt.alg() + " is not accepted");
        }
        String jwksUri = doc.path("jwks_uri").asText(null);
        if (jwksUri == null) {
            throw new Refused("the provider publishes no jwks_uri");
        }
        if (!verified(jwt, jwksUri, false) && !verified(jwt, jwksUri, true)) {
            throw new Refused("the ID token's signature does not verify against the provider's keys");
        }
        JsonNode c = jwt.claims;
        if (!p.issuer().replaceAll("/+$", "").equals(c.path("iss").asText().replaceAll("/+$", ""))) {
            throw new Refused("the ID token's issuer is not the provider");
        }
        JsonNode aud = c.path("aud");
        boolean audOk = aud.isTextual() ? aud.asText().equals(p.clientId()) : false;
        if (aud.isArray()) {
            for (JsonNode a : aud) {
                audOk |= a.asText().equals(p.clientId());
            }
            if (aud.size() > 1 && !p.clientId().equals(c.path("azp").asText(p.clientId()))) {
                audOk = false;
            }
        }
        if (!audOk) {
            throw new Refused("the ID token is not for this client");
        }
        long now = Instant.now().getEpochSecond();
        if (!c.path("exp").isNumber() || c.path("exp").asLong() + SKEW < now) {
            throw new Refused("the ID token has expired");
        }
        if (c.path("iat").isNumber() && c.path("iat").asLong() - SKEW > now) {
            throw new Refused("the ID token is issued in the future");
        }
        if (nonce == null || !nonce.equals(c.path("nonce").asText(null))) {
            throw new Refused("the ID token's nonce does not match this login");
        }
        if (c.path("sub").asText("").isEmpty()) {
            throw new Refused("the ID token has no subject");
        }
        return c;
    }

    private boolean verified(Jwt jwt, String jwksUri, boolean refresh) throws Refused {
        Cached c = jwks.get(jwksUri);
        if (refresh || c == null || c.at().plus(CACHE).isBefore(Instant.now())) {
            c = new Cached(get(jwksUri), Instant.now());
            jwks.put(jwksUri, c);
        }
        String kid = jwt.kid();
        for (JsonNode k : c.value().path("keys")) {
            if ((kid == null || kid.equals(k.path("kid").asText(null))) && jwt.verify(k)) {
                return true;
            }
        }
        return false;
    }

    private JsonNode get(String url) throws Refused {
        try {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .timeout(Duration.ofSeconds(10))
                            .header("Accept", "application/json")
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new Refused("GET " + url + " answered " + r.statusCode());
            }
            return Jwt.JSON.readTree(r.body());
        } catch (IOException | IllegalArgumentException e) {
            throw new Refused("GET " + url + " failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Refused("interrupted");
        }
    }
}
