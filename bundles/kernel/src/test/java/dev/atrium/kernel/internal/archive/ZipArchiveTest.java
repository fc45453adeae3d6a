package dev.atrium.kernel.internal.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.WorkspaceArchivePart;
import dev.atrium.kernel.api.WorkspaceArchivePart.Lines;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
            ZipArchiveReader r = new ZipArchiveReader(zip, "notes", entries, JsonMappers.create(), new HashMap<>());
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
            ZipArchiveReader r = new ZipArchiveReader(
                    zip, "p", Map.of("x.jsonl", zip.getEntry("p/x.jsonl")), JsonMappers.create(), new HashMap<>());
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

    @Test
    void aPartIsRestoredAfterThePartsItRefersToAndFindsTheirNewIds() throws Exception {
        Map<String, WorkspaceArchivePart> present = new LinkedHashMap<>();
        present.put("runs", part("runs", Set.of("threads")));
        present.put("threads", part("threads", Set.of()));
        present.put("memories", part("memories", Set.of()));
        assertEquals(
                List.of("memories", "threads", "runs"),
                WorkspaceArchive.restoreOrder(List.of("memories", "runs", "threads"), present));
        // a part it names that the archive lacks changes nothing; a part this server lacks keeps its place
        assertEquals(List.of("absent", "runs"), WorkspaceArchive.restoreOrder(List.of("absent", "runs"), present));

        Path file = tmp.resolve("empty.zip");
        try (ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(file))) {
            zip.putNextEntry(new ZipEntry("manifest.json"));
        }
        try (ZipFile zip = new ZipFile(file.toFile())) {
            Map<String, Map<String, String>> keys = new HashMap<>();
            new ZipArchiveReader(zip, "threads", Map.of(), JsonMappers.create(), keys).remember("t1", "thr_new");
            ZipArchiveReader runs = new ZipArchiveReader(zip, "runs", Map.of(), JsonMappers.create(), keys);
            assertEquals(Optional.of("thr_new"), runs.idOf("threads", "t1"));
            assertEquals(Optional.empty(), runs.idOf("threads", "t2"));
            assertEquals(Optional.empty(), runs.idOf("memories", "t1"));
        }
    }

    @Test
    void partsThatNameEachOtherAreEachRestoredOnce() {
        Map<String, WorkspaceArchivePart> present = new LinkedHashMap<>();
        present.put("a", part("a", Set.of("b")));
        present.put("b", part("b", Set.of("a")));
        assertEquals(List.of("b", "a"), WorkspaceArchive.restoreOrder(List.of("a", "b"), present));
    }

    private static WorkspaceArchivePart part(String name, Set<String> after) {
        return new WorkspaceArchivePart() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public long export(dev.atrium.kernel.api.SpaceRef space, ArchiveWriter out) {
                return 0;
            }

            @Override
            public long restore(dev.atrium.kernel.api.SpaceRef space, ArchiveReader in) {
                return 0;
            }

            @Override
            public void discard(dev.atrium.kernel.api.SpaceRef space) {}

            @Override
            public Set<String> after() {
                return after;
            }
        };
    }
}
