package dev.atrium.itests;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The reference MCP server {@code @modelcontextprotocol/server-everything} (npm), run with Node on a free loopback port
 * in one of its HTTP transports ({@code streamableHttp} at {@code /mcp}, {@code sse} at {@code /sse}). It is installed
 * with {@code npm install --prefix} into {@code ~/.cache/atrium/mcp-server-everything-<version>} by {@code ./atrium test}
 * before the suite (and here, when a run started another way finds it absent); a machine
 * without npm or node fails the test saying so (nothing is skipped).
 */
final class EverythingServer implements AutoCloseable {

    static final String VERSION = "2026.8.31";
    static final Path PREFIX =
            Path.of(System.getProperty("user.home"), ".cache", "atrium", "mcp-server-everything-" + VERSION);

    private final Process process;
    final int port;

    private EverythingServer(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** {@code transport}: {@code streamableHttp} or {@code sse}. */
    static EverythingServer start(String transport) throws Exception {
        Path entry = install();
        int port;
        port = AtriumServer.freePort();
        Path log = AtriumServer.ROOT.resolve("itests/target/mcp-everything-" + port + ".log");
        ProcessBuilder pb = new ProcessBuilder(List.of("node", entry.toString(), transport))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("PORT", Integer.toString(port));
        Process p = pb.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException(
                        "server-everything exited with " + p.exitValue() + ": " + Files.readString(log));
            }
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return new EverythingServer(p, port);
            } catch (IOException notYet) {
                Thread.sleep(100);
            }
        }
        p.destroyForcibly();
        throw new IllegalStateException(
                "server-everything did not listen on port " + port + " within 30 s: " + Files.readString(log));
    }

    /** The package's entry point, installed with npm when absent. */
    static synchronized Path install() throws Exception {
        Path entry = PREFIX.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        if (Files.isRegularFile(entry)) {
            return entry;
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
                            "@modelcontextprotocol/server-everything@" + VERSION))
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "the MCP tests need Node.js and npm on the PATH (to install @modelcontextprotocol/server-everything): "
                            + e.getMessage(),
                    e);
        }
        if (!npm.waitFor(5, TimeUnit.MINUTES)) {
            npm.destroyForcibly();
            throw new IllegalStateException("npm install of server-everything took longer than 5 minutes; see " + log);
        }
        if (npm.exitValue() != 0 || !Files.isRegularFile(entry)) {
            throw new IllegalStateException("npm install of @modelcontextprotocol/server-everything@" + VERSION
                    + " failed: " + Files.readString(log));
        }
        return entry;
    }

    String streamableUrl() {
        return "http://127.0.0.1:" + port + "/mcp";
    }

    String sseUrl() {
        return "http://127.0.0.1:" + port + "/sse";
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }
}
