package dev.atrium.actions.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;

/** One file out of an artifact's archive: found by its path, bounded by the caller's limit, never outside it. */
class ArtifactZipTest {

    static byte[] zip(Map<String, byte[]> entries) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(out)) {
            for (var e : entries.entrySet()) {
                zip.putNextEntry(new ZipEntry(e.getKey()));
                zip.write(e.getValue());
                zip.closeEntry();
            }
        }
        return out.toByteArray();
    }

    static byte[] text(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String read(byte[] archive, String path, long max) throws IOException {
        return new String(ArtifactZip.read(new ByteArrayInputStream(archive), path, max), StandardCharsets.UTF_8);
    }

    @Test
    void aNamedFileIsReadWhetherOrNotItsPathStartsWithDotSlash() throws Exception {
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("dist/", new byte[0]);
        files.put("dist/worker.js", text("export default {}\n"));
        files.put("README.md", text("readme"));
        byte[] archive = zip(files);
        assertEquals("export default {}\n", read(archive, "dist/worker.js", 1000));
        assertEquals("export default {}\n", read(archive, "./dist/worker.js", 1000));
        assertEquals("readme", read(archive, "README.md", 6), "a file of exactly the limit is read");
    }

    @Test
    void withoutAPathTheOnlyFileIsReadAndSeveralAreRefusedByName() throws Exception {
        assertEquals("only", read(zip(Map.of("worker.js", text("only"))), null, 100));
        assertEquals("only", read(zip(Map.of("worker.js", text("only"))), "", 100));
        Map<String, byte[]> two = new LinkedHashMap<>();
        two.put("b.js", text("b"));
        two.put("a.js", text("a"));
        IOException e = assertThrows(IOException.class, () -> read(zip(two), "", 100));
        assertTrue(e.getMessage().contains("2 files") && e.getMessage().contains("a.js, b.js"), e.getMessage());
        e = assertThrows(IOException.class, () -> read(zip(Map.of()), null, 100));
        assertTrue(e.getMessage().contains("no files"), e.getMessage());
    }

    @Test
    void aMissingPathNamesTheFilesThereAreTheFirstTwentyAtMost() throws Exception {
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("worker.js", text("w"));
        files.put("sha.txt", text("s"));
        IOException e = assertThrows(IOException.class, () -> read(zip(files), "dist/worker.js", 100));
        assertTrue(
                e.getMessage().contains("no file dist/worker.js")
                        && e.getMessage().contains("sha.txt, worker.js"),
                e.getMessage());

        Map<String, byte[]> many = new LinkedHashMap<>();
        for (int i = 0; i < 25; i++) {
            many.put(String.format("f%02d.txt", i), text("" + i));
        }
        e = assertThrows(IOException.class, () -> read(zip(many), "nope", 100));
        assertTrue(e.getMessage().contains("f00.txt") && e.getMessage().contains("f19.txt"), e.getMessage());
        assertFalse(e.getMessage().contains("f20.txt"), e.getMessage());
        assertTrue(e.getMessage().endsWith("and 5 more"), e.getMessage());
    }

    @Test
    void aFileLargerThanTheLimitIsRefusedWhetherTheArchiveStatesItsSizeOrNot() throws Exception {
        // deflated by ZipOutputStream: the size follows the data, so the reader learns it only by reading
        byte[] zeros = new byte[4 * 1024 * 1024];
        IOException e =
                assertThrows(IOException.class, () -> read(zip(Map.of("big.bin", zeros)), "big.bin", 1024 * 1024));
        assertTrue(e.getMessage().contains("larger than 1048576 bytes"), e.getMessage());

        // stored, with its size in the entry's header: refused before a byte of it is read
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(out)) {
            byte[] data = text("0123456789");
            ZipEntry stored = new ZipEntry("stored.txt");
            stored.setMethod(ZipEntry.STORED);
            stored.setSize(data.length);
            CRC32 crc = new CRC32();
            crc.update(data);
            stored.setCrc(crc.getValue());
            zip.putNextEntry(stored);
            zip.write(data);
            zip.closeEntry();
        }
        e = assertThrows(IOException.class, () -> read(out.toByteArray(), "stored.txt", 9));
        assertTrue(e.getMessage().contains("larger than 9 bytes"), e.getMessage());
        assertEquals("0123456789", read(out.toByteArray(), "stored.txt", 10));
    }

    @Test
    void anEntryOrAPathWithDotDotIsRefused() throws Exception {
        Map<String, byte[]> evil = new LinkedHashMap<>();
        evil.put("../../etc/passwd", text("root"));
        evil.put("worker.js", text("w"));
        IOException e = assertThrows(IOException.class, () -> read(zip(evil), "worker.js", 100));
        assertTrue(e.getMessage().contains("leads outside"), e.getMessage());
        assertThrows(IOException.class, () -> read(zip(Map.of("/abs.txt", text("a"))), "abs.txt", 100));
        assertThrows(IOException.class, () -> read(zip(Map.of("a\\..\\..\\b", text("a"))), "x", 100));

        byte[] fine = zip(Map.of("worker.js", text("w")));
        for (String path : new String[] {"../worker.js", "dist/../../worker.js", "/worker.js", "..\\worker.js"}) {
            e = assertThrows(IOException.class, () -> read(fine, path, 100), path);
            assertTrue(e.getMessage().contains("has no .."), e.getMessage());
        }
        assertTrue(ArtifactZip.safe("dist/..worker.js"), "a name that merely starts with two dots is fine");
    }

    @Test
    void aFileIsReadAsTheArchiveStreamsByAndWhatFollowsItIsNotRead() throws Exception {
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("first.txt", text("first"));
        byte[] noise = new byte[2 * 1024 * 1024];
        new Random(7).nextBytes(noise); // incompressible: the archive is as large as it
        files.put("after.bin", noise);
        byte[] archive = zip(files);
        long[] consumed = {0};
        InputStream counting = new FilterInputStream(new ByteArrayInputStream(archive)) {
            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = super.read(b, off, len);
                consumed[0] += Math.max(n, 0);
                return n;
            }
        };
        assertArrayEquals(text("first"), ArtifactZip.read(counting, "first.txt", 100));
        assertTrue(consumed[0] < 64 * 1024, "read " + consumed[0] + " bytes of an archive of " + archive.length);
    }
}
