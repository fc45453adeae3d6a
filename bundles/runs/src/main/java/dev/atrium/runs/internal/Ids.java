package dev.atrium.runs.internal;

import java.security.SecureRandom;

/** Opaque prefixed random ids and tokens (base62). */
final class Ids {

    private static final char[] ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    static String id(String prefix) {
        return random(prefix, 20);
    }

    static String random(String prefix, int n) {
        StringBuilder b = new StringBuilder(prefix).append('_');
        for (int i = 0; i < n; i++) {
            b.append(ALPHABET[RANDOM.nextInt(ALPHABET.length)]);
        }
        return b.toString();
    }

    private Ids() {
    }
}
