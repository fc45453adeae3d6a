package dev.atrium.itests;

import static dev.atrium.itests.StorageTest.assertSpecError;
import static dev.atrium.itests.StorageTest.base;
import static dev.atrium.itests.StorageTest.createFile;
import static dev.atrium.itests.StorageTest.folder;
import static dev.atrium.itests.StorageTest.raw;
import static dev.atrium.itests.StorageTest.tree;
import static dev.atrium.itests.StorageTest.unzip;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import dev.atrium.itests.StorageTest.Raw;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What storage must never do whatever a workspace's writer uploads (issue 32): serve stored bytes so that a browser runs
 * them on the API's origin, keep a name that Windows or an unpacker reads as another name or a device, or leave its
 * blobs readable by other local accounts.
 */
@SharedServer
class StorageSafetyTest {

    // ---------------------------------------------------------------- served content

    @Test
    void storedHtmlAndOtherActiveTypesAreSandboxedAttachmentsAndPassiveTypesInlineAllWithNosniff(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        String page = "<html><body><script>fetch('/api/me').then(r => r.text()).then(alert)</script></body></html>";
        JsonNode html = createFile(u, "r\u00e9sum\u00e9 \u00e9t\u00e9.html", page);
        assertEquals("text/html", html.path("content_type").asText());
        Raw served = raw("GET", content(server, u, html), u.http().token(), null);
        assertEquals(200, served.status(), served.text());
        assertEquals(page, served.text());
        assertAttachment(served);
        assertEquals(
                "attachment; filename=\"r_sum_ _t_.html\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%C3%A9t%C3%A9.html",
                served.header("Content-Disposition"));

        // every type a browser may run is an attachment, whatever its case or parameters; what it only shows is inline
        JsonNode file = createFile(u, "any.bin", "x");
        for (String active : List.of(
                "text/html",
                "TEXT/HTML; charset=utf-8",
                "application/xhtml+xml",
                "image/svg+xml",
                "text/xml",
                "application/xml",
                "application/javascript",
                "text/javascript",
                "application/octet-stream",
                "application/pdf",
                "multipart/x-mixed-replace;boundary=x",
                "application/x-unknown")) {
            assertEquals(
                    200,
                    raw(
                                    "PUT",
                                    content(server, u, file),
                                    u.http().token(),
                                    page.getBytes(StandardCharsets.UTF_8),
                                    "Content-Type",
                                    active)
                            .status(),
                    active);
            Raw r = raw("GET", content(server, u, file), u.http().token(), null);
            assertEquals(200, r.status(), active);
            assertAttachment(r);
        }
        for (String passive : List.of(
                "text/plain", "text/plain; charset=utf-8", "application/json", "image/png", "image/jpeg", "text/csv")) {
            assertEquals(
                    200,
                    raw(
                                    "PUT",
                                    content(server, u, file),
                                    u.http().token(),
                                    "{}".getBytes(StandardCharsets.UTF_8),
                                    "Content-Type",
                                    passive)
                            .status(),
                    passive);
            Raw r = raw("GET", content(server, u, file), u.http().token(), null);
            assertEquals(200, r.status(), passive);
            assertNoRun(r);
            assertEquals(
                    "inline; filename=\"any.bin\"; filename*=UTF-8''any.bin", r.header("Content-Disposition"), passive);
        }

        // the download route and the folder archive carry the same protection
        Raw download = raw(
                "GET",
                server.base() + base(u) + "/download/" + html.path("id").asText(),
                u.http().token(),
                null);
        assertEquals(200, download.status());
        assertAttachment(download);
        String signed = u.http()
                .get(base(u) + "/download-url?file_id=" + html.path("id").asText())
                .json()
                .path("url")
                .asText();
        Raw anonymous = raw("GET", signed, null, null);
        assertEquals(200, anonymous.status(), anonymous.text());
        assertAttachment(anonymous);
        Raw zip = raw("GET", server.base() + base(u) + "/download-zip", u.http().token(), null);
        assertEquals(200, zip.status());
        assertAttachment(zip);
    }

