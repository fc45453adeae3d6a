package dev.atrium.threads.internal;

import dev.atrium.threads.internal.PdfFonts.Face;
import java.io.Closeable;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.text.Bidi;
import java.text.BreakIterator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDDocumentInformation;
import org.apache.pdfbox.pdmodel.PDPage;
import org.apache.pdfbox.pdmodel.PDPageContentStream;
import org.apache.pdfbox.pdmodel.common.PDRectangle;
import org.apache.pdfbox.pdmodel.font.PDType0Font;

/**
 * One thread exported as PDF, written as its messages arrive: A4 pages, the title, then each message's
 * {@code role (created_at):} line and its text, wrapped to the page width and broken into pages. Every font is an
 * embedded TrueType subset (Type 0, Identity-H, with a ToUnicode map), so the text is drawn and extracted as written.
 * A character no font draws becomes U+FFFD (or '?' when no font draws that either); invisible format characters
 * (joiners, direction marks, variation selectors) no font draws are left out. Right-to-left text is laid out in
 * visual order (Unicode bidi); letters are not shaped (Arabic stays unjoined).
 * Page content beyond the fonts' memory budget goes to a scratch file that {@link #close()} deletes.
 */
final class ThreadPdf implements Closeable {

    static final float MARGIN = 50;
    static final float TITLE_SIZE = 14;
    static final float BODY_SIZE = 10;
    private static final float LEADING = 1.25f;
    private static final PDRectangle PAGE = PDRectangle.A4;
    private static final float WIDTH = PAGE.getWidth() - 2 * MARGIN;
    private static final Map<Integer, Integer> MIRRORED = mirrored("()[]{}<>\u00ab\u00bb\u2039\u203a\u2264\u2265");

    private final PdfFonts fonts;
    private final PDDocument doc;
    private final List<Closeable> open = new ArrayList<>();
    private final Map<Integer, PDType0Font> loaded = new HashMap<>();
    private final Map<Integer, Face> faces = new HashMap<>();
    private final Map<Long, Float> widths = new HashMap<>();
    private final String replacement;
    private PDPageContentStream page;
    private float y;

