package dev.atrium.containers.podman.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.deploy.api.Deployment;
import dev.atrium.deploy.api.DeploymentException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The podman deployment provider's runtime against the real podman: what a container gets (limits, user, capabilities,
 * env), restart after a crash, draining, and that closing removes every container. Needs podman and busybox.tar, as
 * the runner's tests do; fails without them.
 */
class ContainerServicesTest {

    private static final ContainerServices.Settings SETTINGS = new ContainerServices.Settings(
            "1000:1000", 256L << 20, 1.0, 128, 8080, "podman", Duration.ofSeconds(20), Duration.ZERO, 1000, "", true);

    private static String sha(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    /**
     * busybox's root filesystem, then a layer with {@code /site/index.html}: its manifest, config and the two layers
     * (in that order).
     */
    static List<byte[]> imageParts(String version, String command) throws Exception {
        Path busybox = Podman.images().resolve("busybox.tar");
        if (!Files.isRegularFile(busybox)) {
            fail("no " + busybox + ": run ./atrium images (or ./atrium test)");
        }
        byte[] base = Files.readAllBytes(busybox);
        byte[] site = ImageArchiveTest.tar(
                Map.of("site/index.html", ("version " + version).getBytes(StandardCharsets.UTF_8)));
        byte[] config = ("{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Cmd\":[\"/bin/sh\",\"-c\",\""
                        + command + "\"],\"Env\":[\"PATH=/bin\"]},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":"
                        + "[\"sha256:" + sha(base) + "\",\"sha256:" + sha(site) + "\"]}}")
                .getBytes(StandardCharsets.UTF_8);
        byte[] manifest = ("{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
                        + "\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\","
                        + "\"digest\":\"sha256:" + sha(config) + "\",\"size\":" + config.length
                        + "},\"layers\":["
                        + "{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\",\"digest\":\"sha256:"
                        + sha(base)
                        + "\",\"size\":" + base.length + "},"
                        + "{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\",\"digest\":\"sha256:"
                        + sha(site)
                        + "\",\"size\":" + site.length + "}]}")
                .getBytes(StandardCharsets.UTF_8);
        return List.of(manifest, config, base, site);
    }

    /** The same as an OCI archive. */
    static byte[] image(String version, String command) throws Exception {
        List<byte[]> parts = imageParts(version, command);
        byte[] manifest = parts.get(0);
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}".getBytes(StandardCharsets.UTF_8));
        files.put(
                "index.json",
                ("{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
                                + "\"digest\":\"sha256:" + sha(manifest) + "\",\"size\":" + manifest.length + "}]}")
                        .getBytes(StandardCharsets.UTF_8));
        for (byte[] blob : parts) {
            files.put("blobs/sha256/" + sha(blob), blob);
        }
        return ImageArchiveTest.tar(files);
    }

    private static Deployment deployment(String id, byte[] image, Map<String, String> env) {
        return new Deployment(
                id, "svc_test", "container-image", image, null, null, Map.of("memory_mb", 64L), env, List.of());
    }

    private static String get(URI endpoint) throws Exception {
        java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
        return client.send(
                        java.net.http.HttpRequest.newBuilder(endpoint).build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString())
                .body();
    }

