package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Container services end to end on the real podman: an OCI archive built here from busybox-static (the root filesystem
 * {@code ./atrium test} builds for Actions, {@code ~/.cache/atrium/images/busybox.tar}) plus a layer with a version
 * page and CGI scripts, deployed with {@code target.artifact.kind: container-image} and {@code provider.name: podman},
 * answered through Host routing; a {@code kill -9} of its process is followed by a restart; a second version, then a
 * rollback; a kv binding through the bindings relay; no reach of the host's loopback; bad archives refused with 400.
 * Nothing is skipped: without podman or the busybox root filesystem these fail.
 */
@SharedServer
class ContainerServicesTest {

    /** The CGI scripts the image's httpd runs: a kv binding read and written through the relay, and a loopback probe. */
    private static final String KV_SCRIPT = """
            #!/bin/sh
            echo "Content-Type: text/plain"
            echo ""
            url="$ATRIUM_BINDING_CACHE_URL/${QUERY_STRING%%=*}?urlencoded=true"
            hostport=${url#http://}; hostport=${hostport%%/*}
            path=/${url#http://*/}
            value=${QUERY_STRING#*=}
            if [ "$value" != "$QUERY_STRING" ]; then
              printf 'PUT %s HTTP/1.0\\r\\nHost: %s\\r\\n%s: %s\\r\\nContent-Length: %s\\r\\n\\r\\n%s' "$path" "$hostport" \\
                "$ATRIUM_BINDINGS_HEADER" "$ATRIUM_BINDINGS_SECRET" "${#value}" "$value" \\
                | nc -w 5 "${hostport%:*}" "${hostport#*:}" | head -n 1
            else
              wget -q -O - --header "$ATRIUM_BINDINGS_HEADER: $ATRIUM_BINDINGS_SECRET" "$url" || echo "no value"
            fi
            """;

    private static final String PROBE_SCRIPT = """
            #!/bin/sh
            echo "Content-Type: text/plain"
            echo ""
            if nc -w 2 127.0.0.1 5432 </dev/null; then echo "loopback reached"; else echo "loopback refused"; fi
            other="${ATRIUM_BINDINGS_URL%/*}/someone-else/CACHE/k?urlencoded=true"
            wget -q -O - --header "$ATRIUM_BINDINGS_HEADER: $ATRIUM_BINDINGS_SECRET" "$other" && echo "other reached" \\
              || echo "other refused"
            if nc -w 2 1.1.1.1 80 </dev/null; then echo "direct reached"; else echo "direct refused"; fi
            proxy=${HTTP_PROXY#http://}
            printf 'GET http://127.0.0.1:%s/healthz HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' "$QUERY_STRING" \\
              | nc -w 5 "${proxy%:*}" "${proxy#*:}" | head -n 1 | sed 's/^/allowed: /'
            printf 'GET http://10.1.2.3/ HTTP/1.1\\r\\nHost: 10.1.2.3\\r\\n\\r\\n' \\
              | nc -w 5 "${proxy%:*}" "${proxy#*:}" | head -n 1 | sed 's/^/private: /'
            """;

    record Svc(String id, String host) {}

    private static Svc service(User u, String name) {
        String id = ServicesTest.createService(u, ServicesTest.unique(name));
        String slug =
                u.http().get("/api/services/" + id).get("service").get("slug").asText();
        return new Svc(id, slug + ".apps.localhost");
    }

    private static Map<String, Object> body(byte[] archive) {
        return Map.of(
                "bundle", Base64.getEncoder().encodeToString(archive),
                "target", Map.of("artifact", Map.of("kind", "container-image")),
                "provider", Map.of("name", "podman"));
    }

    /**
     * Deploys the archive as the request's bytes ({@code application/x-tar}): a busybox image is over the 1 MiB a JSON
     * body may have, base64 or not.
     */
    private static String deploy(User u, Svc s, byte[] archive) {
        return deploy(u, s, archive, "");
    }

