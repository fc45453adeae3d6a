package dev.atrium.mcp.internal;

import dev.atrium.kernel.api.KeyFile;
import dev.atrium.kernel.api.Sealer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;

/**
 * Encrypts the OAuth secrets this bundle keeps (access and refresh tokens, client secrets, PKCE verifiers) with
 * AES-256-GCM before they reach PostgreSQL: a copy of the database alone reveals none of them. The key is the operator's
 * {@code tokenKey} (base64 of 32 bytes; every instance of a cluster needs the same one), else a key made at first start
 * in {@code <data>/mcp/token.key} (owner-only).
 */
@Component(
        service = TokenCipher.class,
        configurationPid = "dev.atrium.mcp",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
public class TokenCipher {

    private static final String PREFIX = "v1:";
    private static final int NONCE_BYTES = 12;
    /** No associated data: values sealed before kernel.api's sealer did the work had none, and must still open. */
    private static final String NO_ASSOCIATED_DATA = "";

    private final Sealer sealer;

    @Activate
    public TokenCipher(McpClient.Config config) throws IOException {
        this(
                config.tokenKey() == null || config.tokenKey().isBlank()
                        ? KeyFile.readOrMake(Path.of(config.dataDirectory()).resolve("mcp/token.key"))
                        : Base64.getDecoder().decode(config.tokenKey().trim()));
    }

    TokenCipher(byte[] key) {
        if (key.length != 32) {
            throw new IllegalArgumentException("the MCP token key must be 32 bytes");
        }
        this.sealer = Sealer.withKey("mcp", key);
    }

    /** {@code v1:} and the base64 of the nonce followed by the ciphertext. */
    String seal(String plain) {
        if (plain == null) {
            return null;
        }
        Sealer.Sealed sealed = sealer.seal(plain, NO_ASSOCIATED_DATA);
        byte[] out = new byte[NONCE_BYTES + sealed.ciphertext().length];
        System.arraycopy(sealed.nonce(), 0, out, 0, NONCE_BYTES);
        System.arraycopy(sealed.ciphertext(), 0, out, NONCE_BYTES, sealed.ciphertext().length);
        return PREFIX + Base64.getEncoder().encodeToString(out);
    }

    /** The plain text, or null when {@code sealed} is null or was sealed with another key. */
    String open(String sealed) {
        if (sealed == null || !sealed.startsWith(PREFIX)) {
            return null;
        }
        try {
            byte[] in = Base64.getDecoder().decode(sealed.substring(PREFIX.length()));
            if (in.length <= NONCE_BYTES) {
                return null;
            }
            return sealer.open(
                    new Sealer.Sealed(
                            sealer.keyId(),
                            Arrays.copyOf(in, NONCE_BYTES),
                            Arrays.copyOfRange(in, NONCE_BYTES, in.length)),
                    NO_ASSOCIATED_DATA);
        } catch (IllegalArgumentException | IllegalStateException e) {
            return null;
        }
    }
}
