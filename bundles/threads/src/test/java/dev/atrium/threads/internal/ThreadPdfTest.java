package dev.atrium.threads.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.pdfbox.cos.COSName;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDPage;
import org.apache.pdfbox.pdmodel.font.PDCIDFontType2;
import org.apache.pdfbox.pdmodel.font.PDFont;
import org.apache.pdfbox.pdmodel.font.PDType0Font;
import org.apache.pdfbox.text.PDFTextStripper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ThreadPdfTest {

    static final String GERMAN = "Grüße aus München: Äpfel, Öl und Übermaß auf der Straße – „so“.";
    static final String GREEK = "Καλημέρα κόσμε· ξεσκεπάζω την ψυχοφθόρα βδελυγμία.";
    static final String RUSSIAN = "Съешь же ещё этих мягких французских булок, да выпей чаю.";
    static final String HEBREW = "שלום עולם";
    static final String ARMENIAN = "Բարեւ աշխարհ";
    static final String GEORGIAN = "გამარჯობა მსოფლიო";

    @TempDir
    Path tmp;

    /** DejaVu Sans, which draws Armenian, Georgian and U+FFFD, none of which Liberation Sans has. */
    Path fontDir() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("fonts"));
        try (InputStream in = getClass().getResourceAsStream("/net/sf/jasperreports/fonts/dejavu/DejaVuSans.ttf")) {
            Files.copy(in, dir.resolve("DejaVuSans.ttf"));
        }
        return dir;
    }

    static byte[] render(PdfFonts fonts, String title, List<String> messages) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ThreadPdf pdf = new ThreadPdf(fonts, title)) {
            for (String m : messages) {
                pdf.message("user", "2025-01-02T03:04:05Z", m);
            }
            pdf.writeTo(out);
        }
        return out.toByteArray();
    }

    static String text(byte[] pdf) throws IOException {
        try (PDDocument doc = PDDocument.load(pdf)) {
            return new PDFTextStripper().getText(doc);
        }
    }

    @Test
    void latinGreekCyrillicAndHebrewNeedNoFontBesidesTheBuiltInOne() throws IOException {
        PdfFonts fonts = new PdfFonts(List.of(), tmp.resolve("scratch"), 1 << 20);
        byte[] pdf = render(fonts, "Grüße – Привет", List.of(GERMAN, GREEK, RUSSIAN, HEBREW + " (and English)"));
        String text = text(pdf);
        for (String s : List.of("Grüße – Привет", "user (2025-01-02T03:04:05Z):", GERMAN, GREEK, RUSSIAN, HEBREW)) {
            assertTrue(text.contains(s), s + " in\n" + text);
        }
        try (PDDocument doc = PDDocument.load(pdf)) {
            assertEquals(1, fontsOf(doc).size(), "only Liberation Sans: " + fontsOf(doc));
        }
    }

    @Test
    void charactersTheBuiltInFontLacksComeFromTheFontDirectoryAndTheRestBecomeReplacementCharacters()
            throws IOException {
        PdfFonts fonts = new PdfFonts(List.of(fontDir(), tmp.resolve("missing")), tmp.resolve("scratch"), 1 << 20);
        byte[] pdf = render(fonts, "Fallback", List.of(ARMENIAN + " / " + GEORGIAN + " / Grüße", "private \uE000 use"));
        String text = text(pdf);
        assertTrue(text.contains(ARMENIAN + " / " + GEORGIAN + " / Grüße"), text);
        assertTrue(text.contains("private \uFFFD use"), "DejaVu draws U+FFFD: " + text);
        try (PDDocument doc = PDDocument.load(pdf)) {
            List<PDType0Font> used = fontsOf(doc);
            assertEquals(2, used.size(), used.toString());
            for (PDType0Font f : used) {
                assertTrue(f.isEmbedded(), f.getName());
                assertTrue(f.getName().matches("[A-Z]{6}\\+.*"), "a subset: " + f.getName());
                assertNotNull(
                        ((PDCIDFontType2) f.getDescendantFont())
                                .getFontDescriptor()
                                .getFontFile2(),
                        f.getName());
                assertNotNull(f.getCOSObject().getDictionaryObject(COSName.TO_UNICODE), f.getName());
            }
        }

        PdfFonts none = new PdfFonts(List.of(), tmp.resolve("scratch2"), 1 << 20);
        String without = text(render(none, "No fallback", List.of(ARMENIAN, "zero\uFE0Fwidth")));
        assertTrue(without.contains("????? ??????"), "no font, no U+FFFD either: '?': " + without);
        assertTrue(without.contains("zerowidth"), "an invisible character no font draws is left out: " + without);
    }

    @Test
    void longTextIsWrappedAcrossPagesAndItsScratchFileIsDeletedOnClose() throws IOException {
        Path scratch = tmp.resolve("scratch");
        PdfFonts fonts = new PdfFonts(List.of(), scratch, 16 * 1024);
        StringBuilder paragraph = new StringBuilder();
        for (int i = 0; paragraph.length() < 60_000; i++) {
            paragraph.append("word").append(i).append(' ');
        }
        String longWord = "x".repeat(400);
        List<String> messages = new ArrayList<>();
        messages.add(paragraph.toString().trim());
        messages.add(longWord);
        messages.add("line one\nline two\r\n\ttabbed (parens) and \\ backslash");
        byte[] pdf;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ThreadPdf doc = new ThreadPdf(fonts, "Long")) {
            for (String m : messages) {
                doc.message("assistant", "2025-01-02T03:04:05Z", m);
            }
            try (var files = Files.list(scratch)) {
                assertEquals(1, files.count(), "page content beyond 16 KiB is in a scratch file");
            }
            doc.writeTo(out);
        }
        try (var files = Files.list(scratch)) {
            assertEquals(0, files.count(), "the scratch file is gone");
        }
        pdf = out.toByteArray();
        String text = text(pdf);
        assertTrue(
                text.replaceAll("\\s+", " ").contains(" " + paragraph.toString().trim() + " assistant ("),
                "the paragraph, wrapped");
        assertTrue(text.split("\n(?=word\\d)").length > 100, "lines break between words");
        assertEquals(
                longWord,
                text.substring(text.indexOf("xxx")).split("assistant")[0].replaceAll("\\s+", ""),
                "a word wider than the page is broken, not cut");
        assertTrue(
                text.contains("line one\nline two\n    tabbed (parens) and \\ backslash"),
                text.substring(text.indexOf("line one")));
        try (PDDocument doc = PDDocument.load(pdf)) {
            assertTrue(doc.getNumberOfPages() > 5, "pages: " + doc.getNumberOfPages());
            for (PDPage p : doc.getPages()) {
                assertEquals(595, Math.round(p.getMediaBox().getWidth()));
            }
            assertEquals("Long", doc.getDocumentInformation().getTitle());
        }
        assertFalse(text.contains("\uFFFD"));
    }

    static List<PDType0Font> fontsOf(PDDocument doc) throws IOException {
        List<PDType0Font> out = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (PDPage p : doc.getPages()) {
            for (COSName n : p.getResources().getFontNames()) {
                PDFont f = p.getResources().getFont(n);
                if (!names.contains(f.getName())) {
                    names.add(f.getName());
                    out.add((PDType0Font) f);
                }
            }
        }
        return out;
    }
}