    static String content(AtriumServer server, User u, JsonNode file) {
        return server.base() + base(u) + "/" + file.path("id").asText() + "/content";
    }

    /** Not sniffed, loads nothing and runs in a sandbox should a browser render it anyway. */
    static void assertNoRun(Raw r) {
        assertEquals("nosniff", r.header("X-Content-Type-Options"));
        String csp = r.header("Content-Security-Policy");
        assertNotNull(csp, "a Content-Security-Policy on stored bytes");
        assertTrue(
                csp.contains("default-src 'none'")
                        && Pattern.compile("(^|;)\\s*sandbox\\s*(;|$)")
                                .matcher(csp)
                                .find(),
                csp);
    }

    static void assertAttachment(Raw r) {
        assertNoRun(r);
        String disposition = r.header("Content-Disposition");
        assertTrue(
                disposition != null
                        && disposition.startsWith("attachment;")
                        && disposition.contains("filename*=UTF-8''"),
                "served as an attachment: " + disposition);
    }

    // ---------------------------------------------------------------- names

    /** Names Windows reads as another name ('.. ' is '..'), as a device, or as an alternate data stream. */
    static final List<String> BAD_NAMES = List.of(
            ".. ",
            "...",
            "... ",
            ".. .",
            " ",
            "name.",
            "name ",
            "CON",
            "con.txt",
            "Nul .log",
            "COM1",
            "lpt9.tar.gz",
            "AUX",
            "PRN",
            "a::$DATA",
            "a:b",
            "tab\there");

    @Test
    void namesWindowsReadsDifferentlyAreRefusedOnEveryRouteThatNamesAndNamingTheSegment(AtriumServer server) {
        User u = server.newUser();
        String fileId = createFile(u, "docs/kept.txt", "kept").path("id").asText();
        String folderId = u.http()
                .get(base(u) + "?path=docs")
                .json()
                .path("folder")
                .path("id")
                .asText();
        Map<String, JsonNode> before = tree(u);
        String b = base(u);
        for (String bad : BAD_NAMES) {
            List<Object[]> cases = new ArrayList<>();
            cases.add(new Object[] {"POST", b + "/files", Map.of("path", "docs/" + bad + "/x.txt", "content", "evil")});
            cases.add(new Object[] {"POST", b + "/files", Map.of("path", "docs/" + bad)});
            cases.add(new Object[] {"POST", b + "/files", Map.of("name", bad, "parent_id", folderId)});
            cases.add(new Object[] {"POST", b + "/folders", Map.of("path", bad + "/inner")});
            cases.add(new Object[] {"POST", b + "/folders", Map.of("name", bad)});
            cases.add(new Object[] {"POST", b + "/upload-url", Map.of("path", "docs/" + bad, "size", 4)});
            cases.add(new Object[] {"PATCH", b + "/" + fileId, Map.of("name", bad)});
            cases.add(new Object[] {"PATCH", b + "/" + fileId, Map.of("path", bad + "/kept.txt")});
            cases.add(new Object[] {
                "POST", b + "/bulk-rename", Map.of("items", List.of(Map.of("id", fileId, "name", bad)))
            });
            cases.add(new Object[] {"POST", b + "/bulk-move", Map.of("ids", List.of(fileId), "path", bad)});
            for (Object[] c : cases) {
                Http.Reply r = u.http().send((String) c[0], (String) c[1], c[2], "application/json");
                String what = c[0] + " " + c[1] + " " + c[2];
                assertSpecError(400, r);
                String message = r.json().path("error").path("message").asText();
                if (bad.chars().allMatch(ch -> ch >= 0x20 && ch < 0x7f)) {
                    assertTrue(message.contains("'" + bad + "'"), what + ": the message names the segment: " + message);
                }
            }
        }
        assertEquals(before, tree(u), "nothing was created, renamed or moved");
        // names that only look alike stay fine
        for (String fine : List.of(
                ".hidden",
                "..a",
                "a..b",
                "console.txt",
                "com10",
                "lpt",
                "x.con",
                " leading",
                "what?",
                "say \"hi\" <now> | later*")) {
            assertEquals(
                    201,
                    u.http()
                            .post(b + "/files", Map.of("path", "fine/" + fine, "content", "ok"))
                            .status(),
                    fine);
        }
    }

