package dev.atrium.store.ap.core.internal;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.Signature;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The draft-cavage signing string and the headers that carry a signature: one place that both signing and verifying
 * use, so they can only disagree with other implementations, never with each other.
 */
final class SigningString {

    static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.ROOT);

    private SigningString() {}

    /** {@code SHA-256=<base64>} of {@code body}. */
    static String digest(byte[] body) {
        try {
            return "SHA-256="
                    + Base64.getEncoder()
                            .encodeToString(MessageDigest.getInstance("SHA-256").digest(body));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The string signed over {@code names} (lower case): {@code (request-target)} is the method in lower case, a space and
     * the path with its query; every other name is that header's values joined by ", ".
     */
    static String build(List<String> names, String method, String pathAndQuery, Map<String, List<String>> headers) {
        StringBuilder s = new StringBuilder();
        for (String name : names) {
            if (s.length() > 0) {
                s.append('\n');
            }
            s.append(name).append(": ");
            if (name.equals("(request-target)")) {
                s.append(method.toLowerCase(Locale.ROOT)).append(' ').append(pathAndQuery);
            } else {
                List<String> values = headers.get(name);
                if (values == null) {
                    throw new IllegalArgumentException("the signed header " + name + " is not in the request");
                }
                s.append(String.join(", ", values.stream().map(String::trim).toList()));
            }
        }
        return s.toString();
    }

    /** The headers signing a request to {@code target} with {@code key}, named {@code keyId}. */
    static Map<String, String> sign(String keyId, PrivateKey key, String method, URI target, byte[] body) {
        String host = target.getPort() == -1 ? target.getHost() : target.getHost() + ":" + target.getPort();
        String date = HTTP_DATE.format(ZonedDateTime.now(ZoneOffset.UTC));
        String path = (target.getRawPath() == null || target.getRawPath().isEmpty() ? "/" : target.getRawPath())
                + (target.getRawQuery() == null ? "" : "?" + target.getRawQuery());
        Map<String, List<String>> signed = new LinkedHashMap<>();
        signed.put("host", List.of(host));
        signed.put("date", List.of(date));
        Map<String, String> out = new LinkedHashMap<>();
        out.put("Host", host);
        out.put("Date", date);
        List<String> names = List.of("(request-target)", "host", "date");
        if (body != null) {
            String digest = digest(body);
            signed.put("digest", List.of(digest));
            out.put("Digest", digest);
            names = List.of("(request-target)", "host", "date", "digest");
        }
        String text = build(names, method, path, signed);
        try {
            Signature rsa = Signature.getInstance("SHA256withRSA");
            rsa.initSign(key);
            rsa.update(text.getBytes(StandardCharsets.UTF_8));
            String signature = Base64.getEncoder().encodeToString(rsa.sign());
            out.put(
                    "Signature",
                    "keyId=\"" + keyId + "\",algorithm=\"rsa-sha256\",headers=\"" + String.join(" ", names)
                            + "\",signature=\"" + signature + "\"");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("an actor key does not sign", e);
        }
        return out;
    }

    /** The parameters of a {@code Signature} header (or of {@code Authorization: Signature …}); null when malformed. */
    static Map<String, String> parameters(String header) {
        String h = header.trim();
        if (h.regionMatches(true, 0, "Signature ", 0, 10)) {
            h = h.substring(10).trim();
        }
        Map<String, String> out = new LinkedHashMap<>();
        int i = 0;
        while (i < h.length()) {
            int eq = h.indexOf('=', i);
            if (eq < 0) {
                return null;
            }
            String name = h.substring(i, eq).trim().toLowerCase(Locale.ROOT);
            int j = eq + 1;
            String value;
            if (j < h.length() && h.charAt(j) == '"') {
                int end = h.indexOf('"', j + 1);
                if (end < 0) {
                    return null;
                }
                value = h.substring(j + 1, end);
                j = end + 1;
            } else {
                int end = h.indexOf(',', j);
                end = end < 0 ? h.length() : end;
                value = h.substring(j, end).trim();
                j = end;
            }
            if (name.isEmpty() || out.putIfAbsent(name, value) != null) {
                return null;
            }
            while (j < h.length() && (h.charAt(j) == ',' || h.charAt(j) == ' ')) {
                j++;
            }
            i = j;
        }
        return out;
    }
}
