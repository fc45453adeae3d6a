package dev.atrium.identity.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSObject;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.RSAKey;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.JsonMappers;
import java.text.ParseException;
import java.util.Map;
import java.util.Set;

/**
 * A compact JWS as an ID token arrives: its header and claims, and its signature verified against a JWK (RS256/384/512,
 * ES256) by Nimbus JOSE+JWT, which also checks that an EC key's point is on its curve.
 */
final class Jwt {

    static final ObjectMapper JSON = JsonMappers.create();
    private static final Set<JWSAlgorithm> ACCEPTED =
            Set.of(JWSAlgorithm.RS256, JWSAlgorithm.RS384, JWSAlgorithm.RS512, JWSAlgorithm.ES256);

    final JsonNode header;
    final JsonNode claims;
    private final String token;

    private Jwt(JsonNode header, JsonNode claims, String token) {
        this.header = header;
        this.claims = claims;
        this.token = token;
    }

    /** Parses without verifying; {@link IllegalArgumentException} when it is not a JWS. */
    static Jwt parse(String token) {
        String[] parts = token == null ? new String[0] : token.split("\\.", -1);
        if (parts.length != 3) {
            throw new IllegalArgumentException("not a compact JWS");
        }
        try {
            JsonNode header = JSON.readTree(Digests.fromBase64Url(parts[0]));
            JsonNode claims = JSON.readTree(Digests.fromBase64Url(parts[1]));
            Digests.fromBase64Url(parts[2]);
            if (header == null || !header.isObject() || claims == null || !claims.isObject()) {
                throw new IllegalArgumentException("not a JWT");
            }
            return new Jwt(header, claims, token);
        } catch (java.io.IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException("malformed JWT", e);
        }
    }

    String alg() {
        return header.path("alg").asText("");
    }

    String kid() {
        return header.path("kid").asText(null);
    }

    /** True when the signature is valid under {@code jwk} for this token's algorithm (RS256/384/512, ES256). */
    boolean verify(JsonNode jwk) {
        try {
            JWSObject jws = JWSObject.parse(token);
            if (!ACCEPTED.contains(jws.getHeader().getAlgorithm())) {
                return false;
            }
            JWK key = JWK.parse(JSON.writeValueAsString(jwk));
            JWSVerifier verifier;
            if (key instanceof RSAKey rsa) {
                verifier = new RSASSAVerifier(rsa);
            } else if (key instanceof ECKey ec && Curve.P_256.equals(ec.getCurve())) {
                verifier = new ECDSAVerifier(ec);
            } else {
                return false;
            }
            return jws.verify(verifier);
        } catch (ParseException | JOSEException | java.io.IOException | RuntimeException e) {
            return false;
        }
    }

    static Map<String, Object> map(JsonNode node) {
        return JSON.convertValue(node, JSON.getTypeFactory().constructMapType(Map.class, String.class, Object.class));
    }
}
