package dev.atrium.mcp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import org.junit.jupiter.api.Test;

class TokenCipherTest {

    private static byte[] key() {
        byte[] k = new byte[32];
        new SecureRandom().nextBytes(k);
        return k;
    }

    @Test
    void aSealedTokenOpensWithItsKeyOnlyAndNeverShowsThePlainText() {
        TokenCipher cipher = new TokenCipher(key());
        String sealed = cipher.seal("at-secret-token");
        assertTrue(sealed.startsWith("v1:"));
        assertFalse(sealed.contains("secret"));
        assertNotEquals(sealed, cipher.seal("at-secret-token"), "a fresh nonce each time");
        assertEquals("at-secret-token", cipher.open(sealed));
        assertNull(new TokenCipher(key()).open(sealed), "another key opens nothing");
        String tampered = sealed.substring(0, sealed.length() - 2) + (sealed.endsWith("A=") ? "B=" : "A=");
        assertNull(cipher.open(tampered));
        assertNull(cipher.seal(null));
        assertNull(cipher.open("plain"));
    }

    @Test
    void aTokenSealedByEarlierReleasesStillOpens() throws Exception {
        byte[] key = key();
        byte[] nonce = new byte[12];
        new SecureRandom().nextBytes(nonce);
        // the format earlier releases wrote: v1: and base64(nonce || AES-256-GCM ciphertext), no associated data
        javax.crypto.Cipher c = javax.crypto.Cipher.getInstance("AES/GCM/NoPadding");
        c.init(
                javax.crypto.Cipher.ENCRYPT_MODE,
                new javax.crypto.spec.SecretKeySpec(key, "AES"),
                new javax.crypto.spec.GCMParameterSpec(128, nonce));
        byte[] ciphertext = c.doFinal("rt-refresh".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        byte[] stored = new byte[12 + ciphertext.length];
        System.arraycopy(nonce, 0, stored, 0, 12);
        System.arraycopy(ciphertext, 0, stored, 12, ciphertext.length);
        assertEquals(
                "rt-refresh",
                new TokenCipher(key).open("v1:" + java.util.Base64.getEncoder().encodeToString(stored)));
        assertNull(new TokenCipher(key).open("v1:AAAA"), "too short to hold a nonce and a tag");
    }

    @Test
    void theResourceOfTheMetadataMustBeTheServerOrAPrefixOfIt() {
        assertTrue(McpOAuth.sameResource("https://mcp.example.com/mcp", "https://mcp.example.com/mcp"));
        assertTrue(McpOAuth.sameResource("https://mcp.example.com/", "https://mcp.example.com/mcp"));
        assertFalse(McpOAuth.sameResource("https://evil.example.com/mcp", "https://mcp.example.com/mcp"));
        assertFalse(McpOAuth.sameResource("https://mcp.example.com/m", "https://mcp.example.com/mcp"));
        assertFalse(McpOAuth.sameResource("", "https://mcp.example.com/mcp"));
    }
}
