package dev.atrium.identity.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.Digests;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.ECGenParameterSpec;
import org.junit.jupiter.api.Test;

class IdentityPartsTest {

    private static String b64(byte[] b) {
        return Digests.base64Url(b);
    }

    private static byte[] unsigned(BigInteger v, int len) {
        byte[] raw = v.toByteArray();
        byte[] out = new byte[len];
        int copy = Math.min(raw.length, len);
        System.arraycopy(raw, raw.length - copy, out, len - copy, copy);
        return out;
    }

    @Test
    void rs256TokensVerifyAgainstTheirJwkAndNotWhenChanged() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        KeyPair pair = g.generateKeyPair();
        String input =
                b64("{\"alg\":\"RS256\",\"kid\":\"k1\"}".getBytes()) + "." + b64("{\"sub\":\"alice\"}".getBytes());
        Signature s = Signature.getInstance("SHA256withRSA");
        s.initSign(pair.getPrivate());
        s.update(input.getBytes(StandardCharsets.US_ASCII));
        String token = input + "." + b64(s.sign());
        RSAPublicKey pub = (RSAPublicKey) pair.getPublic();
        ObjectNode jwk = Jwt.JSON
                .createObjectNode()
                .put("kty", "RSA")
                .put("kid", "k1")
                .put("n", b64(pub.getModulus().toByteArray()))
                .put("e", b64(pub.getPublicExponent().toByteArray()));
        Jwt jwt = Jwt.parse(token);
        assertEquals("alice", jwt.claims.path("sub").asText());
        assertTrue(jwt.verify(jwk));
        String changed = b64("{\"alg\":\"RS256\",\"kid\":\"k1\"}".getBytes()) + "."
                + b64("{\"sub\":\"mallory\"}".getBytes()) + token.substring(token.lastIndexOf('.'));
        assertFalse(Jwt.parse(changed).verify(jwk));
    }

    @Test
    void es256TokensVerifyWithJoseSignatures() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        KeyPair pair = g.generateKeyPair();
        String input = b64("{\"alg\":\"ES256\"}".getBytes()) + "." + b64("{\"sub\":\"bob\"}".getBytes());
        Signature s = Signature.getInstance("SHA256withECDSAinP1363Format");
        s.initSign(pair.getPrivate());
        s.update(input.getBytes(StandardCharsets.US_ASCII));
        String token = input + "." + b64(s.sign());
        ECPublicKey pub = (ECPublicKey) pair.getPublic();
        JsonNode jwk = Jwt.JSON
                .createObjectNode()
                .put("kty", "EC")
                .put("crv", "P-256")
                .put("x", b64(unsigned(pub.getW().getAffineX(), 32)))
                .put("y", b64(unsigned(pub.getW().getAffineY(), 32)));
        assertTrue(Jwt.parse(token).verify(jwk));
        assertFalse(Jwt.parse(input + "." + b64(new byte[64])).verify(jwk));
    }

    @Test
    void tokensSignedWithAnotherAlgorithmThanTheKeysNeverVerify() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        RSAPublicKey pub = (RSAPublicKey) g.generateKeyPair().getPublic();
        ObjectNode jwk = Jwt.JSON
                .createObjectNode()
                .put("kty", "RSA")
                .put("n", b64(pub.getModulus().toByteArray()))
                .put("e", b64(pub.getPublicExponent().toByteArray()));
        // HS256 keyed with the public key's own bytes: the classic confusion of an RSA verifier
        String input = b64("{\"alg\":\"HS256\"}".getBytes()) + "." + b64("{\"sub\":\"mallory\"}".getBytes());
        javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
        mac.init(new javax.crypto.spec.SecretKeySpec(jwk.toString().getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        assertFalse(Jwt.parse(input + "." + b64(mac.doFinal(input.getBytes(StandardCharsets.US_ASCII))))
                .verify(jwk));
        String none = b64("{\"alg\":\"none\"}".getBytes()) + "." + b64("{\"sub\":\"mallory\"}".getBytes()) + ".";
        assertEquals("none", Jwt.parse(none).alg());
        assertFalse(Jwt.parse(none).verify(jwk));
    }

    @Test
    void returnTargetsStayOnThisSite() {
        assertEquals("/spaces/x?tab=1", Util.safeReturn("/spaces/x?tab=1"));
        assertEquals("/", Util.safeReturn("//evil.example/"));
        assertEquals("/", Util.safeReturn("https://evil.example/"));
        assertEquals("/", Util.safeReturn("/\\evil.example"));
        assertEquals("/", Util.safeReturn(null));
    }
}
