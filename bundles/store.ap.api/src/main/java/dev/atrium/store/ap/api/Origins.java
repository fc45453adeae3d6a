package dev.atrium.store.ap.api;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Web origins of ActivityPub ids: a key speaks only for an actor of its own origin, and an activity's id must lie on
 * its actor's origin (as Mastodon and Fedify require), so that no peer can speak for or squat the ids of another.
 */
public final class Origins {

    private Origins() {}

    /** Whether two absolute http(s) URLs share scheme, host and port (the default port made explicit); false for anything else. */
    public static boolean same(String a, String b) {
        String x = origin(a);
        return x != null && x.equals(origin(b));
    }

    private static String origin(String url) {
        if (url == null) {
            return null;
        }
        try {
            URI u = new URI(url);
            String scheme = u.getScheme() == null ? null : u.getScheme().toLowerCase(Locale.ROOT);
            if (u.getHost() == null || !("https".equals(scheme) || "http".equals(scheme))) {
                return null;
            }
            int port = u.getPort() != -1 ? u.getPort() : "https".equals(scheme) ? 443 : 80;
            return scheme + "://" + u.getHost().toLowerCase(Locale.ROOT) + ":" + port;
        } catch (URISyntaxException e) {
            return null;
        }
    }
}
