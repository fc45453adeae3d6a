package dev.atrium.storage.internal;

import dev.atrium.kernel.api.ApiException;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Names and paths of workspace files. A path is relative to the workspace's root ({@code docs/a.txt}), its names
 * joined by {@code /}; the root is the empty path. Input is normalised to Unicode NFC, empty and {@code .} segments
 * and a trailing slash are dropped; anything that could name something outside the workspace or that a file system
 * or a ZIP reader would read differently is refused with 400.
 *
 * <p>The name rules are the Windows rules the repositories' {@code GitNames} applies to paths written into trees
 * (JGit's {@code ObjectChecker} with {@code setSafeForWindows}): Windows strips trailing dots and spaces ({@code ".. "}
 * is {@code ..}), treats device names as devices whatever their extension ({@code CON.txt}) and reads {@code :} as an
 * alternate data stream. Unlike Git, {@code " * < > ? |} are kept: Windows cannot hold them but never reads them as
 * another name (an unpacker refuses or replaces them), and people name files {@code what?.pdf}. {@code GitNames} lives
 * in the repos bundle's internal package and leans on JGit, so the rule is kept here, in {@link #nameProblem}, the one
 * place storage decides a name.
 */
final class Paths {

    static final int MAX_NAME_BYTES = 255;
    static final int MAX_PATH_BYTES = 4096;

    private Paths() {}

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
        return raw.length() >= 2
                && raw.charAt(1) == ':'
                && Character.isLetter(raw.charAt(0))
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
        String problem = nameProblem(name);
        if (problem != null) {
            throw ApiException.badRequest(field + ": " + problem);
        }
        return name;
    }

    /** A path separator on Windows, and the separator of an NTFS alternate data stream ({@code a::$DATA}) or a drive. */
    private static final String SEPARATORS = "\\:";
    /** Windows device names: a name is the device when the part before its first dot (trailing spaces dropped) is one. */
    private static final Set<String> DEVICES = Set.of("con", "prn", "aux", "nul", "conin$", "conout$", "clock$");

    /**
     * What is wrong with one name, in words naming it; null when it is fine. A name must survive being written to a
     * file system or unpacked from a ZIP on any common system as the same single name.
     */
    static String nameProblem(String name) {
        if (name.isEmpty()) {
            return "a name must not be empty";
        }
        String quoted = quote(name);
        if (name.chars().allMatch(c -> c == '.' || c == ' ')) {
            return "the name " + quoted + " is only dots and spaces, which Windows reads as '.' or '..'";
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == 0) {
                return "the name " + quoted + " contains NUL (U+0000)";
            }
            if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f)) {
                return "the name " + quoted + " contains a control character";
            }
            if (SEPARATORS.indexOf(c) >= 0) {
                return "the name " + quoted + " contains '" + c + "', which Windows reads as a separator";
            }
        }
        if (name.codePoints().anyMatch(cp -> cp >= 0xD800 && cp <= 0xDFFF)) {
            return "the name " + quoted + " is not valid Unicode text (a lone surrogate)";
        }
        char last = name.charAt(name.length() - 1);
        if (last == '.' || last == ' ') {
            return "the name " + quoted + " ends with " + (last == '.' ? "a dot" : "a space") + ", which Windows drops";
        }
        if (device(name)) {
            return "the name " + quoted
                    + " is a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any extension)";
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            return "a name must be at most " + MAX_NAME_BYTES + " bytes of UTF-8";
        }
        return null;
    }

    /** Whether every name of a stored path passes {@link #nameProblem}: rows stored before the rule may not. */
    static boolean portable(String path) {
        for (String name : path.split("/", -1)) {
            if (nameProblem(name) != null) {
                return false;
            }
        }
        return true;
    }

    private static boolean device(String name) {
        int dot = name.indexOf('.');
        String base = (dot < 0 ? name : name.substring(0, dot)).stripTrailing().toLowerCase(Locale.ROOT);
        if (DEVICES.contains(base)) {
            return true;
        }
        // COM1-9 and LPT1-9, and the superscript digits Windows takes for the same devices
        return base.length() == 4
                && (base.startsWith("com") || base.startsWith("lpt"))
                && "123456789\u00b9\u00b2\u00b3".indexOf(base.charAt(3)) >= 0;
    }

    /** The name in quotes for a message, long ones cut and control characters escaped, so the message stays one readable line. */
    private static String quote(String name) {
        StringBuilder b = new StringBuilder("'");
        int shown = 0;
        for (int i = 0; i < name.length() && shown < 80; i++, shown++) {
            char c = name.charAt(i);
            if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || Character.isSurrogate(c)) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append(shown < name.length() ? "...'" : "'").toString();
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
            throw ApiException.badRequest(
                    field + ": the resulting path would be longer than " + MAX_PATH_BYTES + " bytes");
        }
    }
}