    @Test
    void aDeploymentRunsLimitedAndNonRootIsRestartedAfterACrashAndClosingRemovesEveryContainer() throws Exception {
        PodmanService service =
                new PodmanService("podman", Path.of("target", "podman-services").toAbsolutePath());
        ContainerServices services = new ContainerServices(service, SETTINGS);
        try {
            byte[] image = image("one", "echo up on $PORT as $(id -u); exec httpd -f -p $PORT -h /site");
            services.apply(List.of(deployment("dep_one-r1", image, Map.of("PORT", "9090"))));
            URI endpoint = services.endpoint("dep_one-r1").orElseThrow();
            assertEquals(9090, endpoint.getPort());
            assertEquals("version one", get(endpoint));

            DockerApi api = service.api();
            List<JsonNode> containers = api.labelled(ContainerServices.LABEL);
            assertEquals(1, containers.size());
            JsonNode info = api.inspect(containers.get(0).path("Id").asText()).orElseThrow();
            assertEquals("1000:1000", info.path("Config").path("User").asText());
            assertEquals(64L << 20, info.path("HostConfig").path("Memory").asLong());
            assertEquals(
                    1_000_000_000L, info.path("HostConfig").path("NanoCpus").asLong());
            // what the kernel says of its process: no capabilities, no new privileges, not root
            String status = Files.readString(
                    Path.of("/proc", info.path("State").path("Pid").asText(), "status"));
            assertTrue(status.contains("CapEff:\t0000000000000000"), status);
            assertTrue(status.contains("NoNewPrivs:\t1"), status);

            // a crash: started again after its backoff, with a note in the log
            api.kill(containers.get(0).path("Id").asText());
            long deadline = System.nanoTime() + 10_000_000_000L;
            // the kill is noticed by the monitor, not at once: until then the old process may still answer
            while (!services.logs("svc_test", 0, 100).toString().contains("starting it again in 1 s")
                    || services.endpoint("dep_one-r1").map(e -> false).orElse(true)
                    || !HealthProbe.answers(services.endpoint("dep_one-r1").get(), "/")) {
                if (System.nanoTime() > deadline) {
                    fail("not answering again within 10 s");
                }
                Thread.sleep(50);
            }
            String log = services.logs("svc_test", 0, 100).toString();
            assertTrue(log.contains("up on 9090 as 1000"), log);
            assertTrue(log.contains("starting it again in 1 s"), log);

            // replaced: the old one leaves the endpoints at once and its container after the drain
            byte[] two = image("two", "exec httpd -f -p $PORT -h /site");
            services.apply(List.of(deployment("dep_two-r1", two, Map.of())));
            assertTrue(services.endpoint("dep_one-r1").isEmpty());
            assertEquals("version two", get(services.endpoint("dep_two-r1").orElseThrow()));
            deadline = System.nanoTime() + 10_000_000_000L;
            while (api.labelled(ContainerServices.LABEL).size() > 1 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertEquals(1, api.labelled(ContainerServices.LABEL).size());

            // a container that exits at once is the client's error, and what ran goes on
            byte[] broken = image("three", "echo cannot start >&2; exit 3");
            DeploymentException e = assertThrows(
                    DeploymentException.class,
                    () -> services.apply(List.of(deployment("dep_three-r1", broken, Map.of()))));
            assertEquals(DeploymentException.Kind.INVALID, e.kind());
            assertTrue(e.getMessage().contains("exited with code 3"), e.getMessage());
            assertEquals("version two", get(services.endpoint("dep_two-r1").orElseThrow()));

            services.close();
            assertEquals(List.of(), api.labelled(ContainerServices.LABEL));
            assertFalse(services.health().detail().isEmpty());
        } finally {
            services.close();
            service.close();
        }
    }

    /** Debian's docker-registry (the distribution registry), which {@code ./atrium test} installs. */
    static final Path REGISTRY = Path.of("/usr/bin/docker-registry");

    /** Puts the image's blobs and its manifest, tagged {@code tag}, into repository {@code name} of the registry. */
    static void push(String registry, String name, String tag, List<byte[]> parts) throws Exception {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        for (byte[] blob : parts.subList(1, parts.size())) {
            var start = http.send(
                    java.net.http.HttpRequest.newBuilder(
                                    URI.create("http://" + registry + "/v2/" + name + "/blobs/uploads/"))
                            .POST(java.net.http.HttpRequest.BodyPublishers.noBody())
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(202, start.statusCode(), start.body());
            String location = start.headers().firstValue("Location").orElseThrow();
            URI put = URI.create("http://" + registry).resolve(location);
            put = URI.create(put + (put.getQuery() == null ? "?" : "&") + "digest=sha256:" + sha(blob));
            var done = http.send(
                    java.net.http.HttpRequest.newBuilder(put)
                            .header("Content-Type", "application/octet-stream")
                            .PUT(java.net.http.HttpRequest.BodyPublishers.ofByteArray(blob))
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(201, done.statusCode(), done.body());
        }
        var manifest = http.send(
                java.net.http.HttpRequest.newBuilder(
                                URI.create("http://" + registry + "/v2/" + name + "/manifests/" + tag))
                        .header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
                        .PUT(java.net.http.HttpRequest.BodyPublishers.ofByteArray(parts.get(0)))
                        .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(201, manifest.statusCode(), manifest.body());
    }

    private static byte[] reference(String image) {
        return ("{\"image\": \"" + image + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aDeploymentNamingAnImageOfTheConfiguredRegistryIsPulledAndRunsAndOtherRegistriesAreRefused(@TempDir Path tmp)
            throws Exception {
        assertTrue(Files.isExecutable(REGISTRY), "no " + REGISTRY + ": ./atrium test installs docker-registry");
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        String registry = "127.0.0.1:" + port;
        Path config = tmp.resolve("registry.yml");
        Files.writeString(
                config,
                "version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: " + tmp.resolve("data") + "\nhttp:\n  addr: "
                        + registry + "\nlog:\n  level: warn\n");
        Process server = new ProcessBuilder(REGISTRY.toString(), "serve", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(tmp.resolve("registry.log").toFile())
                .start();
        PodmanService service =
                new PodmanService("podman", Path.of("target", "podman-registry").toAbsolutePath());
        ContainerServices.Settings settings = new ContainerServices.Settings(
                "1000:1000",
                256L << 20,
                1.0,
                128,
                8080,
                "podman",
                Duration.ofSeconds(20),
                Duration.ZERO,
                1000,
                registry,
                false);
        ContainerServices services = new ContainerServices(service, settings);
        try {
            long until = System.nanoTime() + 10_000_000_000L;
            while (!HealthProbe.answers(URI.create("http://" + registry), "/v2/")) {
                assertTrue(
                        server.isAlive() && System.nanoTime() < until, Files.readString(tmp.resolve("registry.log")));
                Thread.sleep(50);
            }
            push(registry, "team/site", "one", imageParts("pulled", "exec httpd -f -p $PORT -h /site"));

            services.apply(List.of(deployment("dep_pull-r1", reference("team/site:one"), Map.of())));
            assertEquals("version pulled", get(services.endpoint("dep_pull-r1").orElseThrow()));
            // the same image named with its registry: the same id, nothing pulled twice into another image
            services.validate(deployment("dep_pull-r2", reference(registry + "/team/site:one"), Map.of()));

            for (String refused : List.of("other.example/team/site:one", "Team/Site", "team/site:one; rm -rf /")) {
                DeploymentException e = assertThrows(
                        DeploymentException.class,
                        () -> services.validate(deployment("dep_bad-r1", reference(refused), Map.of())));
                assertEquals(DeploymentException.Kind.INVALID, e.kind(), refused);
            }
            DeploymentException missing = assertThrows(
                    DeploymentException.class,
                    () -> services.validate(deployment("dep_missing-r1", reference("team/absent:1"), Map.of())));
            assertTrue(missing.getMessage().contains("team/absent"), missing.getMessage());

            ContainerServices unconfigured = new ContainerServices(service, SETTINGS);
            try {
                DeploymentException none = assertThrows(
                        DeploymentException.class,
                        () -> unconfigured.validate(deployment("dep_none-r1", reference("team/site:one"), Map.of())));
                assertTrue(none.getMessage().contains("no registry"), none.getMessage());
            } finally {
                unconfigured.close();
            }
        } finally {
            services.close();
            service.close();
            server.destroy();
            server.waitFor();
        }
    }
}