    @Test
    void rowsStoredBeforeTheRuleAreStillReadRenamedAndDeletedButNeverWrittenIntoAnArchive(AtriumServer server)
            throws Exception {
        User u = server.newUser();
        createFile(u, "old/ok.txt", "ok");
        JsonNode dir = folder(u, "old/dir");
        JsonNode evil = createFile(u, "old/dir/evil1.txt", "evil");
        JsonNode device = createFile(u, "old/device.txt", "device");
        // as an earlier version stored them: '.. ' above evil1.txt, and a device name
        String space = u.defaultSpaceId();
        server.db.execute(
                "UPDATE storage_files SET name = '.. ', path = 'old/.. ' WHERE id = ?",
                dir.path("id").asText());
        server.db.execute(
                "UPDATE storage_files SET path = 'old/.. /evil1.txt' WHERE id = ?",
                evil.path("id").asText());
        server.db.execute(
                "UPDATE storage_files SET name = 'CON', path = 'old/CON' WHERE id = ?",
                device.path("id").asText());
        assertEquals(
                "old/.. /evil1.txt",
                u.http()
                        .get(base(u) + "/" + evil.path("id").asText())
                        .get("file")
                        .path("path")
                        .asText());
        assertEquals(
                "evil",
                raw("GET", content(server, u, evil), u.http().token(), null).text());

        for (String zipUrl : List.of("/download-zip?path=old", "/download-zip")) {
            Raw zip = raw("GET", server.base() + base(u) + zipUrl, u.http().token(), null);
            assertEquals(200, zip.status(), zip.text());
            Map<String, String> entries = unzip(zip.body());
            for (String name : entries.keySet()) {
                for (String segment : name.split("/")) {
                    assertFalse(
                            segment.isEmpty()
                                    || segment.chars().allMatch(c -> c == '.' || c == ' ')
                                    || segment.endsWith(" ")
                                    || segment.equalsIgnoreCase("CON"),
                            zipUrl + " wrote " + name);
                }
            }
            assertEquals("ok", entries.get(zipUrl.contains("old") ? "ok.txt" : "old/ok.txt"), entries.toString());
        }

        // the owner can still put them right
        Http.Reply renamed = u.http().patch(base(u) + "/" + device.path("id").asText(), Map.of("name", "device.txt"));
        assertEquals(200, renamed.status(), renamed.body());
        assertEquals("old/device.txt", renamed.get("file").path("path").asText());
        Http.Reply deleted = u.http().delete(base(u) + "/" + dir.path("id").asText());
        assertEquals(200, deleted.status(), deleted.body());
        assertEquals(2, deleted.get("deleted").asInt(), "the folder and the file under it");
        assertEquals(List.of("old", "old/device.txt", "old/ok.txt"), new ArrayList<>(tree(u).keySet()), space);
    }

    // ---------------------------------------------------------------- blobs on disk

    @Test
    void blobFilesAreReadableByTheServersUserOnly(AtriumServer server) throws Exception {
        User u = server.newUser();
        byte[] bytes = new byte[200_000];
        new Random(32).nextBytes(bytes);
        JsonNode file = createFile(u, "private.bin", "");
        Raw put = raw(
                "PUT", content(server, u, file), u.http().token(), bytes, "Content-Type", "application/octet-stream");
        assertEquals(200, put.status(), put.text());
        String sha = StorageTest.sha256(bytes);
        Path blobs = server.data.resolve("blobs");
        Path blob = blobs.resolve("storage")
                .resolve(sha.substring(0, 2))
                .resolve(sha.substring(2, 4))
                .resolve(sha);
        assertArrayEquals(bytes, Files.readAllBytes(blob));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(blob)));
        for (Path dir : List.of(
                blobs, blobs.resolve(".tmp"), blob.getParent(), blob.getParent().getParent())) {
            assertEquals(
                    "rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)), dir.toString());
        }
    }
}
