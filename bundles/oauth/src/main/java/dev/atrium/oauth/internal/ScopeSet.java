package dev.atrium.oauth.internal;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/** The scopes this server grants, with what the consent page says about each. */
final class ScopeSet {

    static final Map<String, String> KNOWN = new LinkedHashMap<>();

    static {
        KNOWN.put("openid", "sign you in (OpenID Connect)");
        KNOWN.put("profile", "see your name, username and picture");
        KNOWN.put("email", "see your email address");
        KNOWN.put("threads:read", "read threads");
        KNOWN.put("threads:write", "create and update threads");
        KNOWN.put("runs:read", "read run results");
        KNOWN.put("runs:write", "start runs");
        KNOWN.put("files:read", "read files");
        KNOWN.put("files:write", "upload and delete files");
        KNOWN.put("repos:read", "read repositories");
        KNOWN.put("repos:write", "create and update repositories");
        KNOWN.put("account:read", "read your notifications, shortcuts and settings, and your workspaces' settings");
    }

    private ScopeSet() {}

    /** Space-separated scopes; null when the string names a scope this server does not know. */
    static Set<String> parse(String value) {
        Set<String> out = new LinkedHashSet<>();
        if (value == null) {
            return out;
        }
        for (String s : value.trim().split("[\\s]+")) {
            if (s.isEmpty()) {
                continue;
            }
            if (!KNOWN.containsKey(s)) {
                return null;
            }
            out.add(s);
        }
        return out;
    }

    static String join(Set<String> scopes) {
        return String.join(" ", scopes);
    }

    static Set<String> column(String value) {
        Set<String> out = new LinkedHashSet<>();
        if (value != null) {
            for (String s : value.split(" ")) {
                if (!s.isEmpty()) {
                    out.add(s);
                }
            }
        }
        return out;
    }
}
