package dev.atrium.oauth.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

/** Random secrets in base62 with a prefix, their SHA-256, and base64url. */
final class Secrets {

    private static final char[] ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
    private static final char[] USER_CODE = "BCDFGHJKLMNPQRSTVWXZ".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    private Secrets() {
    }

    static String random(String prefix, int length) {
        StringBuilder sb = new StringBuilder(prefix.length() + length).append(prefix);
        for (int i = 0; i < length; i++) {
            sb.append(ALPHABET[RANDOM.nextInt(ALPHABET.length)]);
        }
        return sb.toString();
    }

    /** An RFC 8628 user code: 8 consonants shown as {@code BCDF-GHJK}. */
    static String userCode() {
        StringBuilder sb = new StringBuilder(9);
        for (int i = 0; i < 8; i++) {
            if (i == 4) {
                sb.append('-');
            }
            sb.append(USER_CODE[RANDOM.nextInt(USER_CODE.length)]);
        }
        return sb.toString();
    }

    static String normalizeUserCode(String code) {
        String c = code == null ? "" : code.toUpperCase(java.util.Locale.ROOT).replaceAll("[^A-Z]", "");
        return c.length() == 8 ? c.substring(0, 4) + "-" + c.substring(4) : c;
    }

    static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String b64url(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** The PKCE S256 transform of a code verifier (RFC 7636 §4.2). */
    static String s256(String verifier) {
        try {
            return b64url(MessageDigest.getInstance("SHA-256").digest(verifier.getBytes(StandardCharsets.US_ASCII)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static boolean constantEquals(String a, String b) {
        return a != null && b != null
                && MessageDigest.isEqual(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }
}
