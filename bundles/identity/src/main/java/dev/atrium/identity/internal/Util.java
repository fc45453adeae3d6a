package dev.atrium.identity.internal;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** Form and URL encodings and tiny pages for the identity bundle. */
final class Util {

    private Util() {}

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    static String withQuery(String uri, String... pairs) {
        StringBuilder sb = new StringBuilder(uri);
        boolean first = !uri.contains("?");
        for (int i = 0; i < pairs.length; i += 2) {
            if (pairs[i + 1] != null) {
                sb.append(first ? '?' : '&').append(pairs[i]).append('=').append(enc(pairs[i + 1]));
                first = false;
            }
        }
        return sb.toString();
    }

    static Map<String, String> form(String body) {
        Map<String, String> out = new LinkedHashMap<>();
        if (body == null || body.isEmpty()) {
            return out;
        }
        for (String pair : body.split("&")) {
            int eq = pair.indexOf('=');
            try {
                out.putIfAbsent(
                        URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8),
                        eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            } catch (IllegalArgumentException ignored) {
                // a malformed pair is dropped
            }
        }
        return out;
    }

    /** A same-site path to return to after login: a relative path only, never another origin. */
    static String safeReturn(String returnTo) {
        if (returnTo == null
                || returnTo.isEmpty()
                || !returnTo.startsWith("/")
                || returnTo.startsWith("//")
                || returnTo.startsWith("/\\")
                || returnTo.length() > 2000
                || returnTo.chars().anyMatch(ch -> ch < 0x20)) {
            return "/";
        }
        return returnTo;
    }

    static String esc(String s) {
        if (s == null) {
            return "";
        }
        return s.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("\"", "&quot;")
                .replace("'", "&#39;");
    }

    static String page(String title, String body) {
        return "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">"
                + "<title>" + esc(title)
                + " - Atrium</title><style>body{font-family:system-ui,sans-serif;max-width:30em;margin:3em auto;"
                + "padding:0 1em;color:#222}input,button{font-size:1em;padding:.4em;margin:.2em 0}label{display:block;margin-top:.6em}"
                + ".err{color:#a00}</style></head><body>" + body + "</body></html>";
    }
}
