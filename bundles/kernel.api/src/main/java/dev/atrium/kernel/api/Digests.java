package dev.atrium.kernel.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * SHA-256 of secrets (tokens are stored only as their hash), base64url, and comparisons whose time does not
 * depend on where two values first differ.
 */
public final class Digests {

    private Digests() {}

    public static byte[] sha256(byte[] value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    /** SHA-256 of the UTF-8 bytes of {@code value}. */
    public static byte[] sha256(String value) {
        return sha256(value.getBytes(StandardCharsets.UTF_8));
    }

    /** SHA-256 of the UTF-8 bytes of {@code value}, in base64url without padding (e.g. PKCE S256, RFC 7636 §4.2). */
    public static String sha256Base64Url(String value) {
        return base64Url(sha256(value));
    }

    /** SHA-256 of the UTF-8 bytes of {@code value}, in lower-case hex. */
    public static String sha256Hex(String value) {
        byte[] hash = sha256(value);
        StringBuilder sb = new StringBuilder(hash.length * 2);
        for (byte b : hash) {
            sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return sb.toString();
    }

    /** Base64url without padding (RFC 4648 §5), as JWTs and PKCE use it. */
    public static String base64Url(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** The bytes of a base64url text, padded or not; {@link IllegalArgumentException} when it is not base64url. */
    public static byte[] fromBase64Url(String text) {
        return Base64.getUrlDecoder().decode(text);
    }

    /** Whether two byte arrays are equal, in time that does not depend on their contents; false when either is null. */
    public static boolean constantTimeEquals(byte[] a, byte[] b) {
        return a != null && b != null && MessageDigest.isEqual(a, b);
    }

    /** Whether two texts have equal UTF-8 bytes, in time that does not depend on their contents; false when either is null. */
    public static boolean constantTimeEquals(String a, String b) {
        return a != null
                && b != null
                && MessageDigest.isEqual(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }
}
