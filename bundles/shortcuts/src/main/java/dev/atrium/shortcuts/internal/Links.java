package dev.atrium.shortcuts.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.shortcuts.internal.ShortcutStore.Link;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Set;
import java.util.regex.Pattern;

/** Reads a shortcut or item from a request body: {@code title} 1-100, {@code url}, optional {@code icon}. */
final class Links {

    static final int MAX_TITLE = 100;
    static final int MAX_URL = 2_000;
    private static final Pattern ICON = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

    private Links() {}

    static Link from(JsonNode body) {
        JsonBody b = JsonBody.of(body);
        rejectUnknown(body, Set.of("title", "url", "icon"));
        String title = b.text("title", 1, MAX_TITLE);
        String url = url(b.text("url", 1, MAX_URL));
        String icon = b.optionalText("icon", 0, 64).filter(s -> !s.isEmpty()).orElse(null);
        if (icon != null && !ICON.matcher(icon).matches()) {
            throw ApiException.badRequest("icon must be an icon name: lower-case letters, digits and dashes");
        }
        return new Link(title, url, icon);
    }

    /**
     * A path on this server ({@code /threads/...}) or an absolute http(s) URL with a host: never {@code javascript:},
     * {@code data:} or a scheme-relative {@code //host} a browser would follow elsewhere.
     */
    static String url(String url) {
        if (url.chars().anyMatch(ch -> ch < 0x20 || ch == 0x7f || Character.isWhitespace(ch))) {
            throw ApiException.badRequest("url must not contain spaces or control characters");
        }
        if (url.startsWith("/") && !url.startsWith("//") && !url.startsWith("/\\")) {
            return url;
        }
        try {
            URI u = new URI(url);
            String scheme = u.getScheme();
            if (scheme != null
                    && (scheme.equalsIgnoreCase("https") || scheme.equalsIgnoreCase("http"))
                    && u.getHost() != null) {
                return url;
            }
        } catch (URISyntaxException e) {
            // answered below
        }
        throw ApiException.badRequest("url must be a path on this server (/...) or an http(s) URL");
    }

    static void rejectUnknown(JsonNode body, Set<String> allowed) {
        body.fieldNames().forEachRemaining(f -> {
            if (!allowed.contains(f)) {
                throw ApiException.badRequest(
                        "unknown field " + f + "; allowed: " + String.join(", ", new java.util.TreeSet<>(allowed)));
            }
        });
    }
}
