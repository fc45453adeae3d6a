package dev.atrium.kernel.api;

/**
 * One byte range of a {@code Range: bytes=...} header, resolved against the file's size (RFC 9110 §14.1.2): how every
 * download of stored bytes (workspace files, release assets) reads the header.
 *
 * @param first the first byte
 * @param last  the last byte, inclusive
 */
public record ByteRange(long first, long last) {

    /** The header could not be served: malformed, another unit, several ranges, or none of it inside the file. */
    public static final class Unsatisfiable extends Exception {
        private static final long serialVersionUID = 1L;

        Unsatisfiable(String message) {
            super(message, null, false, false);
        }
    }

    public long length() {
        return last - first + 1;
    }

    public String contentRange(long size) {
        return "bytes " + first + "-" + last + "/" + size;
    }

    /**
     * The range {@code header} asks for in a file of {@code size} bytes; null when there is no header. A suffix
     * ({@code bytes=-500}) longer than the file is the whole file, an end past the file is cut to it (RFC 9110).
     */
    public static ByteRange parse(String header, long size) throws Unsatisfiable {
        if (header == null) {
            return null;
        }
        String h = header.trim();
        if (!h.regionMatches(true, 0, "bytes=", 0, 6)) {
            throw new Unsatisfiable("only byte ranges are served: Range must be bytes=FIRST-LAST");
        }
        String spec = h.substring(6).trim();
        if (spec.indexOf(',') >= 0) {
            throw new Unsatisfiable("only one range per request is served");
        }
        int dash = spec.indexOf('-');
        if (dash < 0) {
            throw new Unsatisfiable("malformed range: " + shorten(spec));
        }
        String a = spec.substring(0, dash).trim();
        String b = spec.substring(dash + 1).trim();
        try {
            if (a.isEmpty()) {
                long suffix = digits(b);
                if (suffix == 0 || size == 0) {
                    throw new Unsatisfiable("the range lies outside the file (" + size + " bytes)");
                }
                return new ByteRange(Math.max(0, size - suffix), size - 1);
            }
            long first = digits(a);
            long last = b.isEmpty() ? Long.MAX_VALUE : digits(b);
            if (last < first) {
                throw new Unsatisfiable("malformed range: the last byte comes before the first");
            }
            if (first >= size) {
                throw new Unsatisfiable("the range lies outside the file (" + size + " bytes)");
            }
            return new ByteRange(first, Math.min(last, size - 1));
        } catch (NumberFormatException e) {
            throw new Unsatisfiable("malformed range: " + shorten(spec));
        }
    }

    /**
     * Whether an {@code If-None-Match} header names {@code etag} (or is {@code *}): the client has the bytes, answer 304.
     * Weak tags compare by their opaque part (RFC 9110 §13.1.2 uses the weak comparison here).
     */
    public static boolean noneMatchHits(String ifNoneMatch, String etag) {
        if (ifNoneMatch == null) {
            return false;
        }
        if (ifNoneMatch.trim().equals("*")) {
            return true;
        }
        for (String t : ifNoneMatch.split(",")) {
            String tag = t.trim();
            if ((tag.startsWith("W/") ? tag.substring(2) : tag).equals(etag)) {
                return true;
            }
        }
        return false;
    }

    private static long digits(String s) {
        if (s.isEmpty() || s.length() > 18 || !s.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new NumberFormatException(s);
        }
        return Long.parseLong(s);
    }

    private static String shorten(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "…" : s;
    }
}
