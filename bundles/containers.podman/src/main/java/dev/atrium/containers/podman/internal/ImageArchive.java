package dev.atrium.containers.podman.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * An uploaded image: an OCI archive ({@code oci-layout}, {@code index.json}, {@code blobs/sha256/…}) or a docker archive
 * ({@code manifest.json}, a config and layer tars), as {@code podman save} and {@code docker save} write them. Read
 * here before podman sees it, so that a bad upload is the client's 400 with a reason rather than podman's error text,
 * and so that the image is known by its id (its config's SHA-256) whatever name the archive gives it, or none.
 *
 * @param id     the image id: the config's SHA-256, hex
 * @param config the image configuration's {@code config} object ({@code Cmd}, {@code Entrypoint}, {@code User}, …)
 */
record ImageArchive(String id, JsonNode config) {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern DIGEST = Pattern.compile("sha256:[0-9a-f]{64}");

    /** Why an archive cannot be run; the message is the client's. */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;

        Invalid(String message) {
            super(message);
        }
    }

    /** How podman's API names the image: a bare 64-hex id is refused as a repository name, {@code sha256:…} is not. */
    String reference() {
        return "sha256:" + id;
    }

    static ImageArchive read(byte[] tar) throws Invalid {
        Map<String, int[]> entries = entries(tar);
        if (entries.containsKey("index.json")) {
            return oci(tar, entries);
        }
        if (entries.containsKey("manifest.json")) {
            return docker(tar, entries);
        }
        throw new Invalid("the archive has neither index.json (an OCI archive) nor manifest.json (a docker archive)");
    }

    private static ImageArchive oci(byte[] tar, Map<String, int[]> entries) throws Invalid {
        JsonNode index = json(tar, entries, "index.json");
        JsonNode manifest = blob(tar, entries, index.path("manifests").path(0).path("digest"), "index.json's manifest");
        if (manifest.has("manifests")) { // an index of platforms: its first
            manifest = blob(
                    tar, entries, manifest.path("manifests").path(0).path("digest"), "the nested index's manifest");
        }
        JsonNode configDigest = manifest.path("config").path("digest");
        JsonNode config = blob(tar, entries, configDigest, "the manifest's config");
        for (JsonNode layer : manifest.path("layers")) {
            blobEntry(entries, layer.path("digest"), "a layer");
        }
        return of(configDigest.asText().substring("sha256:".length()), config);
    }

    private static ImageArchive docker(byte[] tar, Map<String, int[]> entries) throws Invalid {
        JsonNode manifest = json(tar, entries, "manifest.json").path(0);
        String configPath = manifest.path("Config").asText("");
        int[] config = entries.get(normalise(configPath));
        if (config == null) {
            throw new Invalid("manifest.json names a config '" + configPath + "' the archive does not have");
        }
        for (JsonNode layer : manifest.path("Layers")) {
            if (!entries.containsKey(normalise(layer.asText("")))) {
                throw new Invalid("manifest.json names a layer '" + layer.asText() + "' the archive does not have");
            }
        }
        return of(sha256(tar, config), parse(tar, config, configPath));
    }

    private static ImageArchive of(String id, JsonNode image) throws Invalid {
        JsonNode config = image.path("config");
        boolean command =
                config.path("Cmd").size() > 0 || config.path("Entrypoint").size() > 0;
        if (!command) {
            throw new Invalid("the image has no command: its config has neither Cmd nor Entrypoint");
        }
        return new ImageArchive(id, config);
    }

    private static int[] blobEntry(Map<String, int[]> entries, JsonNode digest, String what) throws Invalid {
        if (!digest.isTextual() || !DIGEST.matcher(digest.textValue()).matches()) {
            throw new Invalid(what + " has no sha256 digest");
        }
        String path = "blobs/sha256/" + digest.textValue().substring("sha256:".length());
        int[] entry = entries.get(path);
        if (entry == null) {
            throw new Invalid(what + " " + digest.textValue() + " is not in the archive");
        }
        return entry;
    }

    private static JsonNode blob(byte[] tar, Map<String, int[]> entries, JsonNode digest, String what) throws Invalid {
        int[] entry = blobEntry(entries, digest, what);
        if (!sha256(tar, entry).equals(digest.textValue().substring("sha256:".length()))) {
            throw new Invalid(what + " does not match its digest " + digest.textValue());
        }
        return parse(tar, entry, what);
    }

    private static JsonNode json(byte[] tar, Map<String, int[]> entries, String name) throws Invalid {
        return parse(tar, entries.get(name), name);
    }

    private static JsonNode parse(byte[] tar, int[] entry, String what) throws Invalid {
        try {
            JsonNode node = JSON.readTree(tar, entry[0], entry[1]);
            if (node == null || !node.isContainerNode()) {
                throw new Invalid(what + " is not a JSON object or array");
            }
            return node;
        } catch (IOException e) {
            throw new Invalid(what + " is not valid JSON");
        }
    }

    private static String sha256(byte[] tar, int[] entry) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update(tar, entry[0], entry[1]);
            return HexFormat.of().formatHex(d.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private static String normalise(String name) {
        String n = name;
        while (n.startsWith("./")) {
            n = n.substring(2);
        }
        return n;
    }

    /**
     * The regular files of a tar (ustar, with GNU long names and PAX paths), by name: offset and length of their bytes.
     */
    static Map<String, int[]> entries(byte[] tar) throws Invalid {
        Map<String, int[]> out = new HashMap<>();
        int pos = 0;
        String longName = null;
        while (pos + 512 <= tar.length) {
            if (zeros(tar, pos)) {
                break; // the end-of-archive blocks
            }
            if (!checksumOk(tar, pos)) {
                throw new Invalid("the artifact is not a tar archive (an OCI or docker archive is expected)");
            }
            String name = text(tar, pos, 100);
            String prefix = text(tar, pos + 345, 155);
            if (!prefix.isEmpty() && tar[pos + 257] == 'u') {
                name = prefix + "/" + name;
            }
            long size = octal(tar, pos + 124, 12);
            char type = (char) tar[pos + 156];
            int data = pos + 512;
            if (size < 0 || data + size > tar.length) {
                throw new Invalid("the tar archive is truncated");
            }
            if (type == 'L') {
                longName = new String(tar, data, (int) size, StandardCharsets.UTF_8).replace("\0", "");
            } else if (type == 'x') {
                String pax = new String(tar, data, (int) size, StandardCharsets.UTF_8);
                for (String line : pax.split("\n")) {
                    int eq = line.indexOf(" path=");
                    if (eq >= 0) {
                        longName = line.substring(eq + " path=".length());
                    }
                }
            } else {
                if (longName != null) {
                    name = longName;
                    longName = null;
                }
                if (type == '0' || type == '\0') {
                    out.put(normalise(name), new int[] {data, (int) size});
                }
            }
            pos = data + (int) ((size + 511) / 512 * 512);
        }
        if (pos == 0) {
            throw new Invalid("the artifact is not a tar archive (an OCI or docker archive is expected)");
        }
        return out;
    }

    private static boolean zeros(byte[] tar, int pos) {
        for (int i = pos; i < pos + 512; i++) {
            if (tar[i] != 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean checksumOk(byte[] tar, int pos) {
        long stored = octal(tar, pos + 148, 8);
        long sum = 0;
        for (int i = 0; i < 512; i++) {
            sum += (i >= 148 && i < 156) ? ' ' : (tar[pos + i] & 0xff);
        }
        return stored == sum;
    }

    private static String text(byte[] tar, int pos, int length) {
        int end = pos;
        while (end < pos + length && tar[end] != 0) {
            end++;
        }
        return new String(tar, pos, end - pos, StandardCharsets.UTF_8);
    }

    /** An octal field; -1 when it is not one. */
    private static long octal(byte[] tar, int pos, int length) {
        long value = 0;
        boolean digits = false;
        for (int i = pos; i < pos + length; i++) {
            byte b = tar[i];
            if (b == 0 || (b == ' ' && digits)) {
                break;
            }
            if (b == ' ') {
                continue;
            }
            if (b < '0' || b > '7') {
                return -1;
            }
            value = value * 8 + (b - '0');
            digits = true;
        }
        return digits ? value : -1;
    }
}
