package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Releases (issue 35): made at their tags (the tag made when missing), {@code latest} by Gitea's rules, drafts only
 * for the owner; assets uploaded as {@code multipart/form-data} into the BlobStore and served with ranges and ETags;
 * the bytes go with the last asset naming them and with the repository.
 */
@SharedServer
class ReleasesTest {

    static final String ZERO = "0".repeat(40);
    static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    static final String BOUNDARY = "atriumTestBoundary0123456789";

    @TempDir
    Path tmp;

    static String releases(String repoId) {
        return "/api/repos/" + repoId + "/releases";
    }

    /** A form with {@code parts}: each {name, filename or null, content type or null, bytes}. */
    static byte[] form(List<Object[]> parts, boolean close) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object[] p : parts) {
            StringBuilder h =
                    new StringBuilder("--" + BOUNDARY + "\r\nContent-Disposition: form-data; name=\"" + p[0] + "\"");
            if (p[1] != null) {
                h.append("; filename=\"").append(p[1]).append('"');
            }
            h.append("\r\n");
            if (p[2] != null) {
                h.append("Content-Type: ").append(p[2]).append("\r\n");
            }
            h.append("\r\n");
            out.write(h.toString().getBytes(StandardCharsets.UTF_8));
            out.write((byte[]) p[3]);
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        if (close) {
            out.write(("--" + BOUNDARY + "--\r\n").getBytes(StandardCharsets.US_ASCII));
        }
        return out.toByteArray();
    }

    static HttpResponse<String> upload(AtriumServer server, User u, String path, byte[] body, String type)
            throws Exception {
        return CLIENT.send(
                HttpRequest.newBuilder(URI.create(server.base() + path))
                        .header("Authorization", "Bearer " + u.http().token())
                        .header("Content-Type", type)
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<byte[]> download(String url, User u, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", "Bearer " + u.http().token());
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    /** The blob files of the repository's release namespace. */
    static long blobFiles(AtriumServer server, String repoId) throws IOException {
        Path dir = server.data.resolve("blobs").resolve("release." + repoId);
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).count();
        }
    }

    private String tags(AtriumServer server, User u, String repoId) {
        String clone = u.http()
                .get("/api/repos/" + repoId)
                .get("repository")
                .get("clone_url")
                .asText();
        return new GitClient(tmp.resolve("home"), u.http().token()).ok(tmp, "ls-remote", "--tags", clone);
    }

    @Test
    void releasesAreMadeAtTheirTagsAndLatestIsTheNewestPublishedStableOne(AtriumServer server) {
        User owner = server.newUser();
        User stranger = server.newUser();
        String id = ReposApiTest.create(owner, "shipit");
        String c1 = ReposApiTest.sha(
                ReposApiTest.commit(owner, id, "main", ZERO, "first", List.of(ReposApiTest.file("a.txt", "1"))));
        String c2 = ReposApiTest.sha(
                ReposApiTest.commit(owner, id, "main", c1, "second", List.of(ReposApiTest.file("a.txt", "2"))));
        String base = releases(id);

        assertEquals(404, owner.http().get(base + "/latest").status(), "no release yet");
        Http.Reply v1 = owner.http().post(base, Map.of("tag_name", "v1.0", "name", "One", "body", "notes"));
        assertEquals(201, v1.status(), v1.body());
        assertEquals(c2, v1.get("release").get("commit_id").asText());
        assertEquals("main", v1.get("release").get("target_commitish").asText());
        assertFalse(v1.get("release").get("published_at").isNull());
        assertTrue(tags(server, owner, id).contains(c2 + "\trefs/tags/v1.0"), "the tag is made at the default branch");

        Http.Reply rc =
                owner.http().post(base, Map.of("tag_name", "v1.1-rc", "target_commitish", c1, "prerelease", true));
        assertEquals(201, rc.status(), rc.body());
        assertEquals(c1, rc.get("release").get("commit_id").asText());
        assertEquals(
                "v1.0",
                owner.http()
                        .get(base + "/latest")
                        .get("release")
                        .get("tag_name")
                        .asText());

        Http.Reply draft = owner.http().post(base, Map.of("tag_name", "v2.0", "draft", true));
        assertEquals(201, draft.status(), draft.body());
        assertTrue(draft.get("release").get("commit_id").isNull(), "a draft's tag is made when it is published");
        assertFalse(tags(server, owner, id).contains("refs/tags/v2.0"));
        assertEquals(
                "v1.0",
                owner.http()
                        .get(base + "/latest")
                        .get("release")
                        .get("tag_name")
                        .asText());

        Http.Reply published = owner.http().patch(base + "/v2.0", Map.of("draft", false, "body", "two"));
        assertEquals(200, published.status(), published.body());
        assertEquals(c2, published.get("release").get("commit_id").asText());
        assertEquals("two", published.get("release").get("body").asText());
        assertTrue(tags(server, owner, id).contains(c2 + "\trefs/tags/v2.0"));
        assertEquals(
                "v2.0",
                owner.http()
                        .get(base + "/latest")
                        .get("release")
                        .get("tag_name")
                        .asText());

        assertEquals(
                409, owner.http().patch(base + "/v2.0", Map.of("draft", true)).status());
        assertEquals(409, owner.http().post(base, Map.of("tag_name", "v1.0")).status());
        assertEquals(400, owner.http().post(base, Map.of("tag_name", "a..b")).status());
        assertEquals(
                400,
                owner.http()
                        .post(base, Map.of("tag_name", "v9", "target_commitish", "nowhere"))
                        .status());
        assertEquals(400, owner.http().post(base, Map.of("name", "no tag")).status());
        assertEquals(
                400,
                owner.http()
                        .post(base, Map.of("tag_name", "v9", "draft", "yes"))
                        .status());
        // a target is a revision, never a path: the Git directory's own files are not reachable through it
        for (String outside : List.of("../../config", "../../../../../../etc/passwd", "refs/heads/../../HEAD")) {
            Http.Reply r = owner.http().post(base, Map.of("tag_name", "v9", "target_commitish", outside));
            assertEquals(400, r.status(), outside + ": " + r.body());
            assertFalse(r.body().contains("repositoryformatversion") || r.body().contains("root:"), r.body());
        }
        // a tag that cannot be a path segment, or is the latest route, gets no release (it could never be reached)
        for (String unreachable : List.of("cli/v1", "latest", "50%", "a;b")) {
            assertEquals(
                    400,
                    owner.http().post(base, Map.of("tag_name", unreachable)).status(),
                    unreachable);
        }
        // nothing the row cannot hold makes a tag first
        assertEquals(
                400,
                owner.http()
                        .post(base, Map.of("tag_name", "v8", "body", "a\u0000b"))
                        .status());
        assertFalse(tags(server, owner, id).contains("refs/tags/v8"), "a refused release makes no tag");

        JsonNode list = owner.http().get(base).json();
        assertEquals(3, list.get("total").asInt());
        assertEquals(List.of("v2.0", "v1.1-rc", "v1.0"), list.get("releases").findValuesAsText("tag_name"));
        JsonNode page = owner.http().get(base + "?limit=1&offset=1").json();
        assertEquals(List.of("v1.1-rc"), page.get("releases").findValuesAsText("tag_name"));

        // a stranger: the same 404 as for a missing repository, on every route; then the public repository reads
        Http.Reply missing = stranger.http().get(releases("repo_doesnotexist00000000"));
        for (String path : List.of(base, base + "/latest", base + "/v1.0", base + "/v1.0/assets")) {
            Http.Reply r = stranger.http().get(path);
            assertEquals(404, r.status(), path);
            assertEquals(missing.body(), r.body(), path);
        }
        assertEquals(404, stranger.http().post(base, Map.of("tag_name", "x")).status());
        assertEquals(404, stranger.http().delete(base + "/v1.0").status());
        assertEquals(
                200,
                owner.http()
                        .patch("/api/repos/" + id, Map.of("visibility", "public"))
                        .status());
        assertEquals(
                201,
                owner.http()
                        .post(base, Map.of("tag_name", "v3.0", "draft", true))
                        .status());
        assertEquals(4, owner.http().get(base).get("total").asInt());
        JsonNode seen = stranger.http().get(base).json();
        assertEquals(3, seen.get("total").asInt(), "drafts are the owner's");
        assertEquals(404, stranger.http().get(base + "/v3.0").status());
        assertEquals(403, stranger.http().post(base, Map.of("tag_name", "x")).status());
        assertEquals(403, stranger.http().delete(base + "/v1.0").status());

        // deleting a release keeps its tag unless asked; a release for an existing tag takes the tag's commit
        Http.Reply deleted = owner.http().delete(base + "/v1.0");
        assertEquals(200, deleted.status(), deleted.body());
        assertFalse(deleted.get("tag_deleted").asBoolean());
        assertTrue(tags(server, owner, id).contains("refs/tags/v1.0"));
        Http.Reply again = owner.http().post(base, Map.of("tag_name", "v1.0", "target_commitish", c1));
        assertEquals(201, again.status(), again.body());
        assertEquals(c2, again.get("release").get("commit_id").asText());
        assertEquals(200, owner.http().delete(base + "/v1.1-rc?delete_tag=true").status());
        assertFalse(tags(server, owner, id).contains("refs/tags/v1.1-rc"));
        assertEquals(404, owner.http().get(base + "/v1.1-rc").status());
        assertEquals(400, owner.http().delete(base + "/v1.0?delete_tag=maybe").status());
    }

    @Test
    void assetsStreamInAsMultipartAndOutWithRangesAndEtagsAndGoWithTheirRepository(AtriumServer server)
            throws Exception {
        User owner = server.newUser();
        User stranger = server.newUser();
        String id = ReposApiTest.create(owner, "assets");
        ReposApiTest.sha(
                ReposApiTest.commit(owner, id, "main", ZERO, "first", List.of(ReposApiTest.file("a.txt", "1"))));
        String base = releases(id);
        assertEquals(201, owner.http().post(base, Map.of("tag_name", "v1")).status());
        String assets = base + "/v1/assets";
        String multipart = "multipart/form-data; boundary=" + BOUNDARY;

        byte[] bytes = new byte[3 * 1024 * 1024 + 17];
        new Random(35).nextBytes(bytes);
        HttpResponse<String> up = upload(
                server,
                owner,
                assets,
                form(List.<Object[]>of(new Object[] {"attachment", "app.tar.gz", "application/gzip", bytes}), true),
                multipart);
        assertEquals(201, up.statusCode(), up.body());
        JsonNode asset = Http.JSON.readTree(up.body()).get("asset");
        assertEquals("app.tar.gz", asset.get("name").asText());
        assertEquals(bytes.length, asset.get("size").asLong());
        assertEquals(sha256(bytes), asset.get("sha256").asText());
        assertEquals("application/gzip", asset.get("content_type").asText());
        String url = asset.get("download_url").asText();
        assertTrue(url.startsWith(server.base() + base + "/v1/assets/"), url);

        HttpResponse<byte[]> whole = download(url, owner);
        assertEquals(200, whole.statusCode());
        assertArrayEquals(bytes, whole.body());
        String etag = "\"" + sha256(bytes) + "\"";
        assertEquals(etag, whole.headers().firstValue("ETag").orElseThrow());
        assertEquals(
                "application/gzip", whole.headers().firstValue("Content-Type").orElseThrow());
        assertEquals("bytes", whole.headers().firstValue("Accept-Ranges").orElseThrow());
        assertTrue(whole.headers()
                .firstValue("Content-Disposition")
                .orElseThrow()
                .startsWith("attachment; filename=\"app.tar.gz\""));

        HttpResponse<byte[]> part = download(url, owner, "Range", "bytes=100-199");
        assertEquals(206, part.statusCode());
        assertEquals(
                "bytes 100-199/" + bytes.length,
                part.headers().firstValue("Content-Range").orElseThrow());
        assertArrayEquals(Arrays.copyOfRange(bytes, 100, 200), part.body());
        HttpResponse<byte[]> tail = download(url, owner, "Range", "bytes=-10");
        assertArrayEquals(Arrays.copyOfRange(bytes, bytes.length - 10, bytes.length), tail.body());
        HttpResponse<byte[]> outside = download(url, owner, "Range", "bytes=" + bytes.length + "-");
        assertEquals(416, outside.statusCode());
        assertEquals(
                "RANGE_NOT_SATISFIABLE",
                Http.JSON.readTree(outside.body()).get("error").get("code").asText());
        assertEquals(304, download(url, owner, "If-None-Match", etag).statusCode());
        HttpResponse<byte[]> stale = download(url, owner, "Range", "bytes=0-9", "If-Range", "\"other\"");
        assertEquals(200, stale.statusCode(), "a changed If-Range gets the whole asset");
        assertEquals(404, download(url, stranger).statusCode());

        // the same bytes under a second name are kept once; a name is taken once per release
        byte[] again = form(List.<Object[]>of(new Object[] {"attachment", "app.tar.gz", null, bytes}), true);
        assertEquals(409, upload(server, owner, assets, again, multipart).statusCode());
        HttpResponse<String> second = upload(server, owner, assets + "?name=copy.bin", again, multipart);
        assertEquals(201, second.statusCode(), second.body());
        assertEquals(
                "application/octet-stream",
                Http.JSON
                        .readTree(second.body())
                        .get("asset")
                        .get("content_type")
                        .asText());
        assertEquals(1, blobFiles(server, id));

        // a content type JAX-RS could not write back is kept as application/octet-stream
        HttpResponse<String> odd = upload(
                server,
                owner,
                assets + "?name=odd.txt",
                form(List.<Object[]>of(new Object[] {"attachment", "x", "text/plain; a", new byte[] {1, 2}}), true),
                multipart);
        assertEquals(201, odd.statusCode(), odd.body());
        JsonNode oddAsset = Http.JSON.readTree(odd.body()).get("asset");
        assertEquals("application/octet-stream", oddAsset.get("content_type").asText());
        assertEquals(200, download(oddAsset.get("download_url").asText(), owner).statusCode());
        assertEquals(
                200,
                owner.http().delete(assets + "/" + oddAsset.get("id").asText()).status());

        // what is not the form it says it is keeps nothing
        HttpResponse<String> plain = upload(server, owner, assets, bytes, "application/octet-stream");
        assertEquals(400, plain.statusCode());
        assertTrue(plain.body().contains("multipart/form-data"), plain.body());
        byte[] cut = form(List.<Object[]>of(new Object[] {"attachment", "cut.bin", null, bytes}), false);
        assertEquals(
                400,
                upload(server, owner, assets, Arrays.copyOf(cut, cut.length - 2), multipart)
                        .statusCode());
        byte[] two = form(
                List.<Object[]>of(
                        new Object[] {"attachment", "one.bin", null, new byte[] {1}},
                        new Object[] {"attachment", "two.bin", null, new byte[] {2}}),
                true);
        assertEquals(400, upload(server, owner, assets, two, multipart).statusCode());
        byte[] named = form(List.<Object[]>of(new Object[] {"attachment", "x", null, new byte[] {1}}), true);
        assertEquals(
                400,
                upload(server, owner, assets + "?name=..", named, multipart).statusCode());
        byte[] none = form(List.<Object[]>of(new Object[] {"note", null, null, new byte[] {1}}), true);
        assertEquals(400, upload(server, owner, assets, none, multipart).statusCode());
        JsonNode listed = owner.http().get(assets).json().get("assets");
        assertEquals(List.of("app.tar.gz", "copy.bin"), listed.findValuesAsText("name"));
        assertEquals(
                2, listed.get(0).get("download_count").asInt(), "whole downloads count (the stale If-Range one too)");
        assertEquals(listed, owner.http().get(base + "/v1").get("release").get("assets"));
        assertEquals(1, blobFiles(server, id));

        String first = listed.get(0).get("id").asText();
        String copy = listed.get(1).get("id").asText();
        assertEquals(404, stranger.http().delete(assets + "/" + first).status());
        assertEquals(200, owner.http().delete(assets + "/" + first).status());
        assertEquals(404, owner.http().delete(assets + "/" + first).status());
        assertEquals(1, blobFiles(server, id), "copy.bin still names the bytes");
        assertEquals(200, owner.http().delete(assets + "/" + copy).status());
        assertEquals(0, blobFiles(server, id), "the last asset took its bytes");

        // a deleted release takes its assets; a deleted repository its releases and their bytes
        HttpResponse<String> kept = upload(server, owner, assets, again, multipart);
        assertEquals(201, kept.statusCode(), kept.body());
        assertEquals(200, owner.http().delete(base + "/v1").status());
        assertEquals(0, blobFiles(server, id));
        assertEquals(201, owner.http().post(base, Map.of("tag_name", "v2")).status());
        assertEquals(
                201,
                upload(server, owner, base + "/v2/assets", again, multipart).statusCode());
        assertEquals(1, blobFiles(server, id));
        assertEquals(200, owner.http().delete("/api/repos/" + id).status());
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (blobFiles(server, id) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertEquals(0, blobFiles(server, id), "the repository's assets went with it");
    }
}
