package dev.atrium.kernel.internal.http;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The request target's path and query as the envelope accepts them. Jetty is told to let ambiguous URIs through
 * (launcher/atrium.bndrun sets {@code org.eclipse.jetty.UriComplianceMode=UNSAFE}) so that they are refused here,
 * with the spec's error body, instead of by Jetty with an HTML or empty 400. Nothing a client of the API sends needs
 * an encoded separator, a dot segment or a control character in the path.
 */
final class UriCheck {

    private UriCheck() {}

    /** Why the raw path (as {@code getRequestURI()} gives it, still percent-encoded) is refused, or null. */
    static String pathProblem(String rawPath) {
        if (rawPath == null || rawPath.isEmpty() || rawPath.charAt(0) != '/') {
            return "the request path must start with /";
        }
        for (int i = 0; i < rawPath.length(); i++) {
            char c = rawPath.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                return "the request path must not contain control characters";
            }
            if (c > 0x7e) {
                return "the request path must be percent-encoded ASCII";
            }
            if (c == '\\') {
                return "the request path must not contain a backslash";
            }
            if (c == ';') {
                return "the request path must not contain path parameters (;)";
            }
            if (c == '%') {
                if (i + 2 >= rawPath.length() || hex(rawPath.charAt(i + 1)) < 0 || hex(rawPath.charAt(i + 2)) < 0) {
                    return (i + 1 < rawPath.length() && (rawPath.charAt(i + 1) == 'u' || rawPath.charAt(i + 1) == 'U'))
                            ? "the request path must not use %u escapes"
                            : "the request path holds a malformed percent-escape";
                }
                int b = hex(rawPath.charAt(i + 1)) << 4 | hex(rawPath.charAt(i + 2));
                if (b == '/' || b == '\\' || b == '%') {
                    return "the request path must not contain an encoded " + (char) b;
                }
                if (b == ';') {
                    return "the request path must not contain an encoded ;";
                }
                if (b < 0x20 || b == 0x7f) {
                    return "the request path must not contain control characters";
                }
            }
        }
        if (rawPath.contains("//")) {
            return "the request path must not contain an empty segment (//)";
        }
        // printable ASCII without escapes (the usual path) is its own decoding
        String path = rawPath.indexOf('%') < 0 ? rawPath : utf8(percentDecode(rawPath));
        if (path == null) {
            return "the request path is not valid UTF-8";
        }
        if (hasDotSegment(path)) {
            return "the request path must not contain . or .. segments";
        }
        return null;
    }

    private static boolean hasDotSegment(String path) {
        int start = 0;
        while (start <= path.length()) {
            int end = path.indexOf('/', start);
            if (end < 0) {
                end = path.length();
            }
            int length = end - start;
            if ((length == 1 || length == 2) && path.charAt(start) == '.' && path.charAt(end - 1) == '.') {
                return true;
            }
            start = end + 1;
        }
        return false;
    }

    /** The decoded path of a raw path {@link #pathProblem} accepted. */
    static String decodedPath(String rawPath) {
        if (rawPath.indexOf('%') < 0) {
            return rawPath;
        }
        return new String(percentDecode(rawPath), StandardCharsets.UTF_8);
    }

    /** Why the raw query string is refused, or null: it must decode to UTF-8 text without NUL. */
    static String queryProblem(String rawQuery) {
        if (rawQuery == null || rawQuery.isEmpty()) {
            return null;
        }
        return BodyCheck.formProblem(rawQuery, "the query string");
    }

    static int hex(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    /** Percent-decodes ASCII text; a malformed escape stays as it is (callers have refused those already). */
    static byte[] percentDecode(String s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length() && hex(s.charAt(i + 1)) >= 0 && hex(s.charAt(i + 2)) >= 0) {
                out.write(hex(s.charAt(i + 1)) << 4 | hex(s.charAt(i + 2)));
                i += 2;
            } else if (c < 0x80) {
                out.write(c);
            } else {
                byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                out.write(b, 0, b.length);
            }
        }
        return out.toByteArray();
    }

    /** Strictly decoded UTF-8 (overlong forms, encoded surrogates and truncated sequences refused), or null. */
    static String utf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
