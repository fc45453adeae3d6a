package dev.atrium.containers.podman.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading uploaded archives before podman sees them, and the relay's path rule. */
class ImageArchiveTest {

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String sha(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    /** A ustar archive of regular files. */
    static byte[] tar(Map<String, byte[]> files) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
            byte[] h = new byte[512];
            put(h, 0, f.getKey());
            put(h, 100, "0000644");
            put(h, 124, String.format("%011o", f.getValue().length));
            put(h, 136, "00000000000");
            h[156] = '0';
            put(h, 257, "ustar");
            put(h, 263, "00");
            for (int i = 148; i < 156; i++) {
                h[i] = ' ';
            }
            long sum = 0;
            for (byte b : h) {
                sum += b & 0xff;
            }
            put(h, 148, String.format("%06o", sum));
            out.writeBytes(h);
            out.writeBytes(f.getValue());
            out.writeBytes(new byte[(512 - f.getValue().length % 512) % 512]);
        }
        out.writeBytes(new byte[1024]);
        return out.toByteArray();
    }

    private static void put(byte[] h, int at, String v) {
        byte[] b = v.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(b, 0, h, at, b.length);
    }

    private static Map<String, byte[]> oci(String cmd) throws Exception {
        byte[] layer = tar(Map.of("hello", bytes("hi")));
        byte[] config = bytes("{\"config\":{" + cmd + "},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:"
                + sha(layer) + "\"]}}");
        byte[] manifest = bytes("{\"schemaVersion\":2,\"config\":{\"digest\":\"sha256:" + sha(config)
                + "\"},\"layers\":[{\"digest\":\"sha256:" + sha(layer) + "\"}]}");
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("oci-layout", bytes("{\"imageLayoutVersion\":\"1.0.0\"}"));
        files.put("index.json", bytes("{\"manifests\":[{\"digest\":\"sha256:" + sha(manifest) + "\"}]}"));
        files.put("blobs/sha256/" + sha(manifest), manifest);
        files.put("blobs/sha256/" + sha(config), config);
        files.put("blobs/sha256/" + sha(layer), layer);
        return files;
    }

    @Test
    void anOciArchiveIsKnownByItsConfigsDigest() throws Exception {
        Map<String, byte[]> files = oci("\"Cmd\":[\"httpd\"],\"User\":\"1000\"");
        ImageArchive image = ImageArchive.read(tar(files));
        String config = files.keySet().stream().skip(3).findFirst().orElseThrow();
        assertEquals(config.substring("blobs/sha256/".length()), image.id());
        assertEquals("sha256:" + image.id(), image.reference());
        assertEquals("1000", image.config().path("User").asText());
    }

    @Test
    void aDockerArchiveIsRead() throws Exception {
        byte[] config = bytes("{\"config\":{\"Entrypoint\":[\"/app\"]}}");
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("manifest.json", bytes("[{\"Config\":\"c.json\",\"Layers\":[\"l/layer.tar\"]}]"));
        files.put("c.json", config);
        files.put("l/layer.tar", tar(Map.of("x", bytes("x"))));
        assertEquals(sha(config), ImageArchive.read(tar(files)).id());
    }

    @Test
    void badArchivesSayWhy() throws Exception {
        assertTrue(assertThrows(ImageArchive.Invalid.class, () -> ImageArchive.read(bytes("just text")))
                .getMessage()
                .contains("not a tar"));
        assertTrue(assertThrows(ImageArchive.Invalid.class, () -> ImageArchive.read(new byte[1024]))
                .getMessage()
                .contains("not a tar"));
        assertTrue(assertThrows(ImageArchive.Invalid.class, () -> ImageArchive.read(tar(Map.of("a.txt", bytes("a")))))
                .getMessage()
                .contains("manifest.json"));
        Map<String, byte[]> noCommand = oci("\"Env\":[\"A=1\"]");
        assertTrue(assertThrows(ImageArchive.Invalid.class, () -> ImageArchive.read(tar(noCommand)))
                .getMessage()
                .contains("no command"));
        Map<String, byte[]> missingLayer = oci("\"Cmd\":[\"x\"]");
        missingLayer.remove(missingLayer.keySet().stream().skip(4).findFirst().orElseThrow());
        assertTrue(assertThrows(ImageArchive.Invalid.class, () -> ImageArchive.read(tar(missingLayer)))
                .getMessage()
                .contains("is not in the archive"));
        byte[] truncated = tar(oci("\"Cmd\":[\"x\"]"));
        byte[] cut = java.util.Arrays.copyOf(truncated, 700);
        assertThrows(ImageArchive.Invalid.class, () -> ImageArchive.read(cut));
    }

    @Test
    void theRelayPassesOnlyTheDeploymentsOwnBindingPaths() {
        assertTrue(BindingRelay.permitted("/internal/bindings/dep_a-r1/CACHE/key?urlencoded=true", "dep_a-r1"));
        assertFalse(BindingRelay.permitted("/internal/bindings/dep_b-r1/CACHE/key", "dep_a-r1"));
        assertFalse(BindingRelay.permitted("/internal/bindings/dep_a-r1x/CACHE/key", "dep_a-r1"));
        assertFalse(BindingRelay.permitted("/internal/bindings/dep_a-r1/../../../api/services", "dep_a-r1"));
        assertFalse(BindingRelay.permitted("/internal/bindings/dep_a-r1/%2E%2e/x", "dep_a-r1"));
        assertFalse(BindingRelay.permitted("/internal/bindings/dep_a-r1/a%2Fb", "dep_a-r1"));
        assertFalse(BindingRelay.permitted("/api/services", "dep_a-r1"));
        assertFalse(BindingRelay.permitted("http://127.0.0.1:5432/internal/bindings/dep_a-r1/x", "dep_a-r1"));
    }
}
