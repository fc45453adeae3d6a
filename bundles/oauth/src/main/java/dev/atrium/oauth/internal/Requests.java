package dev.atrium.oauth.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.JsonMappers;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;

/** Reading OAuth request parameters (form-urlencoded or JSON bodies, query strings) and writing OAuth answers. */
final class Requests {

    static final ObjectMapper JSON = JsonMappers.create();

    private Requests() {}

    /** The body's parameters: {@code application/x-www-form-urlencoded} (RFC 6749) or a JSON object of strings. */
    static Map<String, String> body(HttpHeaders headers, String body) {
        return body(headers.getMediaType(), body);
    }

    static Map<String, String> body(String contentType, String body) {
        MediaType type;
        try {
            type = contentType == null || contentType.isBlank() ? null : MediaType.valueOf(contentType);
        } catch (IllegalArgumentException e) {
            throw OAuthError.invalidRequest("unreadable Content-Type");
        }
        return body(type, body);
    }

    static Map<String, String> body(MediaType type, String body) {
        String b = body == null ? "" : body;
        if (type != null && type.isCompatible(MediaType.APPLICATION_JSON_TYPE)) {
            JsonNode node;
            try {
                node = b.isBlank() ? JSON.createObjectNode() : JSON.readTree(b);
            } catch (java.io.IOException e) {
                throw OAuthError.invalidRequest("malformed JSON body");
            }
            if (node == null || !node.isObject()) {
                throw OAuthError.invalidRequest("the JSON body must be an object");
            }
            Map<String, String> out = new LinkedHashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                JsonNode v = e.getValue();
                if (v.isNull()) {
                    continue;
                }
                if (v.isArray() && "scope".equals(e.getKey())) {
                    StringBuilder sb = new StringBuilder();
                    v.forEach(s -> sb.append(sb.length() == 0 ? "" : " ").append(s.asText()));
                    out.put(e.getKey(), sb.toString());
                } else if (v.isValueNode()) {
                    out.put(e.getKey(), v.asText());
                } else {
                    throw OAuthError.invalidRequest("parameter " + e.getKey() + " must be a string");
                }
            }
            return out;
        }
        if ((type == null && b.isBlank())
                || (type != null && type.isCompatible(MediaType.APPLICATION_FORM_URLENCODED_TYPE))) {
            return form(b);
        }
        throw OAuthError.invalidRequest("send the parameters as application/x-www-form-urlencoded or application/json");
    }

    static Map<String, String> form(String b) {
        Map<String, String> out = new LinkedHashMap<>();
        if (b == null || b.isEmpty()) {
            return out;
        }
        for (String pair : b.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String k;
            String v;
            try {
                k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw OAuthError.invalidRequest("malformed form body");
            }
            if (out.containsKey(k)) {
                throw OAuthError.invalidRequest("parameter " + k + " is repeated");
            }
            out.put(k, v);
        }
        return out;
    }

    static Map<String, String> query(UriInfo uri) {
        Map<String, String> out = new LinkedHashMap<>();
        uri.getQueryParameters().forEach((k, v) -> {
            if (v.size() > 1) {
                throw OAuthError.invalidRequest("parameter " + k + " is repeated");
            }
            out.put(k, v.get(0));
        });
        return out;
    }

    static Response json(int status, Object body) {
        return Response.status(status)
                .type(MediaType.APPLICATION_JSON_TYPE)
                .entity(body)
                .header("Cache-Control", "no-store")
                .header("Pragma", "no-cache")
                .build();
    }

    static Response error(OAuthError e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("error", e.error);
        m.put("error_description", e.getMessage());
        Response.ResponseBuilder r = Response.status(e.status)
                .type(MediaType.APPLICATION_JSON_TYPE)
                .entity(m)
                .header("Cache-Control", "no-store")
                .header("Pragma", "no-cache");
        if (e.status == 401) {
            r.header(
                    HttpHeaders.WWW_AUTHENTICATE,
                    "invalid_token".equals(e.error)
                            ? bearerChallenge("invalid_token", e.getMessage(), null)
                            : "Basic realm=\"atrium\"");
        }
        return r.build();
    }

    /**
     * A bearer-protected resource's error (RFC 6750 §3): its status, the JSON body, and the {@code WWW-Authenticate:
     * Bearer} challenge naming the error (none when no token was sent at all, §3.1) and, for insufficient_scope, the scope.
     */
    static Response bearerError(OAuthError e, String scope, boolean tokenSent) {
        Response.ResponseBuilder r = Response.fromResponse(error(e));
        r.header(HttpHeaders.WWW_AUTHENTICATE, null);
        r.header(
                HttpHeaders.WWW_AUTHENTICATE,
                tokenSent ? bearerChallenge(e.error, e.getMessage(), scope) : "Bearer realm=\"atrium\"");
        return r.build();
    }

    static String bearerChallenge(String error, String description, String scope) {
        StringBuilder b = new StringBuilder("Bearer realm=\"atrium\", error=\"")
                .append(error)
                .append('"');
        if (description != null) {
            // a quoted-string of RFC 6750's error_description alphabet: no quote or backslash
            b.append(", error_description=\"")
                    .append(description.replaceAll("[^\\x20-\\x7e]|[\"\\\\]", "'"))
                    .append('"');
        }
        if (scope != null) {
            b.append(", scope=\"").append(scope).append('"');
        }
        return b.toString();
    }

    static Response html(int status, String page) {
        return Response.status(status)
                .type(MediaType.TEXT_HTML_TYPE.withCharset("utf-8"))
                .entity(page)
                .header("Cache-Control", "no-store")
                .header("X-Frame-Options", "DENY")
                .header("Content-Security-Policy", "frame-ancestors 'none'")
                .build();
    }
}
