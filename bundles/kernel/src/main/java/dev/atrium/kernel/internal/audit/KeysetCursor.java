package dev.atrium.kernel.internal.audit;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.NulText;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;

/**
 * An opaque keyset cursor of a list sorted newest first by (time, id): base64url of {@code <instant>|<id>}, the last
 * row of a page. The next page is the rows strictly before that pair.
 */
public record KeysetCursor(Instant at, String id) {

    public String encode() {
        return Base64.getUrlEncoder().withoutPadding().encodeToString((at + "|" + id).getBytes(StandardCharsets.UTF_8));
    }

    /** The cursor of {@code text}, null for none; 400 when it is not one a list gave. */
    public static KeysetCursor parse(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        NulText.reject("cursor", text);
        try {
            String decoded = new String(Base64.getUrlDecoder().decode(text), StandardCharsets.UTF_8);
            int bar = decoded.indexOf('|');
            if (bar > 0 && bar < decoded.length() - 1 && decoded.indexOf('\0') < 0) {
                Instant at = Instant.parse(decoded.substring(0, bar));
                // PostgreSQL's timestamptz range, roughly: a cursor outside it names no row
                if (at.isAfter(Instant.parse("-4000-01-01T00:00:00Z"))
                        && at.isBefore(Instant.parse("+200000-01-01T00:00:00Z"))) {
                    return new KeysetCursor(at, decoded.substring(bar + 1));
                }
            }
        } catch (IllegalArgumentException | DateTimeParseException e) {
            // answered below
        }
        throw ApiException.badRequest("cursor is not one this list gave");
    }
}
