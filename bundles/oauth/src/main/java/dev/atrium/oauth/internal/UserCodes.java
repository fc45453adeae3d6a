package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Ids;
import java.util.Locale;

/** RFC 8628 user codes: 8 consonants shown as {@code BCDF-GHJK}, easy to read aloud and to type on another device. */
final class UserCodes {

    private static final String CONSONANTS = "BCDFGHJKLMNPQRSTVWXZ";

    private UserCodes() {}

    static String generate() {
        String c = Ids.randomChars(CONSONANTS, 8);
        return c.substring(0, 4) + "-" + c.substring(4);
    }

    /** What a person typed, as it is stored: case, spaces and dashes do not matter. */
    static String normalize(String code) {
        String c = code == null ? "" : code.toUpperCase(Locale.ROOT).replaceAll("[^A-Z]", "");
        return c.length() == 8 ? c.substring(0, 4) + "-" + c.substring(4) : c;
    }
}