    ThreadPdf(PdfFonts fonts, String title) throws IOException {
        this.fonts = fonts;
        this.doc = new PDDocument(fonts.memory());
        try {
            PDDocumentInformation info = new PDDocumentInformation();
            info.setTitle(title);
            info.setProducer("Atrium");
            doc.setDocumentInformation(info);
            this.replacement = face(0xFFFD) != null ? "\uFFFD" : "?";
            paragraph(title, TITLE_SIZE);
            blank(BODY_SIZE);
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    void message(String role, String createdAt, String content) throws IOException {
        paragraph(role + " (" + createdAt + "):", BODY_SIZE);
        for (String line : content.split("\r\n|[\n\r\u2028\u2029]", -1)) {
            paragraph(line, BODY_SIZE);
        }
        blank(BODY_SIZE);
    }

    /** Writes the document to {@code out}, which stays open. */
    void writeTo(OutputStream out) throws IOException {
        endPage();
        doc.save(new FilterOutputStream(out) {
            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                out.write(b, off, len);
            }

            @Override
            public void close() throws IOException {
                flush();
            }
        });
    }

    @Override
    public void close() throws IOException {
        IOException failure = null;
        try {
            endPage();
        } catch (IOException e) {
            failure = e;
        }
        try {
            doc.close();
        } catch (IOException e) {
            failure = failure == null ? e : failure;
        }
        for (Closeable c : open) {
            try {
                c.close();
            } catch (IOException e) {
                failure = failure == null ? e : failure;
            }
        }
        open.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /** One paragraph (no line breaks in it): cleaned, wrapped, and each line drawn in visual order. */
    private void paragraph(String raw, float size) throws IOException {
        String text = clean(raw);
        if (text.isEmpty()) {
            blank(size);
            return;
        }
        Bidi bidi = Bidi.requiresBidi(text.toCharArray(), 0, text.length())
                ? new Bidi(text, Bidi.DIRECTION_DEFAULT_LEFT_TO_RIGHT)
                : null;
        BreakIterator breaks = BreakIterator.getLineInstance(Locale.ROOT);
        breaks.setText(text);
        int lineStart = 0;
        float lineWidth = 0;
        for (int start = breaks.first(), end = breaks.next();
                end != BreakIterator.DONE;
                start = end, end = breaks.next()) {
            String segment = text.substring(start, end);
            float visible = width(segment.stripTrailing(), size);
            if (lineWidth + visible <= WIDTH) {
                lineWidth += width(segment, size);
                continue;
            }
            if (lineStart < start) {
                draw(text, bidi, lineStart, start, size);
                lineStart = start;
                lineWidth = 0;
            }
            if (visible <= WIDTH) {
                lineWidth = width(segment, size);
                continue;
            }
            // a word wider than the page: broken between characters
            BreakIterator chars = BreakIterator.getCharacterInstance(Locale.ROOT);
            chars.setText(segment);
            for (int cs = chars.first(), ce = chars.next(); ce != BreakIterator.DONE; cs = ce, ce = chars.next()) {
                float w = width(segment.substring(cs, ce), size);
                if (lineWidth + w > WIDTH && lineStart < start + cs) {
                    draw(text, bidi, lineStart, start + cs, size);
                    lineStart = start + cs;
                    lineWidth = 0;
                }
                lineWidth += w;
            }
        }
        if (lineStart < text.length()) {
            draw(text, bidi, lineStart, text.length(), size);
        }
    }

    /** Control characters become spaces (a tab four), and characters no font draws the replacement (or nothing). */
    private String clean(String raw) throws IOException {
        StringBuilder out = new StringBuilder(raw.length());
        for (int i = 0; i < raw.length(); ) {
            int cp = raw.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == '\t') {
                out.append("    ");
            } else if (Character.isISOControl(cp)) {
                out.append(' ');
            } else if (face(cp) != null) {
                out.appendCodePoint(cp);
            } else if (!invisible(cp)) {
                out.append(replacement);
            }
        }
        return out.toString();
    }

    private static boolean invisible(int cp) {
        return Character.getType(cp) == Character.FORMAT
                || (cp >= 0xFE00 && cp <= 0xFE0F)
                || (cp >= 0xE0100 && cp <= 0xE01EF);
    }

    @SuppressWarnings("ReferenceEquality") // a document loads each font once: the same font is the same object
    private void draw(String text, Bidi bidi, int start, int end, float size) throws IOException {
        String logical = text.substring(start, end).stripTrailing();
        String visual = logical;
        boolean rightAligned = false;
        if (bidi != null && !logical.isEmpty()) {
            Bidi line = bidi.createLineBidi(start, start + logical.length());
            visual = visual(logical, line);
            rightAligned = !bidi.baseIsLeftToRight();
        }
        float leading = size * LEADING;
        if (page == null || y - leading < MARGIN) {
            newPage();
        }
        y -= leading;
        if (visual.isEmpty()) {
            return;
        }
        float x = MARGIN + (rightAligned ? Math.max(0, WIDTH - width(visual, size)) : 0);
        page.beginText();
        page.newLineAtOffset(x, y);
        PDType0Font current = null;
        StringBuilder run = new StringBuilder();
        for (int i = 0; i < visual.length(); ) {
            int cp = visual.codePointAt(i);
            i += Character.charCount(cp);
            PDType0Font font = font(face(cp));
            if (font != current && run.length() > 0) {
                page.showText(run.toString());
                run.setLength(0);
            }
            if (font != current) {
                page.setFont(font, size);
                current = font;
            }
            run.appendCodePoint(cp);
        }
        page.showText(run.toString());
        page.endText();
    }

    /** The line in display order: runs ordered by their bidi level, right-to-left runs reversed by grapheme and mirrored. */
    private static String visual(String logical, Bidi line) {
        if (line.isLeftToRight()) {
            return logical;
        }
        int count = line.getRunCount();
        byte[] levels = new byte[count];
        Integer[] order = new Integer[count];
        for (int i = 0; i < count; i++) {
            levels[i] = (byte) line.getRunLevel(i);
            order[i] = i;
        }
        Bidi.reorderVisually(levels, 0, order, 0, count);
        StringBuilder out = new StringBuilder(logical.length());
        for (Integer run : order) {
            String part = logical.substring(line.getRunStart(run), line.getRunLimit(run));
            if ((line.getRunLevel(run) & 1) == 0) {
                out.append(part);
                continue;
            }
            BreakIterator graphemes = BreakIterator.getCharacterInstance(Locale.ROOT);
            graphemes.setText(part);
            List<String> clusters = new ArrayList<>();
            for (int s = graphemes.first(), e = graphemes.next();
                    e != BreakIterator.DONE;
                    s = e, e = graphemes.next()) {
                String cluster = part.substring(s, e);
                Integer mirror =
                        cluster.codePointCount(0, cluster.length()) == 1 ? MIRRORED.get(cluster.codePointAt(0)) : null;
                clusters.add(mirror == null ? cluster : new String(Character.toChars(mirror)));
            }
            for (int i = clusters.size() - 1; i >= 0; i--) {
                out.append(clusters.get(i));
            }
        }
        return out.toString();
    }

    private void blank(float size) throws IOException {
        if (page == null) {
            newPage();
        }
        y -= size * LEADING;
    }

    private void newPage() throws IOException {
        endPage();
        PDPage p = new PDPage(PAGE);
        doc.addPage(p);
        page = new PDPageContentStream(doc, p, PDPageContentStream.AppendMode.OVERWRITE, true);
        y = PAGE.getHeight() - MARGIN;
    }

    private void endPage() throws IOException {
        if (page != null) {
            PDPageContentStream done = page;
            page = null;
            done.close();
        }
    }

    private float width(String s, float size) throws IOException {
        float w = 0;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            Face f = face(cp);
            long key = ((long) f.id << 21) | cp;
            Float units = widths.get(key);
            if (units == null) {
                units = font(f).getStringWidth(new String(Character.toChars(cp)));
                widths.put(key, units);
            }
            w += units;
        }
        return w / 1000 * size;
    }

    /** The face drawing {@code cp}, looked up once per document; null when none does. */
    private Face face(int cp) {
        return faces.computeIfAbsent(cp, fonts::face);
    }

    private PDType0Font font(Face face) throws IOException {
        PDType0Font font = loaded.get(face.id);
        if (font == null) {
            font = PDType0Font.load(doc, fonts.open(face, open), true);
            loaded.put(face.id, font);
        }
        return font;
    }

    private static Map<Integer, Integer> mirrored(String pairs) {
        Map<Integer, Integer> m = new HashMap<>();
        for (int i = 0; i + 1 < pairs.length(); i += 2) {
            m.put((int) pairs.charAt(i), (int) pairs.charAt(i + 1));
            m.put((int) pairs.charAt(i + 1), (int) pairs.charAt(i));
        }
        return m;
    }
}
