package dev.atrium.kernel.internal.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.WorkspaceArchivePart.Lines;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ZipArchiveTest {

    @TempDir
    Path tmp;

    @Test
    void aPartsEntriesGoUnderItsFolderAndReadBackAsLinesAndBytes() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            ZipArchiveWriter w = new ZipArchiveWriter(zip, "notes", JsonMappers.create());
            Lines lines = w.lines("notes.jsonl");
            lines.add(Map.of("text", "one"));
            lines.add(Map.of("text", "two ✓"));
            try (OutputStream raw = w.entry("blobs/1")) {
                raw.write(new byte[] {1, 2, 3});
            }
            // an entry the part did not close ends with the part
            w.entry("blobs/2").write(4);
            w.finish();
        }
        Path file = tmp.resolve("a.zip");
        Files.write(file, bytes.toByteArray());
        try (ZipFile zip = new ZipFile(file.toFile())) {
            Map<String, ZipEntry> entries = new LinkedHashMap<>();
            zip.stream().forEach(e -> entries.put(e.getName().substring("notes/".length()), e));
            assertEquals(List.of("notes.jsonl", "blobs/1", "blobs/2"), List.copyOf(entries.keySet()));
            ZipArchiveReader r = new ZipArchiveReader(zip, "notes", entries, JsonMappers.create());
            List<String> read = new ArrayList<>();
            r.lines("notes.jsonl", line -> read.add(line.path("text").asText()));
            assertEquals(List.of("one", "two ✓"), read);
            r.lines("absent.jsonl", line -> read.add("never"));
            assertEquals(2, read.size());
            try (var in = r.open("blobs/1")) {
                assertEquals(3, in.readAllBytes().length);
            }
            ApiException missing = assertThrows(ApiException.class, () -> r.open("blobs/9"));
            assertEquals(400, missing.status());
        }
    }

    @Test
    void aLineThatIsNotAJsonObjectIsBadRequestNamingItsEntryAndLine() throws Exception {
        Path file = tmp.resolve("b.zip");
        try (ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(file))) {
            zip.putNextEntry(new ZipEntry("p/x.jsonl"));
            zip.write("{\"a\":1}\n\n[1,2]\n".getBytes(StandardCharsets.UTF_8));
            zip.closeEntry();
        }
        try (ZipFile zip = new ZipFile(file.toFile())) {
            ZipArchiveReader r =
                    new ZipArchiveReader(zip, "p", Map.of("x.jsonl", zip.getEntry("p/x.jsonl")), JsonMappers.create());
            List<JsonNode> read = new ArrayList<>();
            ApiException e = assertThrows(ApiException.class, () -> r.lines("x.jsonl", read::add));
            assertEquals("line 3 of p/x.jsonl is not a JSON object", e.getMessage());
            assertEquals(1, read.size());
        }
    }

    @Test
    void anEntryNameThatWouldLeaveItsFolderIsRefused() {
        assertEquals("p/a/b.txt", WorkspaceArchive.entryPath("p", "a/b.txt"));
        for (String bad : List.of("", "/abs", "../up", "a/../b", "a//b", "a\\b", "./a")) {
            assertThrows(IllegalArgumentException.class, () -> WorkspaceArchive.entryPath("p", bad), bad);
        }
    }

    @Test
    void linesEndAtNewlinesWithoutTheirCarriageReturn() throws Exception {
        BufferedReader in = new BufferedReader(new StringReader("a\r\nb\nc"));
        assertEquals("a", WorkspaceArchive.boundedLine(in));
        assertEquals("b", WorkspaceArchive.boundedLine(in));
        assertEquals("c", WorkspaceArchive.boundedLine(in));
        assertNull(WorkspaceArchive.boundedLine(in));
    }
}
