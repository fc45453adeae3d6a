package dev.atrium.storage.internal;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;

import dev.atrium.kernel.api.ApiException;

/**
 * Names and paths of workspace files. A path is relative to the workspace's root ({@code docs/a.txt}), its names
 * joined by {@code /}; the root is the empty path. Input is normalised to Unicode NFC, empty and {@code .} segments
 * and a trailing slash are dropped; anything that could name something outside the workspace or that a file system
 * or a ZIP reader would read differently is refused with 400.
 */
final class Paths {

    static final int MAX_NAME_BYTES = 255;
    static final int MAX_PATH_BYTES = 4096;

    private Paths() {
    }

    /** The normalised path {@code raw} names; {@code ""} for the root when {@code allowRoot}. */
    static String normalise(String field, String raw, boolean allowRoot) {
        if (raw == null) {
            throw ApiException.badRequest(field + " is required");
        }
        if (raw.startsWith("/") || raw.startsWith("\\") || drive(raw)) {
            throw ApiException.badRequest(field + " must be relative to the workspace's root, not absolute");
        }
        String text = Normalizer.normalize(raw, Normalizer.Form.NFC);
        if (text.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
            throw ApiException.badRequest(field + " must be at most " + MAX_PATH_BYTES + " bytes of UTF-8");
        }
        List<String> names = new ArrayList<>();
        for (String segment : text.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".")) {
                continue;
            }
            names.add(checkName(field, segment));
        }
        if (names.isEmpty() && !allowRoot) {
            throw ApiException.badRequest(field + " must name a file or folder, not the root");
        }
        return String.join("/", names);
    }

    /** {@code C:}, {@code C:/…}: a Windows drive, which an extracting client would take for an absolute path. */
    private static boolean drive(String raw) {
        return raw.length() >= 2 && raw.charAt(1) == ':' && Character.isLetter(raw.charAt(0))
                && (raw.length() == 2 || raw.charAt(2) == '/' || raw.charAt(2) == '\\');
    }

    /** A single name (no slash), normalised to NFC. */
    static String name(String field, String raw) {
        if (raw == null) {
            throw ApiException.badRequest(field + " is required");
        }
        String name = Normalizer.normalize(raw, Normalizer.Form.NFC);
        if (name.indexOf('/') >= 0) {
            throw ApiException.badRequest(field + " must be a single name without '/'");
        }
        return checkName(field, name);
    }

    private static String checkName(String field, String name) {
        if (name.isEmpty()) {
            throw ApiException.badRequest(field + " must not be empty");
        }
        if (name.equals(".") || name.equals("..")) {
            throw ApiException.badRequest(field + " must not contain '.' or '..' as a name");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == 0) {
                throw ApiException.badRequest(field + " must not contain NUL (U+0000) characters");
            }
            if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f)) {
                throw ApiException.badRequest(field + " must not contain control characters");
            }
            if (c == '\\') {
                throw ApiException.badRequest(field + " must not contain '\\'");
            }
        }
        if (name.codePoints().anyMatch(cp -> cp >= 0xD800 && cp <= 0xDFFF)) {
            throw ApiException.badRequest(field + " must be valid Unicode text (a lone surrogate)");
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            throw ApiException.badRequest(field + ": a name must be at most " + MAX_NAME_BYTES + " bytes of UTF-8");
        }
        return name;
    }

    static String join(String parent, String name) {
        return parent.isEmpty() ? name : parent + "/" + name;
    }

    static String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash < 0 ? "" : path.substring(0, slash);
    }

    static String last(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    /** Whether {@code path} is {@code ancestor} or lies under it. */
    static boolean within(String path, String ancestor) {
        return ancestor.isEmpty() || path.equals(ancestor) || path.startsWith(ancestor + "/");
    }

    static void checkLength(String field, String path) {
        if (path.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
            throw ApiException.badRequest(field + ": the resulting path would be longer than " + MAX_PATH_BYTES + " bytes");
        }
    }
}