    private static String deploy(User u, Svc s, byte[] archive, String query) {
        Http.Reply r = u.http()
                .send(
                        "POST",
                        "/api/services/" + s.id() + "/deployments?kind=container-image&provider=podman" + query,
                        archive,
                        "application/x-tar");
        assertEquals(
                201,
                r.status(),
                "a container-image deployment must start (is podman installed? ./atrium test " + "installs it): "
                        + r.body());
        return r.get("deployment").get("id").asText();
    }

    /** GET through the server's Host routing until it answers 200 (or {@code seconds} pass): the body. */
    private static String await(AtriumServer server, Svc s, String path, String expected, int seconds)
            throws Exception {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        String last = "";
        while (System.nanoTime() < deadline) {
            RawHttp.Response r = HostHttp.get(server.port, s.host(), path);
            last = r.status() + " " + HostHttp.text(r);
            if (r.status() == 200 && HostHttp.text(r).contains(expected)) {
                return HostHttp.text(r);
            }
            Thread.sleep(100);
        }
        fail("no '" + expected + "' at " + s.host() + path + " within " + seconds + " s; last answer: " + last);
        return last;
    }

    @Test
    void aContainerServiceAnswersRestartsAfterKillReadsItsKvAndRollsBack(AtriumServer server) throws Exception {
        String marker = "site-" + Long.toString(System.nanoTime(), 36);
        User u = server.newUser();
        Svc s = service(u, "ctr");
        String kv = u.http()
                .post("/api/resources", Map.of("name", "cache", "type", "kv"))
                .get("resource")
                .get("id")
                .asText();
        Http.Reply bound = u.http()
                .patch(
                        "/api/services/" + s.id() + "/bindings",
                        Map.of("bindings", List.of(Map.of("name", "CACHE", "resource_id", kv))));
        assertEquals(200, bound.status(), bound.body());

        long t0 = System.nanoTime();
        String one = deploy(u, s, image(marker + "-v1", "v1"));
        long deployMillis = (System.nanoTime() - t0) / 1_000_000;
        assertEquals("version v1", await(server, s, "/", "version v1", 5).strip());
        Http.Reply health = new Http(server.base(), null).get("/healthz");
        assertTrue(
                health.get("details").path("services.podman").asText().matches("podman: \\d+ of \\d+ container.*"),
                health.body());

        // its bindings through the relay: written and read back by the container, seen by nobody else
        assertTrue(await(server, s, "/cgi-bin/kv?greeting=hello", "", 5).startsWith("HTTP/1.1 2"), "kv put");
        assertEquals(
                "hello", await(server, s, "/cgi-bin/kv?greeting", "hello", 5).strip());
        String probe = await(server, s, "/cgi-bin/probe?" + server.port, "loopback", 10);
        assertTrue(probe.contains("loopback refused"), probe);
        assertTrue(probe.contains("other refused"), probe);
        // no way out but the egress proxy, which asks the kernel's guard: this test server allows loopback, never a
        // private range
        assertTrue(probe.contains("direct refused"), probe);
        assertTrue(probe.contains("allowed: HTTP/1.1 200"), probe);
        assertTrue(probe.contains("private: HTTP/1.1 403"), probe);

        // its output is the service's log
        JsonNode logs = null;
        for (int i = 0; i < 50; i++) {
            logs = u.http().get("/api/services/" + s.id() + "/logs?limit=200").json();
            if (logs.get("logs").toString().contains("container v1 starting")) {
                break;
            }
            Thread.sleep(100);
        }
        assertTrue(logs.get("logs").toString().contains("container v1 starting"), logs.toString());

        // kill -9 of its process: started again (backoff 1 s) and answering within a bounded time
        long pid = process(marker + "-v1");
        long killedAt = System.nanoTime();
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        await(server, s, "/", "version v1", 15);
        long backMillis = (System.nanoTime() - killedAt) / 1_000_000;
        assertTrue(process(marker + "-v1") != pid, "a new process serves");

        // a canary at 50 %: both versions answer, then the promoted one alone
        String two = deploy(u, s, image(marker + "-v2", "v2"), "&strategy=canary&canary_percent=50");
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < 60 && seen.size() < 2; i++) {
            seen.add(HostHttp.text(HostHttp.get(server.port, s.host(), "/")).strip());
        }
        assertEquals(java.util.Set.of("version v1", "version v2"), seen);
        Http.Reply promoted = u.http().post("/api/services/" + s.id() + "/deployments/" + two + "/promote", null);
        assertEquals(200, promoted.status(), promoted.body());
        for (int i = 0; i < 20; i++) {
            assertEquals("version v2", await(server, s, "/", "version", 5).strip());
        }
        Http.Reply back = u.http().post("/api/services/" + s.id() + "/deployments/rollback", null);
        assertEquals(200, back.status(), back.body());
        assertEquals(one, back.get("deployment").get("id").asText());
        assertEquals("version v1", await(server, s, "/", "version v1", 5).strip());
        assertFalse(one.equals(two));
        System.out.println("container service: deployed in " + deployMillis + " ms, answering again " + backMillis
                + " ms after kill -9");
    }

    @Test
    void archivesThatAreNoImageAre400WithTheErrorBody(AtriumServer server) throws Exception {
        User u = server.newUser();
        Svc s = service(u, "bad");
        Http.Reply notTar = u.http()
                .post("/api/services/" + s.id() + "/deployments", body("just text".getBytes(StandardCharsets.UTF_8)));
        assertEquals(400, notTar.status(), notTar.body());
        assertTrue(notTar.get("error").get("message").asText().contains("not a tar"), notTar.body());
        assertTrue(notTar.get("error").has("code"), notTar.body());

        Http.Reply noManifest = u.http()
                .send(
                        "POST",
                        "/api/services/" + s.id() + "/deployments?kind=container-image&provider=podman",
                        tar(Map.of("hello.txt", "hi".getBytes(StandardCharsets.UTF_8))),
                        "application/x-tar");
        assertEquals(400, noManifest.status(), noManifest.body());
        assertTrue(noManifest.get("error").get("message").asText().contains("manifest"), noManifest.body());
        assertTrue(noManifest.get("error").has("code"), noManifest.body());
        assertEquals(
                0,
                u.http()
                        .get("/api/services/" + s.id() + "/deployments")
                        .get("deployments")
                        .size(),
                "nothing was stored");
    }

    /** The pid of the container process whose arguments hold {@code marker} (the httpd of one version). */
    private static long process(String marker) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            for (ProcessHandle p : ProcessHandle.allProcesses().toList()) {
                try {
                    String args = Files.readString(Path.of("/proc", Long.toString(p.pid()), "cmdline"));
                    if (args.contains("httpd") && args.contains("/" + marker + "\0")) {
                        return p.pid();
                    }
                } catch (IOException gone) {
                    // ended meanwhile
                }
            }
            Thread.sleep(100);
        }
        return fail("no process of " + marker);
    }

    // ------------------------------------------------------------------ building an OCI archive

    static Path busybox() {
        String configured = System.getenv("ATRIUM_RUNNER_IMAGES");
        Path dir = configured != null && !configured.isBlank()
                ? Path.of(configured)
                : Path.of(System.getProperty("user.home"), ".cache", "atrium", "images");
        Path tar = dir.resolve("busybox.tar");
        if (!Files.isRegularFile(tar)) {
            fail("no " + tar + ": ./atrium test (or ./atrium images) builds it from busybox-static");
        }
        return tar;
    }

    /** An OCI archive: busybox's root filesystem, then a layer with {@code /<site>/index.html} and the CGI scripts. */
    static byte[] image(String site, String version) throws Exception {
        byte[] base = Files.readAllBytes(busybox());
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put(site + "/index.html", ("version " + version + "\n").getBytes(StandardCharsets.UTF_8));
        files.put(site + "/cgi-bin/kv", KV_SCRIPT.getBytes(StandardCharsets.UTF_8));
        files.put(site + "/cgi-bin/probe", PROBE_SCRIPT.getBytes(StandardCharsets.UTF_8));
        byte[] www = tar(files);
        String command =
                "echo container " + version + " starting on port $PORT; exec busybox httpd -f -v -p $PORT -h /" + site;
        String config = Http.JSON.writeValueAsString(Map.of(
                "architecture",
                System.getProperty("os.arch").equals("aarch64") ? "arm64" : "amd64",
                "os",
                "linux",
                "config",
                Map.of("Cmd", List.of("/bin/sh", "-c", command), "Env", List.of("PATH=/bin")),
                "rootfs",
                Map.of("type", "layers", "diff_ids", List.of(digest(base), digest(www)))));
        byte[] configBytes = config.getBytes(StandardCharsets.UTF_8);
        List<Map<String, Object>> layers = new ArrayList<>();
        for (byte[] layer : List.of(base, www)) {
            layers.add(Map.of(
                    "mediaType",
                    "application/vnd.oci.image.layer.v1.tar",
                    "digest",
                    digest(layer),
                    "size",
                    layer.length));
        }
        byte[] manifest = Http.JSON.writeValueAsBytes(Map.of(
                "schemaVersion",
                2,
                "mediaType",
                "application/vnd.oci.image.manifest.v1+json",
                "config",
                Map.of(
                        "mediaType",
                        "application/vnd.oci.image.config.v1+json",
                        "digest",
                        digest(configBytes),
                        "size",
                        configBytes.length),
                "layers",
                layers));
        byte[] index = Http.JSON.writeValueAsBytes(Map.of(
                "schemaVersion",
                2,
                "manifests",
                List.of(Map.of(
                        "mediaType",
                        "application/vnd.oci.image.manifest.v1+json",
                        "digest",
                        digest(manifest),
                        "size",
                        manifest.length))));
        Map<String, byte[]> archive = new LinkedHashMap<>();
        archive.put("oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}".getBytes(StandardCharsets.UTF_8));
        archive.put("index.json", index);
        for (byte[] blob : List.of(manifest, configBytes, base, www)) {
            archive.put("blobs/sha256/" + digest(blob).substring("sha256:".length()), blob);
        }
        return tar(archive);
    }

    static String digest(byte[] bytes) throws Exception {
        return "sha256:"
                + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    /** A ustar archive of regular files (mode 0755, root's), with their directories. */
    static byte[] tar(Map<String, byte[]> files) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        java.util.Set<String> dirs = new java.util.LinkedHashSet<>();
        for (String name : files.keySet()) {
            for (int i = name.indexOf('/'); i >= 0; i = name.indexOf('/', i + 1)) {
                dirs.add(name.substring(0, i + 1));
            }
        }
        for (String dir : dirs) {
            header(out, dir, 0, '5');
        }
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
            header(out, f.getKey(), f.getValue().length, '0');
            out.write(f.getValue());
            out.write(new byte[(512 - f.getValue().length % 512) % 512]);
        }
        out.write(new byte[1024]);
        return out.toByteArray();
    }

    private static void header(ByteArrayOutputStream out, String name, long size, char type) {
        byte[] h = new byte[512];
        put(h, 0, name, 100);
        put(h, 100, "0000755", 8);
        put(h, 108, "0000000", 8);
        put(h, 116, "0000000", 8);
        put(h, 124, String.format("%011o", size), 12);
        put(h, 136, String.format("%011o", 1_700_000_000L), 12);
        h[156] = (byte) type;
        put(h, 257, "ustar", 6);
        put(h, 263, "00", 2);
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        put(h, 148, String.format("%06o", sum), 7);
        out.write(h, 0, 512);
    }

    private static void put(byte[] h, int at, String value, int max) {
        byte[] b = value.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(b, 0, h, at, Math.min(b.length, max));
    }
}
