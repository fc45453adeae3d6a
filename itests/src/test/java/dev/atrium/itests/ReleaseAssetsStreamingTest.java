package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import dev.atrium.itests.StorageStreamingTest.Generated;
import dev.atrium.itests.StorageStreamingTest.Heap;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A 1 GiB release asset goes up as {@code multipart/form-data} and comes down again, whole and as a range, with the
 * server's heap (over JMX, after full collections while the bytes flow) never 256 MiB above where it started, and
 * the same SHA-256 (issue 35).
 */
class ReleaseAssetsStreamingTest {

    static final long GIB = StorageStreamingTest.GIB;
    static final long MIB = StorageStreamingTest.MIB;

    static TestDatabase db;
    static Path data;
    static int jmx;
    static AtriumServer server;

    @BeforeAll
    static void start() throws Exception {
        db = TestDatabase.create();
        data = Files.createTempDirectory("atrium-release-streaming-");
        jmx = AtriumServer.freePort();
        server = AtriumServer.launch(
                data,
                db,
                Map.of(
                        "ATRIUM_JAVA_OPTS",
                        StorageStreamingTest.jmxOptions(jmx),
                        "ATRIUM_RELEASE_ASSET_MAX_BYTES",
                        String.valueOf(2 * GIB)));
    }

    @AfterAll
    static void stop() throws Throwable {
        server.close();
    }

    @Test
    void aGibibyteAssetStreamsUpAndDownWithTheHeapGrowingLessThan256MiB() throws Throwable {
        try (Heap heap = new Heap(jmx)) {
            User u = server.newUser();
            String id = ReposApiTest.create(u, "big");
            ReposApiTest.sha(ReposApiTest.commit(
                    u, id, "main", ReleasesTest.ZERO, "first", List.of(ReposApiTest.file("a.txt", "1"))));
            String releases = ReleasesTest.releases(id);
            assertEquals(201, u.http().post(releases, Map.of("tag_name", "v1")).status());
            long baseline = heap.retained();

            long size = GIB;
            Generated file = new Generated(size, 35, new AtomicLong());
            byte[] head = ("--" + ReleasesTest.BOUNDARY + "\r\nContent-Disposition: form-data; name=\"attachment\";"
                            + " filename=\"big.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII);
            byte[] tail = ("\r\n--" + ReleasesTest.BOUNDARY + "--\r\n").getBytes(StandardCharsets.US_ASCII);
            InputStream body = new SequenceInputStream(
                    new ByteArrayInputStream(head), new SequenceInputStream(file, new ByteArrayInputStream(tail)));
            HttpRequest request = HttpRequest.newBuilder(URI.create(server.base() + releases + "/v1/assets"))
                    .header("Authorization", "Bearer " + u.http().token())
                    .header("Content-Type", "multipart/form-data; boundary=" + ReleasesTest.BOUNDARY)
                    .timeout(Duration.ofMinutes(5))
                    .POST(HttpRequest.BodyPublishers.fromPublisher(
                            HttpRequest.BodyPublishers.ofInputStream(() -> body), head.length + size + tail.length))
                    .build();
            CompletableFuture<HttpResponse<String>> upload = CompletableFuture.supplyAsync(() -> {
                try {
                    return ReleasesTest.CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            long uploadPeak = StorageStreamingTest.peakWhile(heap, upload);
            assertEquals(201, upload.get().statusCode(), upload.get().body());
            JsonNode asset = Http.JSON.readTree(upload.get().body()).get("asset");
            String sent = file.sha256();
            assertEquals(sent, asset.get("sha256").asText());
            assertEquals(size, asset.get("size").asLong());
            String url = asset.get("download_url").asText();

            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            AtomicLong received = new AtomicLong();
            CompletableFuture<Void> download = CompletableFuture.runAsync(() -> {
                try {
                    HttpResponse<InputStream> r = ReleasesTest.CLIENT.send(
                            HttpRequest.newBuilder(URI.create(url))
                                    .header(
                                            "Authorization",
                                            "Bearer " + u.http().token())
                                    .build(),
                            HttpResponse.BodyHandlers.ofInputStream());
                    assertEquals(200, r.statusCode());
                    byte[] buffer = new byte[1 << 16];
                    try (InputStream in = r.body()) {
                        for (int n = in.read(buffer); n != -1; n = in.read(buffer)) {
                            sha.update(buffer, 0, n);
                            received.addAndGet(n);
                        }
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            long downloadPeak = StorageStreamingTest.peakWhile(heap, download);
            assertEquals(size, received.get());
            assertEquals(sent, HexFormat.of().formatHex(sha.digest()));

            // the last MiB but one byte, as a range, is what the generator made there
            HttpResponse<byte[]> range =
                    ReleasesTest.download(url, u, "Range", "bytes=" + (size - MIB) + "-" + (size - 2));
            assertEquals(206, range.statusCode());
            assertEquals(MIB - 1, range.body().length);
            Generated again = new Generated(size, 35, new AtomicLong());
            byte[] expected = new byte[(int) MIB];
            again.skipNBytes(size - MIB);
            assertEquals(MIB, again.readNBytes(expected, 0, (int) MIB));
            assertTrue(
                    java.util.Arrays.equals(expected, 0, (int) MIB - 1, range.body(), 0, (int) MIB - 1),
                    "the range's bytes");

            assertTrue(
                    uploadPeak - baseline < 256 * MIB,
                    "upload: heap grew by " + (uploadPeak - baseline) / MIB + " MiB");
            assertTrue(
                    downloadPeak - baseline < 256 * MIB,
                    "download: heap grew by " + (downloadPeak - baseline) / MIB + " MiB");
            System.out.printf(
                    "release asset heap: baseline %d MiB, upload peak +%d MiB, download peak +%d MiB%n",
                    baseline / MIB, (uploadPeak - baseline) / MIB, (downloadPeak - baseline) / MIB);
        }
    }
}
