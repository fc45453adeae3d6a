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
    void theResourceOfTheMetadataMustBeTheServerOrAPrefixOfIt() {
        assertTrue(McpOAuth.sameResource("https://mcp.example.com/mcp", "https://mcp.example.com/mcp"));
        assertTrue(McpOAuth.sameResource("https://mcp.example.com/", "https://mcp.example.com/mcp"));
        assertFalse(McpOAuth.sameResource("https://evil.example.com/mcp", "https://mcp.example.com/mcp"));
        assertFalse(McpOAuth.sameResource("https://mcp.example.com/m", "https://mcp.example.com/mcp"));
        assertFalse(McpOAuth.sameResource("", "https://mcp.example.com/mcp"));
    }
}
