package dev.atrium.identity.internal;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;

import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/** PBKDF2-HMAC-SHA256 with a random 16-byte salt: slow on purpose (OWASP 2023: 600,000 iterations). */
final class Passwords {

    static final int ITERATIONS = 600_000;

    private Passwords() {
    }

    static byte[] salt() {
        byte[] salt = new byte[16];
        Util.RANDOM.nextBytes(salt);
        return salt;
    }

    static byte[] hash(char[] password, byte[] salt, int iterations) {
        try {
            PBEKeySpec spec = new PBEKeySpec(password, salt, iterations, 256);
            try {
                return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
            } finally {
                spec.clearPassword();
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static boolean matches(char[] password, byte[] salt, int iterations, byte[] expected) {
        return MessageDigest.isEqual(hash(password, salt, iterations), expected);
    }
}
