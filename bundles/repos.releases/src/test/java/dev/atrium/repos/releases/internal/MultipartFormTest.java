package dev.atrium.repos.releases.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MultipartFormTest {

    private static final String B = "----atriumBoundary7MA4YWxk";

    /** Hands out at most {@code chunk} bytes per read, as a network does. */
    static InputStream trickle(byte[] bytes, int chunk) {
        return new ByteArrayInputStream(bytes) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, chunk));
            }
        };
    }

    static byte[] form(byte[] file) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(("preamble to ignore\r\n--" + B + "\r\n"
                        + "Content-Disposition: form-data; name=\"name\"\r\n\r\n"
                        + "app.tar.gz\r\n--" + B + "  \r\n"
                        + "Content-Disposition: form-data; name=\"attachment\"; filename=\"a \\\"b\\\".bin\"\r\n"
                        + "Content-Type: application/gzip\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.write(file);
        out.write(("\r\n--" + B + "--\r\nepilogue").getBytes(StandardCharsets.ISO_8859_1));
        return out.toByteArray();
    }

    @Test
    void partsStreamWhateverTheReadsAndLookalikesOfTheBoundary() throws IOException {
        byte[] file = new byte[300_000];
        new Random(7).nextBytes(file);
        // almost-delimiters inside the bytes, and one across the 64 KiB buffer's edge
        byte[] near = ("\r\n--" + B.substring(0, B.length() - 1) + "X").getBytes(StandardCharsets.ISO_8859_1);
        System.arraycopy(near, 0, file, 1000, near.length);
        System.arraycopy(near, 0, file, 65_530, near.length);
        for (int chunk : new int[] {1, 7, 4096, 1 << 20}) {
            MultipartForm f = new MultipartForm(trickle(form(file), chunk), B);
            MultipartForm.Part name = f.next();
            assertEquals("name", name.name());
            assertNull(name.filename());
            assertEquals("app.tar.gz", new String(name.body().readAllBytes(), StandardCharsets.UTF_8));
            MultipartForm.Part att = f.next();
            assertEquals("attachment", att.name());
            assertEquals("a \"b\".bin", att.filename());
            assertEquals("application/gzip", att.contentType());
            assertArrayEquals(file, att.body().readAllBytes(), "chunk " + chunk);
            assertNull(f.next());
        }
    }

    @Test
    void anUnreadPartIsSkippedAndAnEmptyPartIsEmpty() throws IOException {
        String body = "--" + B + "\r\nContent-Disposition: form-data; name=\"skip\"\r\n\r\nxxxxxxxx\r\n--" + B
                + "\r\nContent-Disposition: form-data; name=\"file\"; filename*=UTF-8''%C3%A9t%C3%A9.txt\r\n\r\n\r\n--"
                + B + "--";
        MultipartForm f = new MultipartForm(trickle(body.getBytes(StandardCharsets.ISO_8859_1), 3), B);
        assertEquals("skip", f.next().name());
        MultipartForm.Part p = f.next();
        assertEquals("été.txt", p.filename());
        assertEquals(0, p.body().readAllBytes().length);
        assertNull(f.next());
    }

    @Test
    void aBodyCutShortOrWithoutHeadersIsMalformed() {
        String cut = "--" + B + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\nabc";
        MultipartForm.Malformed m = assertThrows(MultipartForm.Malformed.class, () -> {
            MultipartForm f = new MultipartForm(trickle(cut.getBytes(StandardCharsets.ISO_8859_1), 5), B);
            f.next().body().readAllBytes();
        });
        assertEquals("the body ends inside a part: its closing boundary is missing", m.getMessage());
        String nameless = "--" + B + "\r\nContent-Type: text/plain\r\n\r\nabc\r\n--" + B + "--";
        assertThrows(
                MultipartForm.Malformed.class,
                () -> new MultipartForm(trickle(nameless.getBytes(StandardCharsets.ISO_8859_1), 5), B).next());
        assertThrows(MultipartForm.Malformed.class, () -> new MultipartForm(trickle(new byte[0], 5), B).next());
    }

    @Test
    void theBoundaryComesFromTheContentType() throws IOException {
        assertEquals("abc", MultipartForm.boundary("multipart/form-data; boundary=abc"));
        assertEquals("a b", MultipartForm.boundary("Multipart/Form-Data;charset=utf-8; BOUNDARY=\"a b\""));
        assertThrows(MultipartForm.Malformed.class, () -> MultipartForm.boundary("application/octet-stream"));
        assertThrows(MultipartForm.Malformed.class, () -> MultipartForm.boundary("multipart/form-data"));
        assertThrows(MultipartForm.Malformed.class, () -> MultipartForm.boundary(null));
        assertThrows(
                MultipartForm.Malformed.class,
                () -> MultipartForm.boundary("multipart/form-data; boundary=" + "x".repeat(71)));
    }

    @Test
    @org.junit.jupiter.api.Timeout(20)
    void aPreambleThatNeverEndsOrTooManyPartsAreMalformedNotReadForGood() throws IOException {
        // a preamble without end: the form stops reading it after its bound, not when the client stops sending
        InputStream endless = new InputStream() {
            @Override
            public int read() {
                return 'x';
            }

            @Override
            public int read(byte[] b, int off, int len) {
                java.util.Arrays.fill(b, off, off + len, (byte) 'x');
                return len;
            }
        };
        MultipartForm.Malformed preamble =
                assertThrows(MultipartForm.Malformed.class, () -> new MultipartForm(endless, B).next());
        assertEquals(true, preamble.getMessage().contains("outside its file"), preamble.getMessage());

        StringBuilder many = new StringBuilder();
        for (int i = 0; i <= MultipartForm.MAX_PARTS; i++) {
            many.append("--")
                    .append(B)
                    .append("\r\nContent-Disposition: form-data; name=\"f")
                    .append(i)
                    .append("\"\r\n\r\nv\r\n");
        }
        many.append("--").append(B).append("--\r\n");
        MultipartForm f =
                new MultipartForm(new ByteArrayInputStream(many.toString().getBytes(StandardCharsets.ISO_8859_1)), B);
        MultipartForm.Malformed parts = assertThrows(MultipartForm.Malformed.class, () -> {
            while (f.next() != null) {
                // each field unread
            }
        });
        assertEquals(true, parts.getMessage().contains("more than " + MultipartForm.MAX_PARTS + " parts"));
    }
}
