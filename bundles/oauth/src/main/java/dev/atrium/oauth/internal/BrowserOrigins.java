package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Sql;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Which web origins may call the token, UserInfo and revocation endpoints from a browser (CORS): those of a registered
 * public client's redirect URIs, since a single-page app is a public client and receives its code at such a URI. A
 * loopback redirect registered without a port admits that host on any port (RFC 8252 §7.3). Credentials (cookies) are
 * never allowed cross-origin, and the pages and the session-bearing API get no CORS at all.
 */
@Component(service = BrowserOrigins.class)
public class BrowserOrigins {

    /** A client registered or changed reaches preflights on this instance within this time. */
    private static final Duration CACHE = Duration.ofSeconds(10);

    private final Sql sql;
    private final Map<String, Decision> decided = new ConcurrentHashMap<>();

    private record Decision(boolean allowed, Instant at) {}

    @Activate
    public BrowserOrigins(@Reference DataSource dataSource) {
        this.sql = new Sql(dataSource);
    }

    /** Whether {@code origin} (an {@code Origin} header) belongs to a registered public client. */
    boolean allowed(String origin) {
        String normalized = normalize(origin);
        if (normalized == null) {
            return false;
        }
        Decision d = decided.get(normalized);
        if (d != null && d.at().plus(CACHE).isAfter(Instant.now())) {
            return d.allowed();
        }
        boolean allowed = lookUp(normalized);
        if (decided.size() > 10_000) {
            decided.clear();
        }
        decided.put(normalized, new Decision(allowed, Instant.now()));
        return allowed;
    }

    private boolean lookUp(String origin) {
        URI o = URI.create(origin);
        String portless = o.getScheme() + "://" + o.getHost();
        boolean loopback =
                "http".equals(o.getScheme()) && ("127.0.0.1".equals(o.getHost()) || "[::1]".equals(o.getHost()));
        // redirect_uris holds one URI per line; an origin matches a line that starts with it and then a path, query or
        // end (a loopback host on any port: the port of a native or local app's redirect is picked at run time)
        Object[] args = loopback
                ? new Object[] {pattern(portless, "/"), pattern(portless, "?"), pattern(portless, ":")}
                : new Object[] {pattern(origin, "/"), pattern(origin, "?")};
        StringBuilder sqlText =
                new StringBuilder("SELECT 1 FROM oauth_clients WHERE token_endpoint_auth_method = 'none' AND (");
        for (int i = 0; i < args.length; i++) {
            sqlText.append(i == 0 ? "" : " OR ").append("(E'\\n' || redirect_uris || E'\\n') LIKE ? ESCAPE '!'");
        }
        sqlText.append(") LIMIT 1");
        return sql.one(sqlText.toString(), rs -> 1, args).isPresent();
    }

    private static String pattern(String prefix, String next) {
        String p = prefix.replace("!", "!!").replace("%", "!%").replace("_", "!_");
        return "%\n" + p + next + "%";
    }

    /** {@code scheme://host[:port]} in lower case, or null when it is not an http(s) origin. */
    static String normalize(String origin) {
        if (origin == null || origin.length() > 300) {
            return null;
        }
        try {
            URI u = new URI(origin);
            String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
            if (!("http".equals(scheme) || "https".equals(scheme))
                    || u.getHost() == null
                    || u.getRawUserInfo() != null
                    || !(u.getRawPath() == null || u.getRawPath().isEmpty())
                    || u.getRawQuery() != null
                    || u.getRawFragment() != null) {
                return null;
            }
            return scheme + "://" + u.getHost().toLowerCase(Locale.ROOT) + (u.getPort() < 0 ? "" : ":" + u.getPort());
        } catch (URISyntaxException e) {
            return null;
        }
    }

    /** The response headers for a browser's request from {@code origin} to an endpoint open to its clients; empty if none. */
    Map<String, String> headersFor(String origin) {
        if (origin == null || !allowed(origin)) {
            return origin == null ? Map.of() : Map.of("Vary", "Origin");
        }
        return Map.of("Access-Control-Allow-Origin", origin, "Vary", "Origin");
    }

    /** The answer headers to a CORS preflight ({@code OPTIONS}) for {@code methods}; empty when the origin is not allowed. */
    Map<String, String> preflight(String origin, String methods) {
        if (origin == null || !allowed(origin)) {
            return Map.of("Vary", "Origin");
        }
        return Map.of(
                "Access-Control-Allow-Origin",
                origin,
                "Access-Control-Allow-Methods",
                methods,
                "Access-Control-Allow-Headers",
                "Authorization, Content-Type",
                "Access-Control-Max-Age",
                "600",
                "Vary",
                "Origin");
    }
}
