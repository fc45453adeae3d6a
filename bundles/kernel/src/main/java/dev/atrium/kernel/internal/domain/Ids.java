package dev.atrium.kernel.internal.domain;

import java.security.SecureRandom;

/** Random identifiers and secrets in base62, with a prefix that says what they are. */
public final class Ids {

    private static final char[] ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    private Ids() {
    }

    /** {@code prefix_} followed by {@code length} random base62 characters. */
    public static String random(String prefix, int length) {
        StringBuilder sb = new StringBuilder(prefix.length() + 1 + length).append(prefix).append('_');
        for (int i = 0; i < length; i++) {
            sb.append(ALPHABET[RANDOM.nextInt(ALPHABET.length)]);
        }
        return sb.toString();
    }

    public static String id(String prefix) {
        return random(prefix, 20);
    }
}
