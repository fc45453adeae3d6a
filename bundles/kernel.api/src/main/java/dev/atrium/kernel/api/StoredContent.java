package dev.atrium.kernel.api;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;

/**
 * How an answer carrying bytes a user stored (a workspace file, an r2 object) is served on the API's origin, so that
 * a browser never runs them with the reader's session: no type sniffing, a policy that loads nothing and sandboxes the
 * document, and an attachment for every type a browser would run or that is not known to be passive.
 */
public final class StoredContent {

    /** {@code X-Content-Type-Options}: a text/plain file never becomes HTML. */
    public static final String NOSNIFF = "nosniff";
    /** {@code Content-Security-Policy}: should a browser render the bytes anyway, they load nothing and run no script here. */
    public static final String CSP = "default-src 'none'; sandbox";

    /**
     * Media types a browser only displays and never runs. Everything else (HTML, XHTML, SVG, XML, scripts, unknown types)
     * is an attachment. PDF is left out: viewers run its scripts, and a sandboxed PDF is not shown anyway.
     */
    private static final Set<String> PASSIVE = Set.of(
            "text/plain",
            "text/csv",
            "text/markdown",
            "application/json",
            "image/png",
            "image/jpeg",
            "image/gif",
            "image/webp",
            "image/avif",
            "image/bmp",
            "audio/mpeg",
            "audio/ogg",
            "audio/wav",
            "video/mp4",
            "video/webm",
            "video/ogg");

    private StoredContent() {}

    /** Whether a stored content type may be shown inline: its media type (parameters dropped, any case) is passive. */
    public static boolean passive(String contentType) {
        if (contentType == null) {
            return false;
        }
        int semicolon = contentType.indexOf(';');
        return PASSIVE.contains((semicolon < 0 ? contentType : contentType.substring(0, semicolon))
                .trim()
                .toLowerCase(Locale.ROOT));
    }

    /**
     * RFC 6266 {@code Content-Disposition}: a quoted ASCII {@code filename} for old clients ('_' for anything a
     * quoted-string or a file system would take badly) and {@code filename*} with the name in UTF-8, every byte outside
     * RFC 8187's attr-char percent-encoded.
     *
     * @param type {@code attachment} or {@code inline}
     */
    public static String disposition(String type, String name) {
        StringBuilder ascii = new StringBuilder();
        StringBuilder encoded = new StringBuilder();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            ascii.append(c >= 0x20 && c < 0x7f && "\"\\%/:*?<>|".indexOf(c) < 0 ? c : '_');
        }
        for (byte x : name.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            if ((c >= 'A' && c <= 'Z')
                    || (c >= 'a' && c <= 'z')
                    || (c >= '0' && c <= '9')
                    || "!#$&+-.^_`|~".indexOf(c) >= 0) {
                encoded.append((char) c);
            } else {
                encoded.append('%')
                        .append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return type + "; filename=\"" + ascii + "\"; filename*=UTF-8''" + encoded;
    }
}
