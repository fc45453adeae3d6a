package dev.atrium.threads.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a plain PDF 1.4 document: A4 pages of Helvetica text, lines wrapped, pages broken, an xref table.
 * Characters outside Latin-1 are written as '?', since the standard fonts carry no others.
 */
final class Pdf {

    private static final int LINES_PER_PAGE = 60;
    private static final int WRAP = 95;

    static byte[] render(String title, List<String> paragraphs) {
        List<String> lines = new ArrayList<>();
        for (String p : paragraphs) {
            for (String raw : p.split("\n", -1)) {
                wrap(raw, lines);
            }
            lines.add("");
        }
        List<List<String>> pages = new ArrayList<>();
        for (int i = 0; i < lines.size(); i += LINES_PER_PAGE) {
            pages.add(lines.subList(i, Math.min(lines.size(), i + LINES_PER_PAGE)));
        }
        if (pages.isEmpty()) {
            pages.add(List.of());
        }
        // objects: 1 catalog, 2 pages, 3 font, 4 info, then (page, content) per page
        List<byte[]> objects = new ArrayList<>();
        objects.add(ascii("<< /Type /Catalog /Pages 2 0 R >>"));
        StringBuilder kids = new StringBuilder();
        for (int i = 0; i < pages.size(); i++) {
            kids.append(5 + 2 * i).append(" 0 R ");
        }
        objects.add(ascii("<< /Type /Pages /Kids [" + kids + "] /Count " + pages.size() + " >>"));
        objects.add(ascii("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"));
        objects.add(latin1("<< /Title (" + escape(title) + ") /Producer (Atrium) >>"));
        for (int i = 0; i < pages.size(); i++) {
            StringBuilder s = new StringBuilder("BT /F1 10 Tf 12 TL 50 800 Td\n");
            if (i == 0) {
                s.append("/F1 14 Tf (").append(escape(title)).append(") Tj T* T* /F1 10 Tf\n");
            }
            for (String line : pages.get(i)) {
                s.append('(').append(escape(line)).append(") Tj T*\n");
            }
            s.append("ET");
            byte[] content = s.toString().getBytes(StandardCharsets.ISO_8859_1);
            objects.add(ascii("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents "
                    + (6 + 2 * i) + " 0 R >>"));
            ByteArrayOutputStream stream = new ByteArrayOutputStream();
            stream.writeBytes(ascii("<< /Length " + content.length + " >>\nstream\n"));
            stream.writeBytes(content);
            stream.writeBytes(ascii("\nendstream"));
            objects.add(stream.toByteArray());
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(ascii("%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n"));
        long[] offsets = new long[objects.size()];
        for (int i = 0; i < objects.size(); i++) {
            offsets[i] = out.size();
            out.writeBytes(ascii((i + 1) + " 0 obj\n"));
            out.writeBytes(objects.get(i));
            out.writeBytes(ascii("\nendobj\n"));
        }
        long xref = out.size();
        StringBuilder x = new StringBuilder("xref\n0 " + (objects.size() + 1) + "\n0000000000 65535 f \n");
        for (long o : offsets) {
            x.append(String.format("%010d 00000 n \n", o));
        }
        x.append("trailer\n<< /Size ").append(objects.size() + 1).append(" /Root 1 0 R /Info 4 0 R >>\nstartxref\n").append(xref)
                .append("\n%%EOF\n");
        out.writeBytes(ascii(x.toString()));
        return out.toByteArray();
    }

    private static void wrap(String line, List<String> out) {
        String rest = line;
        while (rest.length() > WRAP) {
            int cut = rest.lastIndexOf(' ', WRAP);
            if (cut <= 0) {
                cut = WRAP;
            }
            out.add(rest.substring(0, cut));
            rest = rest.substring(cut).stripLeading();
        }
        out.add(rest);
    }

    private static String escape(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '(' || c == ')' || c == '\\') {
                b.append('\\').append(c);
            } else if (c == '\t') {
                b.append("    ");
            } else if (c < 32) {
                b.append(' ');
            } else if (c > 255) {
                b.append('?');
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static byte[] latin1(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private Pdf() {
    }
}
