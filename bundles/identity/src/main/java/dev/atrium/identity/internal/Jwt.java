package dev.atrium.identity.internal;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.atrium.kernel.api.Digests;

/** A compact JWS as an ID token arrives: its header, claims and signature, verified against a JWK (RS*, ES256). */
final class Jwt {

    static final ObjectMapper JSON = new ObjectMapper();

    final JsonNode header;
    final JsonNode claims;
    private final String signingInput;
    private final byte[] signature;

    private Jwt(JsonNode header, JsonNode claims, String signingInput, byte[] signature) {
        this.header = header;
        this.claims = claims;
        this.signingInput = signingInput;
        this.signature = signature;
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
            if (header == null || !header.isObject() || claims == null || !claims.isObject()) {
                throw new IllegalArgumentException("not a JWT");
            }
            return new Jwt(header, claims, parts[0] + "." + parts[1], Digests.fromBase64Url(parts[2]));
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
        String alg = alg();
        try {
            PublicKey key;
            String javaAlg;
            byte[] sig = signature;
            switch (alg) {
                case "RS256", "RS384", "RS512" -> {
                    if (!"RSA".equals(jwk.path("kty").asText())) {
                        return false;
                    }
                    key = KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(
                            new BigInteger(1, Digests.fromBase64Url(jwk.path("n").asText())), new BigInteger(1, Digests.fromBase64Url(jwk.path("e").asText()))));
                    javaAlg = "SHA" + alg.substring(2) + "withRSA";
                }
                case "ES256" -> {
                    if (!"EC".equals(jwk.path("kty").asText()) || !"P-256".equals(jwk.path("crv").asText()) || sig.length != 64) {
                        return false;
                    }
                    AlgorithmParameters params = AlgorithmParameters.getInstance("EC");
                    params.init(new ECGenParameterSpec("secp256r1"));
                    ECParameterSpec spec = params.getParameterSpec(ECParameterSpec.class);
                    key = KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(new ECPoint(
                            new BigInteger(1, Digests.fromBase64Url(jwk.path("x").asText())), new BigInteger(1, Digests.fromBase64Url(jwk.path("y").asText()))), spec));
                    javaAlg = "SHA256withECDSA";
                    sig = der(sig);
                }
                default -> {
                    return false;
                }
            }
            Signature s = Signature.getInstance(javaAlg);
            s.initVerify(key);
            s.update(signingInput.getBytes(StandardCharsets.US_ASCII));
            return s.verify(sig);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }

    /** JOSE's R||S to the DER sequence Java verifies. */
    private static byte[] der(byte[] rs) {
        byte[] r = integer(java.util.Arrays.copyOfRange(rs, 0, 32));
        byte[] s = integer(java.util.Arrays.copyOfRange(rs, 32, 64));
        byte[] out = new byte[2 + 2 + r.length + 2 + s.length];
        out[0] = 0x30;
        out[1] = (byte) (out.length - 2);
        out[2] = 0x02;
        out[3] = (byte) r.length;
        System.arraycopy(r, 0, out, 4, r.length);
        out[4 + r.length] = 0x02;
        out[5 + r.length] = (byte) s.length;
        System.arraycopy(s, 0, out, 6 + r.length, s.length);
        return out;
    }

    private static byte[] integer(byte[] v) {
        return new BigInteger(1, v).toByteArray();
    }

    static Map<String, Object> map(JsonNode node) {
        return JSON.convertValue(node, JSON.getTypeFactory().constructMapType(Map.class, String.class, Object.class));
    }
}
