package dev.atrium.kernel.api;

import java.security.SecureRandom;

/**
 * Random identifiers and secrets: a prefix that says what they are, then random base62 characters
 * ({@code 0-9A-Za-z}). Every bundle makes its ids and tokens here, so they all share one alphabet and one
 * source of randomness (docs/decisions.md, "Ids").
 */
public final class Ids {

    /** The characters of an id or a secret after its prefix. */
    public static final String BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    /** Random characters in an id made by {@link #id(String)}. */
    public static final int ID_LENGTH = 20;

    private static final SecureRandom RANDOM = new SecureRandom();

    private Ids() {}

    /** An opaque id such as {@code th_} followed by {@value #ID_LENGTH} random base62 characters. */
    public static String id(String kind) {
        return random(kind + "_", ID_LENGTH);
    }

    /** {@code prefix} exactly as given (it carries its own {@code _}, or is empty) followed by {@code length} random base62 characters. */
    public static String random(String prefix, int length) {
        return prefix + randomChars(BASE62, length);
    }

    /** {@code length} characters drawn uniformly from {@code alphabet}, for codes with an alphabet of their own. */
    public static String randomChars(String alphabet, int length) {
        if (length < 0 || alphabet.isEmpty()) {
            throw new IllegalArgumentException("length must not be negative and the alphabet not empty");
        }
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            sb.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
        }
        return sb.toString();
    }

    /** {@code length} random bytes, e.g. a salt. */
    public static byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        RANDOM.nextBytes(bytes);
        return bytes;
    }
}
