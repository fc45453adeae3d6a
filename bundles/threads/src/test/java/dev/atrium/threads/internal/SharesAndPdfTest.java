package dev.atrium.threads.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

class SharesAndPdfTest {

    @Test
    void passwordHashesAreSaltedAndVerify() {
        String a = Passwords.hash("correct horse");
        String b = Passwords.hash("correct horse");
        assertNotEquals(a, b);
        assertTrue(a.startsWith("pbkdf2-sha256$" + Passwords.ITERATIONS + "$"));
        assertTrue(Passwords.verify("correct horse", a));
        assertFalse(Passwords.verify("correct horsf", a));
        assertFalse(Passwords.verify("x", "garbage"));
    }

    @Test
    void longThreadsBreakIntoPagesWithAValidXrefTable() {
        List<String> paragraphs = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            paragraphs.add("paragraph " + i + " " + "word ".repeat(40) + "(parens) and \\ backslash ☃");
        }
        String pdf = new String(Pdf.render("Title", paragraphs), StandardCharsets.ISO_8859_1);
        assertTrue(pdf.startsWith("%PDF-1.4"));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("/Count (\\d+)").matcher(pdf);
        assertTrue(m.find());
        int count = Integer.parseInt(m.group(1));
        assertTrue(count > 5, "pages: " + count);
        int startxref = Integer.parseInt(pdf.substring(pdf.lastIndexOf("startxref") + 10, pdf.lastIndexOf("%%EOF")).trim());
        String[] rows = pdf.substring(startxref).split("\n");
        int objects = Integer.parseInt(rows[1].split(" ")[1]);
        for (int i = 1; i < objects; i++) {
            assertTrue(pdf.startsWith(i + " 0 obj", Integer.parseInt(rows[2 + i].substring(0, 10))), "object " + i);
        }
        assertTrue(pdf.contains("\\(parens\\)"));
        assertTrue(pdf.contains("backslash ?"));
    }
}
