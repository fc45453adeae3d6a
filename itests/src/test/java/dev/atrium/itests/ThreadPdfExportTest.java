package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.pdfbox.cos.COSName;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDPage;
import org.apache.pdfbox.pdmodel.font.PDCIDFontType2;
import org.apache.pdfbox.pdmodel.font.PDFont;
import org.apache.pdfbox.pdmodel.font.PDType0Font;
import org.apache.pdfbox.text.PDFTextStripper;
import org.junit.jupiter.api.Test;

/** The PDF export carries a thread's text as written: embedded Unicode fonts, wrapped lines, as many pages as it takes. */
@SharedServer
class ThreadPdfExportTest {

    static final String TITLE = "Reisebericht – Ταξίδι – Путешествие";
    static final String GERMAN = "Grüße aus München! Äpfel, Öl und Übermaß, „Straße“.";
    static final String GREEK = "Καλημέρα κόσμε· ξεσκεπάζω την ψυχοφθόρα βδελυγμία.";
    static final String RUSSIAN = "Съешь же ещё этих мягких французских булок, да выпей же чаю.";

    static byte[] pdf(AtriumServer server, User u, String thread) throws Exception {
        HttpResponse<byte[]> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(
                                        URI.create(server.base() + "/api/threads/" + thread + "/export?format=pdf"))
                                .header("Authorization", "Bearer " + u.http().token())
                                .build(),
                        HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, r.statusCode(), new String(r.body()));
        assertEquals("application/pdf", r.headers().firstValue("Content-Type").orElse(""));
        assertEquals(
                "attachment; filename=\"" + thread + ".pdf\"",
                r.headers().firstValue("Content-Disposition").orElse(""));
        return r.body();
    }

    @Test
    void germanGreekAndRussianComeOutOfThePdfExactlyInEmbeddedFontsAndALongParagraphSpansPages(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        String id = ThreadsTest.thread(u, TITLE);
        StringBuilder paragraph = new StringBuilder();
        for (int i = 0; paragraph.length() < 20_000; i++) {
            paragraph.append("Satz ").append(i).append(" über Ελλάδα und Россия, ");
        }
        String longText = paragraph.toString().trim();
        for (String content : List.of(GERMAN, GREEK, RUSSIAN, longText)) {
            Http.Reply m =
                    u.http().post("/api/threads/" + id + "/messages", Map.of("role", "assistant", "content", content));
            assertEquals(201, m.status(), m.body());
        }
        String createdAt = u.http()
                .get("/api/threads/" + id + "/messages?limit=1")
                .json()
                .path("messages")
                .get(0)
                .path("created_at")
                .asText();

        try (PDDocument doc = PDDocument.load(pdf(server, u, id))) {
            String text = new PDFTextStripper().getText(doc);
            assertTrue(text.startsWith(TITLE + "\n"), text.substring(0, 200));
            assertTrue(text.contains("assistant (" + createdAt + "):\n" + GERMAN + "\n"), text.substring(0, 500));
            assertTrue(text.contains("\n" + GREEK + "\n"), text.substring(0, 500));
            assertTrue(text.contains("\n" + RUSSIAN + "\n"), text.substring(0, 500));
            // wrapped into lines at spaces: the same words with line breaks where spaces were
            assertTrue(text.replaceAll("\\s+", " ").contains(" " + longText + " "), "the long paragraph, whole");
            assertFalse(text.contains("?") || text.contains("\uFFFD"), "nothing replaced");
            assertEquals(TITLE, doc.getDocumentInformation().getTitle());

            assertTrue(doc.getNumberOfPages() > 1, "pages: " + doc.getNumberOfPages());
            List<String> fonts = new ArrayList<>();
            for (PDPage page : doc.getPages()) {
                assertEquals(842, Math.round(page.getMediaBox().getHeight()), "A4");
                for (COSName name : page.getResources().getFontNames()) {
                    PDFont font = page.getResources().getFont(name);
                    fonts.add(font.getName());
                    PDType0Font type0 = (PDType0Font) font;
                    assertTrue(type0.isEmbedded(), font.getName());
                    assertNotNull(
                            ((PDCIDFontType2) type0.getDescendantFont())
                                    .getFontDescriptor()
                                    .getFontFile2(),
                            "embedded TrueType");
                    assertTrue(
                            font.getName().matches("[A-Z]{6}\\+LiberationSans"),
                            "a subset of Liberation Sans: " + font.getName());
                    assertNotNull(type0.getCOSObject().getDictionaryObject(COSName.TO_UNICODE), "a ToUnicode map");
                }
            }
            assertFalse(fonts.isEmpty());
        }
    }

    @Test
    void anEmptyThreadExportsItsTitleOnOnePage(AtriumServer server) throws Exception {
        User u = server.newUser();
        String id = ThreadsTest.thread(u, "Nothing yet");
        try (PDDocument doc = PDDocument.load(pdf(server, u, id))) {
            assertEquals(1, doc.getNumberOfPages());
            assertEquals("Nothing yet", new PDFTextStripper().getText(doc).trim());
        }
        User stranger = server.newUser();
        assertEquals(
                404,
                stranger.http().get("/api/threads/" + id + "/export?format=pdf").status());
    }
}
