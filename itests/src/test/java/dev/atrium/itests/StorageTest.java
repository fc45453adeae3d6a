package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.junit.jupiter.api.Test;

/** Workspace storage over HTTP on the real runtime: every route, its errors, and who may reach what. */
@SharedServer
class StorageTest {

    static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    record Raw(int status, byte[] body, HttpResponse<byte[]> response) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        String header(String name) {
            return response.headers().firstValue(name).orElse(null);
        }

        JsonNode json() {
            try {
                return Http.JSON.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + text());
            }
        }
    }

    /** A request with raw bytes in and out; {@code headers} alternate name and value. */
    static Raw raw(String method, String url, String token, byte[] body, String... headers) {
        try {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(120));
            if (token != null) {
                b.header("Authorization", "Bearer " + token);
            }
            for (int i = 0; i < headers.length; i += 2) {
                b.header(headers[i], headers[i + 1]);
            }
            b.method(
                    method,
                    body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
            HttpResponse<byte[]> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            return new Raw(r.statusCode(), r.body(), r);
        } catch (IOException e) {
            throw new IllegalStateException(method + " " + url + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static String base(User u) {
        return "/api/spaces/" + u.defaultSpaceId() + "/storage";
    }

    static JsonNode createFile(User u, String path, String content) {
        Http.Reply r = u.http().post(base(u) + "/files", Map.of("path", path, "content", content));
        assertEquals(201, r.status(), r.body());
        return r.get("file");
    }

    static JsonNode folder(User u, String path) {
        Http.Reply r = u.http().post(base(u) + "/folders", Map.of("path", path));
        assertEquals(201, r.status(), r.body());
        return r.get("folder");
    }

    static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    static void assertSpecError(int status, Http.Reply r) {
        assertEquals(status, r.status(), r.body());
        assertSpecBody(r.json());
    }

    static void assertSpecBody(JsonNode json) {
        assertTrue(
                json != null
                        && json.size() == 1
                        && json.path("error").path("code").isTextual()
                        && json.path("error").path("message").isTextual(),
                "the spec's error body: " + json);
    }

    /** Every listed entry of the workspace, path → the entry, walked folder by folder. */
    static Map<String, JsonNode> tree(User u) {
        Map<String, JsonNode> out = new TreeMap<>();
        List<String> folders = new ArrayList<>(List.of(""));
        while (!folders.isEmpty()) {
            String path = folders.remove(0);
            for (int offset = 0; ; offset += 100) {
                Http.Reply r = u.http()
                        .get(base(u) + "?limit=100&offset=" + offset + "&path="
                                + java.net.URLEncoder.encode(path, StandardCharsets.UTF_8));
                assertEquals(200, r.status(), r.body());
                for (JsonNode e : r.get("files")) {
                    out.put(e.path("path").asText(), e);
                    if (e.path("kind").asText().equals("folder")) {
                        folders.add(e.path("path").asText());
                    }
                }
                if (r.get("files").size() < 100) {
                    break;
                }
            }
        }
        return out;
    }

    // ---------------------------------------------------------------- the routes

    @Test
    void foldersAndFilesAreCreatedListedReadRenamedMovedAndDeleted(AtriumServer server) {
        User u = server.newUser();
        JsonNode docs = folder(u, "docs");
        assertEquals(
                Set.of(
                        "id",
                        "space_id",
                        "parent_id",
                        "name",
                        "path",
                        "kind",
                        "size",
                        "content_type",
                        "sha256",
                        "etag",
                        "created_at",
                        "updated_at"),
                WorkspacesTest.fields(docs));
        assertEquals("folder", docs.path("kind").asText());
        JsonNode a = createFile(u, "docs/a.md", "# A");
        assertEquals(docs.path("id").asText(), a.path("parent_id").asText());
        assertEquals("text/markdown", a.path("content_type").asText());
        assertEquals(3, a.path("size").asLong());
        // a file in a missing folder makes the folders above it
        JsonNode deep = createFile(u, "docs/x/y/z.txt", "");
        assertEquals(0, deep.path("size").asLong());
        assertEquals(Set.of("docs", "docs/a.md", "docs/x", "docs/x/y", "docs/x/y/z.txt"), tree(u).keySet());
        JsonNode empty = u.http()
                .post(
                        base(u) + "/files",
                        Map.of("name", "empty.bin", "parent_id", docs.path("id").asText()))
                .get("file");
        assertEquals("docs/empty.bin", empty.path("path").asText());

        assertEquals(a, u.http().get(base(u) + "/" + a.path("id").asText()).get("file"));
        assertSpecError(409, u.http().post(base(u) + "/files", Map.of("path", "docs/a.md", "content", "again")));
        assertSpecError(409, u.http().post(base(u) + "/folders", Map.of("path", "docs")));

        // rename, then move a folder with its subtree
        JsonNode renamed = u.http()
                .patch(base(u) + "/" + a.path("id").asText(), Map.of("name", "b.md"))
                .get("file");
        assertEquals("docs/b.md", renamed.path("path").asText());
        JsonNode archive = folder(u, "archive");
        Http.Reply moved = u.http()
                .patch(
                        base(u) + "/" + docs.path("id").asText(),
                        Map.of("parent_id", archive.path("id").asText()));
        assertEquals(200, moved.status(), moved.body());
        assertEquals("archive/docs", moved.get("file").path("path").asText());
        assertEquals(
                Set.of(
                        "archive",
                        "archive/docs",
                        "archive/docs/b.md",
                        "archive/docs/empty.bin",
                        "archive/docs/x",
                        "archive/docs/x/y",
                        "archive/docs/x/y/z.txt"),
                tree(u).keySet());
        assertEquals(
                "archive/docs/x/y/z.txt",
                u.http()
                        .get(base(u) + "/" + deep.path("id").asText())
                        .get("file")
                        .path("path")
                        .asText());
        // a name collision is 409, a folder into its own subtree 400, and both leave everything where it was
        folder(u, "docs");
        Map<String, JsonNode> before = tree(u);
        assertSpecError(409, u.http().patch(base(u) + "/" + docs.path("id").asText(), Map.of("path", "docs")));
        assertSpecError(
                400,
                u.http().patch(base(u) + "/" + archive.path("id").asText(), Map.of("path", "archive/docs/x/archive")));
        assertEquals(before, tree(u));
        // back to the root with an explicit null parent
        Map<String, Object> toRoot = new LinkedHashMap<>();
        toRoot.put("parent_id", null);
        toRoot.put("name", "docs2");
        assertEquals(
                "docs2",
                u.http()
                        .patch(base(u) + "/" + docs.path("id").asText(), toRoot)
                        .get("file")
                        .path("path")
                        .asText());

        // deleting a folder deletes its subtree
        Http.Reply deleted = u.http().delete(base(u) + "/" + docs.path("id").asText());
        assertEquals(200, deleted.status(), deleted.body());
        assertEquals(6, deleted.get("deleted").asInt(), "the folder and the five entries under it");
        assertEquals(Set.of("archive", "docs"), tree(u).keySet());
        assertSpecError(404, u.http().get(base(u) + "/" + deep.path("id").asText()));
        assertSpecError(404, u.http().delete(base(u) + "/" + docs.path("id").asText()));
    }

    @Test
    void listsArePaginatedWithFoldersFirstAndSortable(AtriumServer server) {
        User u = server.newUser();
        for (String n : List.of("c.txt", "a.txt", "b.txt")) {
            createFile(u, "d/" + n, n.repeat(n.charAt(0) - 'a' + 1));
        }
        folder(u, "d/z-folder");
        JsonNode page = u.http().get(base(u) + "?path=d&limit=2").json();
        assertEquals(4, page.path("total").asInt());
        assertEquals(List.of("z-folder", "a.txt"), names(page.path("files")));
        assertEquals(
                List.of("b.txt", "c.txt"),
                names(u.http().get(base(u) + "?path=d&limit=2&offset=2").json().path("files")));
        assertEquals(
                List.of("z-folder", "c.txt", "b.txt", "a.txt"),
                names(u.http()
                        .get(base(u) + "?path=d&sort=size&order=desc")
                        .json()
                        .path("files")));
        String folderId = u.http()
                .get(base(u) + "?path=d")
                .json()
                .path("folder")
                .path("id")
                .asText();
        assertEquals(
                4,
                u.http()
                        .get(base(u) + "?folder_id=" + folderId)
                        .json()
                        .path("total")
                        .asInt());
        assertSpecError(400, u.http().get(base(u) + "?path=d&sort=colour"));
        assertSpecError(400, u.http().get(base(u) + "?path=d&order=up"));
        assertSpecError(400, u.http().get(base(u) + "?limit=0"));
        assertSpecError(404, u.http().get(base(u) + "?path=nowhere"));
        assertSpecError(400, u.http().get(base(u) + "?path=d/a.txt"));
    }

    private static List<String> names(JsonNode files) {
        List<String> out = new ArrayList<>();
        files.forEach(f -> out.add(f.path("name").asText()));
        return out;
    }

    @Test
    void contentIsReadAndWrittenAsTextOrBinaryWithItsTypeAndAStaleWriteIs412(AtriumServer server) throws Exception {
        User u = server.newUser();
        JsonNode f = createFile(u, "notes.txt", "first");
        String url = server.base() + base(u) + "/" + f.path("id").asText() + "/content";
        Raw read = raw("GET", url, u.http().token(), null);
        assertEquals(200, read.status());
        assertEquals("first", read.text());
        String etag = read.header("ETag");
        assertEquals(f.path("etag").asText(), etag);
        assertEquals(
                304,
                raw("GET", url, u.http().token(), null, "If-None-Match", etag).status());

        Raw written = raw(
                "PUT",
                url,
                u.http().token(),
                "second".getBytes(),
                "Content-Type",
                "text/plain; charset=utf-8",
                "If-Match",
                etag);
        assertEquals(200, written.status(), written.text());
        String etag2 = written.header("ETag");
        assertNotEquals(etag, etag2);
        assertEquals(
                "text/plain; charset=utf-8",
                written.json().path("file").path("content_type").asText().toLowerCase(java.util.Locale.ROOT));
        // a write based on the old ETag is refused and changes nothing
        Raw stale =
                raw("PUT", url, u.http().token(), "third".getBytes(), "Content-Type", "text/plain", "If-Match", etag);
        assertEquals(412, stale.status(), stale.text());
        assertSpecBody(stale.json());
        assertEquals("second", raw("GET", url, u.http().token(), null).text());

        byte[] binary = new byte[300_000];
        new Random(7).nextBytes(binary);
        Raw bin = raw("PUT", url, u.http().token(), binary, "Content-Type", "image/png");
        assertEquals(200, bin.status(), bin.text());
        assertEquals(sha256(binary), bin.json().path("file").path("sha256").asText());
        Raw back = raw("GET", url, u.http().token(), null);
        assertEquals("image/png", back.header("Content-Type"));
        assertArrayEquals(binary, back.body());
        // a folder has no content
        JsonNode dir = folder(u, "dir");
        assertEquals(
                400,
                raw(
                                "GET",
                                server.base() + base(u) + "/" + dir.path("id").asText() + "/content",
                                u.http().token(),
                                null)
                        .status());
    }

    @Test
    void downloadsStreamWithADispositionAndARangeReturnsExactlyItsBytes(AtriumServer server) throws Exception {
        User u = server.newUser();
        JsonNode f = createFile(u, "r\u00e9sum\u00e9 \"final\".txt", "x");
        byte[] bytes = new byte[1 << 20];
        new Random(11).nextBytes(bytes);
        assertEquals(
                200,
                raw(
                                "PUT",
                                server.base() + base(u) + "/" + f.path("id").asText() + "/content",
                                u.http().token(),
                                bytes,
                                "Content-Type",
                                "application/octet-stream")
                        .status());
        String url = server.base() + base(u) + "/download/" + f.path("id").asText();
        Raw whole = raw("GET", url, u.http().token(), null);
        assertEquals(200, whole.status());
        assertArrayEquals(bytes, whole.body());
        assertEquals(
                "attachment; filename=\"r_sum_ _final_.txt\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.txt",
                whole.header("Content-Disposition"));
        assertEquals("bytes", whole.header("Accept-Ranges"));

        Raw part = raw("GET", url, u.http().token(), null, "Range", "bytes=1000-1999");
        assertEquals(206, part.status());
        assertEquals("bytes 1000-1999/" + bytes.length, part.header("Content-Range"));
        assertArrayEquals(java.util.Arrays.copyOfRange(bytes, 1000, 2000), part.body());
        Raw suffix = raw("GET", url, u.http().token(), null, "Range", "bytes=-10");
        assertArrayEquals(java.util.Arrays.copyOfRange(bytes, bytes.length - 10, bytes.length), suffix.body());
        Raw open = raw("GET", url, u.http().token(), null, "Range", "bytes=" + (bytes.length - 3) + "-");
        assertArrayEquals(java.util.Arrays.copyOfRange(bytes, bytes.length - 3, bytes.length), open.body());
        for (String bad :
                List.of("bytes=" + bytes.length + "-", "bytes=5-1", "bytes=abc", "lines=1-2", "bytes=0-1,5-6")) {
            Raw r = raw("GET", url, u.http().token(), null, "Range", bad);
            assertEquals(416, r.status(), bad);
            assertEquals("bytes */" + bytes.length, r.header("Content-Range"));
            assertSpecBody(r.json());
        }
    }

    /**
     * Downloads are written from the blob's file in 16 MiB mapped windows (FileBody): ranges that start, end or
     * straddle a window's edge, by token, by signed URL and with If-Range, answer exactly their bytes, the right
     * Content-Length and Content-Range, and the ETag of the bytes served.
     */
    @Test
    void rangesAcrossTheMappedWindowsAnswerExactlyTheirBytesAndTheETag(AtriumServer server) throws Exception {
        User u = server.newUser();
        String id = createFile(u, "windows.bin", "x").path("id").asText();
        int window = 16 << 20;
        byte[] bytes = new byte[2 * window + 4099];
        new Random(16).nextBytes(bytes);
        Raw put = raw(
                "PUT",
                server.base() + base(u) + "/" + id + "/content",
                u.http().token(),
                bytes,
                "Content-Type",
                "application/octet-stream");
        assertEquals(200, put.status(), put.text());
        String etag = "\"" + sha256(bytes) + "\"";
        assertEquals(etag, put.header("ETag"));
        String url = server.base() + base(u) + "/download/" + id;

        Raw whole = raw("GET", url, u.http().token(), null);
        assertEquals(200, whole.status());
        assertEquals(String.valueOf(bytes.length), whole.header("Content-Length"));
        assertEquals(etag, whole.header("ETag"));
        assertEquals(etag, "\"" + sha256(whole.body()) + "\"", "the whole file, byte for byte");
        Raw content = raw(
                "GET", server.base() + base(u) + "/" + id + "/content", u.http().token(), null);
        assertEquals(etag, content.header("ETag"));
        assertEquals(etag, "\"" + sha256(content.body()) + "\"", "the content route serves the same bytes");

        long[][] ranges = {
            {window - 1, window},
            {window - 1, window + 1},
            {window, window},
            {0, window - 1},
            {0, window},
            {window - 10, 2 * window + 9},
            {2 * window, bytes.length - 1},
            {1, bytes.length - 2},
            {bytes.length - 1, bytes.length - 1}
        };
        for (long[] r : ranges) {
            Raw part = raw("GET", url, u.http().token(), null, "Range", "bytes=" + r[0] + "-" + r[1]);
            String what = "bytes=" + r[0] + "-" + r[1];
            assertEquals(206, part.status(), what);
            assertEquals("bytes " + r[0] + "-" + r[1] + "/" + bytes.length, part.header("Content-Range"), what);
            assertEquals(String.valueOf(r[1] - r[0] + 1), part.header("Content-Length"), what);
            assertEquals(etag, part.header("ETag"), what);
            assertArrayEquals(java.util.Arrays.copyOfRange(bytes, (int) r[0], (int) r[1] + 1), part.body(), what);
        }
        Raw tail = raw("GET", url, u.http().token(), null, "Range", "bytes=-" + (window + 5));
        assertArrayEquals(java.util.Arrays.copyOfRange(bytes, bytes.length - window - 5, bytes.length), tail.body());

        // If-Range: the file's ETag keeps the range, another answers the whole file
        Raw kept = raw(
                "GET",
                url,
                u.http().token(),
                null,
                "Range",
                "bytes=" + (window - 3) + "-" + (window + 2),
                "If-Range",
                etag);
        assertEquals(206, kept.status());
        assertArrayEquals(java.util.Arrays.copyOfRange(bytes, window - 3, window + 3), kept.body());
        Raw stale = raw(
                "GET",
                url,
                u.http().token(),
                null,
                "Range",
                "bytes=" + (window - 3) + "-" + (window + 2),
                "If-Range",
                "\"0\"");
        assertEquals(200, stale.status());
        assertEquals(bytes.length, stale.body().length);

        // the signed URL takes the same path
        String signed = u.http()
                .get(base(u) + "/download-url?file_id=" + id + "&expires_in=60")
                .get("url")
                .asText();
        Raw anonymous = raw("GET", signed, null, null, "Range", "bytes=" + (window - 7) + "-" + (2 * window + 7));
        assertEquals(206, anonymous.status(), anonymous.text());
        assertEquals(etag, anonymous.header("ETag"));
        assertArrayEquals(java.util.Arrays.copyOfRange(bytes, window - 7, 2 * window + 8), anonymous.body());

        // a new content: new bytes, new ETag, through the same path
        byte[] second = java.util.Arrays.copyOf(bytes, window + 1);
        second[window] ^= 1;
        assertEquals(
                200,
                raw(
                                "PUT",
                                server.base() + base(u) + "/" + id + "/content",
                                u.http().token(),
                                second,
                                "Content-Type",
                                "application/octet-stream")
                        .status());
        Raw after = raw("GET", url, u.http().token(), null, "Range", "bytes=" + (window - 1) + "-");
        assertEquals(206, after.status());
        assertEquals("\"" + sha256(second) + "\"", after.header("ETag"));
        assertArrayEquals(java.util.Arrays.copyOfRange(second, window - 1, window + 1), after.body());
    }

    /** A read racing a write that replaces the content (and releases the old bytes) answers the old or the new bytes, never a 5xx. */
    @Test
    void readsRacingWritesOfTheSameFileAnswerOneWholeVersion(AtriumServer server) throws Exception {
        User u = server.newUser();
        String id = createFile(u, "raced.txt", "version 0").path("id").asText();
        String content = server.base() + base(u) + "/" + id + "/content";
        String download = server.base() + base(u) + "/download/" + id;
        java.util.concurrent.atomic.AtomicBoolean writing = new java.util.concurrent.atomic.AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            Future<?> writer = pool.submit(() -> {
                for (int i = 1; i <= 100; i++) {
                    Raw w = raw(
                            "PUT",
                            content,
                            u.http().token(),
                            ("version " + i).getBytes(),
                            "Content-Type",
                            "text/plain");
                    assertEquals(200, w.status(), w.text());
                }
                writing.set(false);
            });
            List<Future<?>> readers = new ArrayList<>();
            for (String url : List.of(content, download)) {
                readers.add(pool.submit(() -> {
                    while (writing.get()) {
                        Raw r = raw("GET", url, u.http().token(), null);
                        assertEquals(200, r.status(), url + ": " + r.text());
                        assertTrue(r.text().matches("version [0-9]+"), r.text());
                        assertEquals(
                                "\"" + sha256(r.body()) + "\"", r.header("ETag"), "the ETag names the bytes served");
                    }
                    return null;
                }));
            }
            writer.get();
            for (Future<?> f : readers) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void aSignedDownloadUrlWorksWithoutATokenUntilItExpiresOrTheFileIsDeleted(AtriumServer server) throws Exception {
        User u = server.newUser();
        User other = server.newUser();
        JsonNode f = createFile(u, "shared.txt", "signed bytes");
        String id = f.path("id").asText();
        Http.Reply issued = u.http().get(base(u) + "/download-url?file_id=" + id + "&expires_in=60");
        assertEquals(200, issued.status(), issued.body());
        assertEquals(Set.of("url", "file_id", "expires_at"), WorkspacesTest.fields(issued.json()));
        String url = issued.get("url").asText();
        assertTrue(
                url.startsWith(server.base() + "/api/spaces/" + u.defaultSpaceId() + "/storage/download/" + id + "?"),
                url);
        Raw anonymous = raw("GET", url, null, null);
        assertEquals(200, anonymous.status(), anonymous.text());
        assertEquals("signed bytes", anonymous.text());
        assertEquals(206, raw("GET", url, null, null, "Range", "bytes=0-5").status());

        // tampered: another expiry, another file, another workspace, a changed signature: the same 404 as a missing
        // file
        Raw missing = raw("GET", url.replace(id, "fil_" + "x".repeat(20)), null, null);
        assertEquals(404, missing.status());
        assertSpecBody(missing.json());
        String expires = url.replaceAll(".*expires=([0-9]+).*", "$1");
        for (String tampered : List.of(
                url.replace("expires=" + expires, "expires=" + (Long.parseLong(expires) + 1)),
                url.replace(u.defaultSpaceId(), other.defaultSpaceId()),
                url.substring(0, url.length() - 2) + "xx")) {
            Raw r = raw("GET", tampered, null, null);
            assertEquals(404, r.status(), tampered);
            assertEquals(missing.json(), r.json());
        }
        assertEquals(
                400, raw("GET", url.replaceAll("&signature=.*", ""), null, null).status());
        assertEquals(
                401,
                raw("GET", server.base() + base(u) + "/download/" + id, null, null)
                        .status());
        // a stranger's token on the owner's link is the owner scope's 404, whatever the signature says
        Raw stranger = raw("GET", url, other.http().token(), null);
        assertEquals(404, stranger.status());
        assertEquals(
                404, other.http().get(base(u) + "/download-url?file_id=" + id).status());

        // expired
        String shortLived = u.http()
                .get(base(u) + "/download-url?file_id=" + id + "&expires_in=1")
                .get("url")
                .asText();
        Thread.sleep(2100);
        Raw expired = raw("GET", shortLived, null, null);
        assertEquals(410, expired.status(), expired.text());
        assertSpecBody(expired.json());
        // deleted
        assertEquals(200, u.http().delete(base(u) + "/" + id).status());
        Raw gone = raw("GET", url, null, null);
        assertEquals(404, gone.status());
        assertSpecBody(gone.json());

        assertSpecError(400, u.http().get(base(u) + "/download-url"));
        assertSpecError(400, u.http().get(base(u) + "/download-url?file_id=" + id + "&expires_in=0"));
        assertSpecError(400, u.http().get(base(u) + "/download-url?file_id=" + id + "&expires_in=abc"));
        assertSpecError(400, u.http().get(base(u) + "/download-url?file_id=" + id + "&expires_in=999999999"));
    }

    @Test
    void aFolderDownloadsAsAZipOfItsSubtree(AtriumServer server) throws Exception {
        User u = server.newUser();
        createFile(u, "proj/readme.md", "# proj");
        createFile(u, "proj/src/main.txt", "main");
        folder(u, "proj/empty");
        createFile(u, "elsewhere.txt", "not in the zip");
        String folderId = u.http()
                .get(base(u) + "?path=proj")
                .json()
                .path("folder")
                .path("id")
                .asText();
        Raw zip = raw(
                "GET",
                server.base() + base(u) + "/download-zip?folder_id=" + folderId,
                u.http().token(),
                null);
        assertEquals(200, zip.status(), zip.text());
        assertEquals("application/zip", zip.header("Content-Type"));
        assertTrue(zip.header("Content-Disposition").contains("proj.zip"));
        Map<String, String> entries = unzip(zip.body());
        assertEquals(Map.of("empty/", "", "readme.md", "# proj", "src/", "", "src/main.txt", "main"), entries);
        Map<String, String> all = unzip(
                raw("GET", server.base() + base(u) + "/download-zip", u.http().token(), null)
                        .body());
        assertEquals("not in the zip", all.get("elsewhere.txt"));
        assertEquals("main", all.get("proj/src/main.txt"));
        assertSpecError(404, u.http().get(base(u) + "/download-zip?path=nowhere"));
    }

    static Map<String, String> unzip(byte[] zip) throws IOException {
        Map<String, String> out = new TreeMap<>();
        try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                out.put(e.getName(), new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    @Test
    void aDirectUploadIsInvisibleUntilConfirmedWithTheRightSizeAndHash(AtriumServer server) throws Exception {
        User u = server.newUser();
        byte[] bytes = new byte[200_000];
        new Random(3).nextBytes(bytes);
        Http.Reply announced =
                u.http().post(base(u) + "/upload-url", Map.of("path", "up/data.bin", "size", bytes.length));
        assertEquals(201, announced.status(), announced.body());
        String id = announced.get("file_id").asText();
        assertEquals("PUT", announced.get("method").asText());
        String uploadUrl = announced.get("upload_url").asText();
        assertEquals(server.base() + base(u) + "/upload/" + id, uploadUrl);
        assertEquals(Map.of(), tree(u));
        assertSpecError(404, u.http().get(base(u) + "/" + id));
        // confirming before the bytes are there, then more bytes than announced
        assertSpecError(400, u.http().post(base(u) + "/confirm-upload", Map.of("file_id", id, "size", bytes.length)));
        assertEquals(
                400,
                raw(
                                "PUT",
                                uploadUrl,
                                u.http().token(),
                                new byte[bytes.length + 1],
                                "Content-Type",
                                "application/octet-stream")
                        .status());

        Raw put = raw("PUT", uploadUrl, u.http().token(), bytes, "Content-Type", "application/octet-stream");
        assertEquals(200, put.status(), put.text());
        assertEquals(sha256(bytes), put.json().path("upload").path("sha256").asText());
        assertEquals(Map.of(), tree(u), "still invisible before the confirmation");
        assertSpecError(
                400, u.http().post(base(u) + "/confirm-upload", Map.of("file_id", id, "size", bytes.length - 1)));
        assertSpecError(
                400,
                u.http()
                        .post(
                                base(u) + "/confirm-upload",
                                Map.of("file_id", id, "size", bytes.length, "sha256", "0".repeat(64))));
        assertSpecError(400, u.http().post(base(u) + "/confirm-upload", Map.of("file_id", id, "size", "big")));
        assertEquals(Map.of(), tree(u));

        Http.Reply confirmed = u.http()
                .post(
                        base(u) + "/confirm-upload",
                        Map.of("file_id", id, "size", bytes.length, "sha256", sha256(bytes)));
        assertEquals(200, confirmed.status(), confirmed.body());
        assertEquals("up/data.bin", confirmed.get("file").path("path").asText());
        assertEquals(Set.of("up", "up/data.bin"), tree(u).keySet());
        assertArrayEquals(
                bytes,
                raw("GET", server.base() + base(u) + "/download/" + id, u.http().token(), null)
                        .body());
        assertSpecError(404, u.http().post(base(u) + "/confirm-upload", Map.of("file_id", id, "size", bytes.length)));
        assertSpecError(409, u.http().post(base(u) + "/upload-url", Map.of("path", "up/data.bin", "size", 1)));
        assertSpecError(400, u.http().post(base(u) + "/upload-url", Map.of("path", "up/x.bin", "size", -1)));
        assertSpecError(400, u.http().post(base(u) + "/upload-url", Map.of("path", "up/x.bin")));
        assertSpecError(400, u.http().post(base(u) + "/upload-url", Map.of("path", "up/x.bin", "size", 1.5)));
    }

    @Test
    void bulkOperationsAreAllOrNothing(AtriumServer server) {
        User u = server.newUser();
        String a = createFile(u, "a.txt", "a").path("id").asText();
        String b = createFile(u, "b.txt", "b").path("id").asText();
        String c = createFile(u, "c.txt", "c").path("id").asText();
        String dir = folder(u, "dir").path("id").asText();
        createFile(u, "dir/b.txt", "in the way");
        Map<String, JsonNode> before = tree(u);

        // one id is missing, one move collides, one rename collides: nothing changes
        assertSpecError(
                404, u.http().post(base(u) + "/bulk-delete", Map.of("ids", List.of(a, "fil_" + "n".repeat(20)))));
        assertSpecError(409, u.http().post(base(u) + "/bulk-move", Map.of("ids", List.of(a, b), "parent_id", dir)));
        assertSpecError(
                409,
                u.http()
                        .post(
                                base(u) + "/bulk-rename",
                                Map.of(
                                        "items",
                                        List.of(Map.of("id", a, "name", "a2.txt"), Map.of("id", c, "name", "b.txt")))));
        assertEquals(before, tree(u));

        Http.Reply moved = u.http().post(base(u) + "/bulk-move", Map.of("ids", List.of(a, c), "path", "dir"));
        assertEquals(200, moved.status(), moved.body());
        Http.Reply renamed = u.http()
                .post(
                        base(u) + "/bulk-rename",
                        Map.of("items", List.of(Map.of("id", a, "name", "x.txt"), Map.of("id", c, "name", "y.txt"))));
        assertEquals(200, renamed.status(), renamed.body());
        assertEquals(Set.of("b.txt", "dir", "dir/b.txt", "dir/x.txt", "dir/y.txt"), tree(u).keySet());
        Http.Reply deleted = u.http().post(base(u) + "/bulk-delete", Map.of("ids", List.of(b, dir)));
        assertEquals(200, deleted.status(), deleted.body());
        assertEquals(Map.of(), tree(u));

        for (Object bad : List.of(Map.of(), Map.of("ids", "a"), Map.of("ids", List.of()), Map.of("ids", List.of(1)))) {
            assertSpecError(400, u.http().post(base(u) + "/bulk-delete", bad));
            assertSpecError(400, u.http().post(base(u) + "/bulk-move", bad));
        }
        assertSpecError(400, u.http().post(base(u) + "/bulk-rename", Map.of("items", List.of(Map.of("id", a)))));
        assertSpecError(
                400,
                u.http().post(base(u) + "/bulk-rename", Map.of("items", List.of(Map.of("id", a, "name", "../x")))));
    }

    @Test
    void fileHandlersListTheBuiltInViewers(AtriumServer server) {
        User u = server.newUser();
        JsonNode handlers = u.http().get(base(u) + "/file-handlers").get("handlers");
        Map<String, JsonNode> byId = new TreeMap<>();
        handlers.forEach(h -> byId.put(h.path("id").asText(), h));
        assertTrue(byId.keySet().containsAll(Set.of("text", "markdown", "image", "pdf")), byId.toString());
        assertTrue(byId.get("pdf").path("mime_types").toString().contains("application/pdf"));
        assertTrue(byId.get("markdown").path("extensions").toString().contains("\"md\""));
        assertEquals("builtin", byId.get("image").path("kind").asText());
    }

    // ---------------------------------------------------------------- who may reach what

    @Test
    void aStrangerGetsTheSame404AsForAMissingIdOnEveryRoute(AtriumServer server) {
        User owner = server.newUser();
        User stranger = server.newUser();
        String fileId =
                createFile(owner, "secret/plan.txt", "secret").path("id").asText();
        String folderId = owner.http()
                .get(base(owner) + "?path=secret")
                .json()
                .path("folder")
                .path("id")
                .asText();
        String pending = owner.http()
                .post(base(owner) + "/upload-url", Map.of("path", "secret/up.bin", "size", 3))
                .get("file_id")
                .asText();
        Map<String, JsonNode> before = tree(owner);
        String ownerBase = base(owner);
        String missingBase = "/api/spaces/sp_" + "m".repeat(20) + "/storage";
        for (String[] probe : routes(fileId, folderId, pending)) {
            String method = probe[0];
            String tail = probe[1];
            Object body = probe.length > 2 ? probe[2] : null;
            Http.Reply onOwner = stranger.http().send(method, ownerBase + tail, body, "application/json");
            Http.Reply onMissing = stranger.http().send(method, missingBase + tail, body, "application/json");
            assertEquals(404, onOwner.status(), method + " " + tail + ": " + onOwner.body());
            assertEquals(onMissing.json(), onOwner.json(), method + " " + tail);
            // the stranger's own workspace does not reach the owner's file either
            Http.Reply inOwn = stranger.http().send(method, base(stranger) + tail, body, "application/json");
            assertTrue(inOwn.status() < 500, method + " " + tail + ": " + inOwn.body());
            assertTrue(!inOwn.body().contains("secret"), inOwn.body());
        }
        assertEquals(before, tree(owner));
        assertEquals(
                "secret",
                owner.http().get(base(owner) + "/" + fileId + "/content").body());
    }

    /** Every storage route with the owner's ids: method, path under .../storage, body. */
    static List<String[]> routes(String fileId, String folderId, String pendingId) {
        String ids = "{\"ids\":[\"" + fileId + "\"]}";
        return List.of(
                new String[] {"GET", ""},
                new String[] {"GET", "?folder_id=" + folderId},
                new String[] {"GET", "/file-handlers"},
                new String[] {"POST", "/folders", "{\"path\":\"x\"}"},
                new String[] {"POST", "/files", "{\"path\":\"x.txt\"}"},
                new String[] {"GET", "/" + fileId},
                new String[] {"PATCH", "/" + fileId, "{\"name\":\"mine.txt\"}"},
                new String[] {"DELETE", "/" + fileId},
                new String[] {"GET", "/" + fileId + "/content"},
                new String[] {"PUT", "/" + fileId + "/content", "{\"x\":1}"},
                new String[] {"GET", "/download/" + fileId},
                new String[] {"GET", "/download-url?file_id=" + fileId},
                new String[] {"GET", "/download-zip?folder_id=" + folderId},
                new String[] {"POST", "/upload-url", "{\"path\":\"y.bin\",\"size\":1}"},
                new String[] {"PUT", "/upload/" + pendingId, "{\"x\":1}"},
                new String[] {"POST", "/confirm-upload", "{\"file_id\":\"" + pendingId + "\",\"size\":3}"},
                new String[] {"POST", "/bulk-delete", ids},
                new String[] {"POST", "/bulk-move", "{\"ids\":[\"" + fileId + "\"],\"path\":\"\"}"},
                new String[] {"POST", "/bulk-rename", "{\"items\":[{\"id\":\"" + fileId + "\",\"name\":\"z\"}]}"});
    }

    @Test
    void aFilesReadTokenReadsButCannotWrite(AtriumServer server) {
        User owner = server.newUser();
        String fileId = createFile(owner, "r/plan.txt", "plan").path("id").asText();
        String folderId = owner.http()
                .get(base(owner) + "?path=r")
                .json()
                .path("folder")
                .path("id")
                .asText();
        String pending = owner.http()
                .post(base(owner) + "/upload-url", Map.of("path", "r/up.bin", "size", 3))
                .get("file_id")
                .asText();
        Http.Reply token =
                server.operator().post("/admin/users/" + owner.username() + "/tokens", Map.of("scopes", "files:read"));
        assertEquals(201, token.status(), token.body());
        Http reader = owner.http().as(token.json().path("token").asText());
        Map<String, JsonNode> before = tree(owner);
        for (String[] probe : routes(fileId, folderId, pending)) {
            Http.Reply r = reader.send(
                    probe[0], base(owner) + probe[1], probe.length > 2 ? probe[2] : null, "application/json");
            if (probe[0].equals("GET")) {
                assertEquals(200, r.status(), probe[0] + " " + probe[1] + ": " + r.body());
            } else {
                assertSpecError(403, r);
            }
        }
        assertEquals(before, tree(owner));
        Http.Reply threads = server.operator()
                .post("/admin/users/" + owner.username() + "/tokens", Map.of("scopes", "threads:read"));
        assertSpecError(
                403, owner.http().as(threads.json().path("token").asText()).get(base(owner)));
        assertEquals(
                403,
                raw(
                                "GET",
                                server.base() + base(owner) + "/download/" + fileId,
                                threads.json().path("token").asText(),
                                null)
                        .status());
    }

    @Test
    void badInputOnEveryRouteIsA4xxWithTheSpecBodyAndChangesNothing(AtriumServer server) {
        User u = server.newUser();
        String fileId = createFile(u, "keep/file.txt", "kept").path("id").asText();
        String folderId = u.http()
                .get(base(u) + "?path=keep")
                .json()
                .path("folder")
                .path("id")
                .asText();
        String b = base(u);
        String longName = "n".repeat(256);
        String longPath = ("d/").repeat(2048) + "x";
        Map<String, JsonNode> before = tree(u);
        List<Object[]> cases = new ArrayList<>();
        for (String path : List.of(
                "../escape.txt",
                "keep/../../x",
                "/etc/passwd",
                "a\u0000b",
                "a\u0001b",
                "a\\b",
                longName,
                longPath,
                "",
                ".")) {
            cases.add(new Object[] {"POST", b + "/files", Map.of("path", path)});
            cases.add(new Object[] {"POST", b + "/folders", Map.of("path", path)});
            cases.add(new Object[] {"POST", b + "/upload-url", Map.of("path", path, "size", 1)});
            cases.add(new Object[] {"PATCH", b + "/" + fileId, Map.of("path", path)});
            cases.add(new Object[] {"POST", b + "/bulk-move", Map.of("ids", List.of(fileId), "path", path + "/..")});
        }
        for (String name : List.of("..", "a/b", longName, "x\u007f")) {
            cases.add(new Object[] {"PATCH", b + "/" + fileId, Map.of("name", name)});
            cases.add(new Object[] {"POST", b + "/files", Map.of("name", name)});
            cases.add(new Object[] {
                "POST", b + "/bulk-rename", Map.of("items", List.of(Map.of("id", fileId, "name", name)))
            });
        }
        for (Object wrong : List.of(1, true, List.of("x"), Map.of("a", 1))) {
            cases.add(new Object[] {"POST", b + "/files", Map.of("path", wrong)});
            cases.add(new Object[] {"POST", b + "/files", Map.of("path", "ok.txt", "content", wrong)});
            cases.add(new Object[] {"POST", b + "/folders", Map.of("name", wrong)});
            cases.add(new Object[] {"PATCH", b + "/" + fileId, Map.of("name", wrong)});
            if (!(wrong instanceof Integer)) {
                cases.add(new Object[] {"POST", b + "/upload-url", Map.of("path", "w.bin", "size", wrong)});
            }
            cases.add(new Object[] {"POST", b + "/confirm-upload", Map.of("file_id", wrong, "size", 1)});
        }
        cases.add(new Object[] {"POST", b + "/files", "[1,2]"});
        cases.add(new Object[] {"POST", b + "/files", "{\"path\":"});
        cases.add(new Object[] {"POST", b + "/files", Map.of("path", "t.txt", "content_type", "not a type")});
        cases.add(new Object[] {"PATCH", b + "/" + fileId, Map.of()});
        cases.add(new Object[] {"PATCH", b + "/" + folderId, Map.of("path", "keep/inner/keep")});
        cases.add(new Object[] {"GET", b + "?path=..", null});
        cases.add(new Object[] {"GET", b + "?limit=abc", null});
        cases.add(new Object[] {"GET", b + "/download-zip?path=/abs", null});
        cases.add(new Object[] {"GET", b + "/download-url?file_id=" + fileId + "&expires_in=-5", null});
        for (Object[] c : cases) {
            Http.Reply r = u.http().send((String) c[0], (String) c[1], c[2], "application/json");
            assertTrue(
                    r.status() >= 400 && r.status() < 500,
                    c[0] + " " + c[1] + " " + c[2] + " -> " + r.status() + " " + r.body());
            assertSpecBody(r.json());
        }
        assertEquals(before, tree(u));
        assertEquals("kept", u.http().get(b + "/" + fileId + "/content").body());
    }

    // ---------------------------------------------------------------- scale

    @Test
    void aFolderOfTenThousandFilesStreamsAsAZip(AtriumServer server) throws Exception {
        User u = server.newUser();
        folder(u, "many");
        int n = 10_000;
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                int first = t;
                done.add(pool.submit(() -> {
                    for (int i = first; i < n; i += 6) {
                        Http.Reply r = u.http()
                                .post(
                                        base(u) + "/files",
                                        Map.of("path", "many/f" + i + ".txt", "content", "file " + i));
                        assertEquals(201, r.status(), r.body());
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        assertEquals(
                n,
                u.http()
                        .get(base(u) + "?path=many&limit=1")
                        .json()
                        .path("total")
                        .asInt());
        HttpResponse<java.io.InputStream> r = CLIENT.send(
                HttpRequest.newBuilder(URI.create(server.base() + base(u) + "/download-zip?path=many"))
                        .header("Authorization", "Bearer " + u.http().token())
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("Content-Length").isEmpty(), "streamed, not buffered to learn its length");
        int entries = 0;
        try (ZipInputStream zip = new ZipInputStream(r.body())) {
            for (ZipEntry e; (e = zip.getNextEntry()) != null; ) {
                String name = e.getName();
                String content = new String(zip.readAllBytes(), StandardCharsets.UTF_8);
                assertEquals("file " + name.substring(1, name.length() - 4), content, name);
                entries++;
            }
        }
        assertEquals(n, entries);
    }
}
