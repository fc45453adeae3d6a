package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.NulText;
import dev.atrium.repos.internal.ExploreStore.Listed;
import dev.atrium.repos.internal.ExploreStore.Sort;
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.Locale;

/**
 * An opaque cursor: base64url of {@code key|id}, the sort key of the last item of a page and its id. The next page
 * starts strictly after that pair, so rows inserted meanwhile neither repeat nor push items out of it.
 */
record ExploreCursor(String keyText, String id, Object key) {

    static ExploreCursor of(Sort sort, Listed last) {
        String key = switch (sort) {
            case BEST -> Float.toString((float) last.rank());
            case STARS -> Integer.toString(last.stars());
            case UPDATED -> last.repo().updatedAt().toString();
            case CREATED -> last.repo().createdAt().toString();
            case PUSHED -> String.valueOf(last.pushedAt());
            case NAME -> last.repo().name().toLowerCase(Locale.ROOT);
        };
        return new ExploreCursor(key, last.repo().id(), null);
    }

    String encode() {
        return Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString((keyText + "|" + id).getBytes(StandardCharsets.UTF_8));
    }

    static ExploreCursor parse(String cursor, Sort sort) {
        NulText.reject("cursor", cursor);
        String text;
        try {
            text = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw bad();
        }
        int bar = text.lastIndexOf('|');
        if (bar <= 0 || bar == text.length() - 1 || text.indexOf('\0') >= 0 || text.length() > 400) {
            throw bad();
        }
        String keyText = text.substring(0, bar);
        Object v;
        try {
            v = switch (sort) {
                case BEST -> {
                    float f = Float.parseFloat(keyText);
                    if (Float.isNaN(f) || Float.isInfinite(f)) {
                        throw bad();
                    }
                    yield f;
                }
                case STARS -> Integer.parseInt(keyText);
                case UPDATED, CREATED, PUSHED -> {
                    Instant t = Instant.parse(keyText);
                    // PostgreSQL's timestamptz range, roughly: a cursor outside it names no row
                    if (t.getEpochSecond() < -62135596800L || t.getEpochSecond() > 253402300799L) {
                        throw bad();
                    }
                    yield Timestamp.from(t);
                }
                case NAME -> keyText;
            };
        } catch (NumberFormatException | DateTimeParseException e) {
            throw bad();
        }
        return new ExploreCursor(keyText, text.substring(bar + 1), v);
    }

    private static ApiException bad() {
        return ApiException.badRequest("cursor is not one this list gave out (or not for this sort)");
    }
}
