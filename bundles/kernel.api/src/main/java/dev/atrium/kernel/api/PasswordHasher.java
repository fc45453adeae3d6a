package dev.atrium.kernel.api;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * Slow salted password hashes: PBKDF2-HMAC-SHA256, 16-byte random salt, 256-bit key. New hashes use
 * {@value #ITERATIONS} iterations (OWASP 2023); a stored hash carries its own iteration count and salt, so hashes
 * made with another count (threads' share passwords used 210,000) keep verifying.
 */
public final class PasswordHasher {

    /** The algorithm name at the start of an {@link Hash#encoded() encoded} hash. */
    public static final String ALGORITHM = "pbkdf2-sha256";
    /** Iterations of every new hash. */
    public static final int ITERATIONS = 600_000;
    /** Above this a stored count is refused rather than run (a damaged row must not pin a CPU). */
    static final int MAX_ITERATIONS = 10_000_000;

    private static final int SALT_BYTES = 16;
    private static final int KEY_BITS = 256;

    private PasswordHasher() {}

    /**
     * A hash with the parameters needed to check a password against it. Stored either as three columns
     * (identity: hash, salt, iterations) or as one text, {@link #encoded()}.
     */
    public static final class Hash {
        private final int iterations;
        private final byte[] salt;
        private final byte[] key;

        public Hash(int iterations, byte[] salt, byte[] key) {
            if (iterations < 1 || iterations > MAX_ITERATIONS) {
                throw new IllegalArgumentException("iterations must be between 1 and " + MAX_ITERATIONS);
            }
            this.iterations = iterations;
            this.salt = salt.clone();
            this.key = key.clone();
        }

        public int iterations() {
            return iterations;
        }

        public byte[] salt() {
            return salt.clone();
        }

        public byte[] key() {
            return key.clone();
        }

        /** {@code pbkdf2-sha256$<iterations>$<salt>$<key>}, salt and key in base64 without padding. */
        public String encoded() {
            Base64.Encoder b64 = Base64.getEncoder().withoutPadding();
            return ALGORITHM + "$" + iterations + "$" + b64.encodeToString(salt) + "$" + b64.encodeToString(key);
        }

        /** The hash an {@link #encoded()} text stands for; empty when the text is not one. */
        public static Optional<Hash> parse(String encoded) {
            if (encoded == null) {
                return Optional.empty();
            }
            String[] parts = encoded.split("\\$", -1);
            if (parts.length != 4 || !parts[0].equals(ALGORITHM)) {
                return Optional.empty();
            }
            try {
                return Optional.of(new Hash(
                        Integer.parseInt(parts[1]),
                        Base64.getDecoder().decode(parts[2]),
                        Base64.getDecoder().decode(parts[3])));
            } catch (IllegalArgumentException e) { // NumberFormatException too
                return Optional.empty();
            }
        }
    }

    /** A new hash of {@code password} with a fresh salt and {@value #ITERATIONS} iterations. */
    public static Hash hash(char[] password) {
        byte[] salt = Ids.randomBytes(SALT_BYTES);
        return new Hash(ITERATIONS, salt, derive(password, salt, ITERATIONS));
    }

    /** Whether {@code password} is the one {@code stored} was made from. */
    public static boolean verify(char[] password, Hash stored) {
        return MessageDigest.isEqual(stored.key, derive(password, stored.salt, stored.iterations));
    }

    /** Whether {@code password} is the one an {@link Hash#encoded() encoded} hash was made from; false when it is not one. */
    public static boolean verify(char[] password, String encoded) {
        return Hash.parse(encoded).map(h -> verify(password, h)).orElse(false);
    }

    /**
     * Spends the time of one verification and answers false: for a name with no password, so that a missing
     * account takes as long as a wrong password.
     */
    public static boolean verifyNothing(char[] password) {
        derive(password, new byte[SALT_BYTES], ITERATIONS);
        return false;
    }

    private static byte[] derive(char[] password, byte[] salt, int iterations) {
        PBEKeySpec spec = new PBEKeySpec(password, salt, iterations, KEY_BITS);
        try {
            return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256")
                    .generateSecret(spec)
                    .getEncoded();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every Java runtime has PBKDF2WithHmacSHA256", e);
        } finally {
            spec.clearPassword();
        }
    }
}
