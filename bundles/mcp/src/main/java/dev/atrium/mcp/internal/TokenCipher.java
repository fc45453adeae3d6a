package dev.atrium.mcp.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;

import dev.atrium.kernel.api.KeyFile;

/**
 * Encrypts the OAuth secrets this bundle keeps (access and refresh tokens, client secrets, PKCE verifiers) with
 * AES-256-GCM before they reach PostgreSQL: a copy of the database alone reveals none of them. The key is the operator's
 * {@code tokenKey} (base64 of 32 bytes; every instance of a cluster needs the same one), else a key made at first start
 * in {@code <data>/mcp/token.key} (owner-only).
 */
@Component(service = TokenCipher.class, configurationPid = "dev.atrium.mcp", configurationPolicy = ConfigurationPolicy.OPTIONAL)
public class TokenCipher {

    private static final String PREFIX = "v1:";
    private final SecretKeySpec key;
    private final SecureRandom random = new SecureRandom();

    @Activate
    public TokenCipher(McpClient.Config config) throws IOException {
        this(config.tokenKey() == null || config.tokenKey().isBlank() ? KeyFile.readOrMake(Path.of(config.dataDirectory()).resolve("mcp/token.key"))
                : Base64.getDecoder().decode(config.tokenKey().trim()));
    }

    TokenCipher(byte[] key) {
        if (key.length != 32) {
            throw new IllegalArgumentException("the MCP token key must be 32 bytes");
        }
        this.key = new SecretKeySpec(key, "AES");
    }

    String seal(String plain) {
        if (plain == null) {
            return null;
        }
        try {
            byte[] iv = new byte[12];
            random.nextBytes(iv);
            Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
            c.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, iv));
            byte[] sealed = c.doFinal(plain.getBytes(StandardCharsets.UTF_8));
            byte[] out = new byte[iv.length + sealed.length];
            System.arraycopy(iv, 0, out, 0, iv.length);
            System.arraycopy(sealed, 0, out, iv.length, sealed.length);
            return PREFIX + Base64.getEncoder().encodeToString(out);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available", e);
        }
    }

    /** The plain text, or null when {@code sealed} is null or was sealed with another key. */
    String open(String sealed) {
        if (sealed == null || !sealed.startsWith(PREFIX)) {
            return null;
        }
        try {
            byte[] in = Base64.getDecoder().decode(sealed.substring(PREFIX.length()));
            Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
            c.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, in, 0, 12));
            return new String(c.doFinal(in, 12, in.length - 12), StandardCharsets.UTF_8);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return null;
        }
    }
}
