package dev.atrium.browser.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One headless Chromium process with its own profile directory: started with the flags this closed network needs
 * (no background networking, component updates, sync or QUIC), its DevTools endpoint on an ephemeral loopback port read
 * from the profile's {@code DevToolsActivePort}; ended by killing its whole process tree and deleting the profile.
 */
final class Chromium implements AutoCloseable {

    /** Where Chromium's own background requests go: a reserved name (RFC 6761) that resolves nowhere. */
    static final String SERVICES_HOST = "chromium-services.invalid";

    final Process process;
    final Path profile;
    final URI devtools;

    private Chromium(Process process, Path profile, URI devtools) {
        this.process = process;
        this.profile = profile;
        this.devtools = devtools;
    }

    /** The command line: the binary, the fixed flags, the memory cap, and the profile. */
    static List<String> command(String binary, Path profile, int heapMb, int width, int height, int proxyPort) {
        List<String> command = new ArrayList<>(List.of(
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-default-apps",
                "--disable-breakpad",
                "--disable-crash-reporter",
                "--disable-domain-reliability",
                "--metrics-recording-only",
                "--mute-audio",
                "--hide-scrollbars",
                "--password-store=basic",
                "--use-mock-keychain",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--window-size=" + width + "," + height,
                // every connection through the session's EgressProxy, loopback included (bypassed by default)
                "--proxy-server=http://127.0.0.1:" + proxyPort,
                "--proxy-bypass-list=<-loopback>",
                // WebRTC may not send UDP past the proxy (TCP through it only)
                "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
                // Chromium's own services (sign-in's account list, the component updater, network time) aimed at one
                // name that never resolves, so that the proxy refuses them without listing them as the page's
                "--gaia-url=http://" + SERVICES_HOST,
                "--google-apis-url=http://" + SERVICES_HOST,
                "--component-updater=url-source=http://" + SERVICES_HOST,
                "--optimization-guide-service-get-hints-url=http://" + SERVICES_HOST,
                "--optimization-guide-service-get-models-url=http://" + SERVICES_HOST,
                // the optimization guide fetched optimizationguide-pa.googleapis.com at a moment of its own, listed
                // as a request the page's owner saw refused (and as a change of the session in the route sweep)
                "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,OptimizationHintsFetching,"
                        + "OptimizationGuideModelDownloading,OptimizationTargetPrediction",
                "--user-data-dir=" + profile));
        if (heapMb > 0) {
            // V8's old generation of every renderer: a page that allocates past it is killed (the tab crashes), not
            // the server
            command.add("--js-flags=--max-old-space-size=" + heapMb);
        }
        command.add("about:blank");
        return command;
    }

    /** Starts Chromium on a fresh {@code profile} and waits for its DevTools endpoint. */
    static Chromium start(
            String binary, Path profile, int heapMb, int width, int height, int proxyPort, Duration timeout)
            throws IOException {
        Files.createDirectories(profile);
        ProcessBuilder pb = new ProcessBuilder(command(binary, profile, heapMb, width, height, proxyPort))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Process process;
        try {
            process = pb.start();
        } catch (IOException e) {
            deleteTree(profile);
            throw new IOException("cannot start Chromium (" + binary + "): " + e.getMessage(), e);
        }
        Path portFile = profile.resolve("DevToolsActivePort");
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                if (!process.isAlive()) {
                    throw new IOException("Chromium exited at start with " + process.exitValue());
                }
                URI uri = readPort(portFile);
                if (uri != null) {
                    return new Chromium(process, profile, uri);
                }
                Thread.sleep(10);
            }
            throw new IOException("Chromium did not open its DevTools port within " + timeout.toMillis() + " ms");
        } catch (IOException | RuntimeException e) {
            kill(process);
            deleteTree(profile);
            throw e;
        } catch (InterruptedException e) {
            kill(process);
            deleteTree(profile);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while Chromium started", e);
        }
    }

    /** {@code DevToolsActivePort}: the port, then the browser's WebSocket path; null until both are written. */
    private static URI readPort(Path file) throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException notYet) {
            return null;
        }
        if (lines.size() < 2 || lines.get(1).isBlank()) {
            return null;
        }
        try {
            int port = Integer.parseInt(lines.get(0).trim());
            return URI.create("ws://127.0.0.1:" + port + lines.get(1).trim());
        } catch (IllegalArgumentException partial) {
            return null;
        }
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        kill(process);
        deleteTree(profile);
    }

    /**
     * SIGKILL to the process and every descendant (renderers, the zygote, the GPU and network services); returns once
     * none runs. A descendant counts as ended once it is a zombie: it is init's to reap, not this server's, and a slow
     * init would otherwise hold up every DELETE.
     */
    static void kill(Process process) {
        List<ProcessHandle> tree =
                new ArrayList<>(process.toHandle().descendants().toList());
        process.destroyForcibly();
        tree.forEach(ProcessHandle::destroyForcibly);
        try {
            process.waitFor(5, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (tree.stream().anyMatch(Chromium::running) && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the process exists and is no zombie ({@code /proc/<pid>/stat}'s state after the command's name). */
    static boolean running(ProcessHandle p) {
        try {
            String stat = Files.readString(Path.of("/proc/" + p.pid() + "/stat"));
            String after = stat.substring(stat.lastIndexOf(')') + 1).trim();
            return !(after.startsWith("Z") || after.startsWith("X"));
        } catch (IOException | RuntimeException gone) {
            return false;
        }
    }

    static void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> all = Files.walk(root)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // a file Chromium wrote as it died; the next sweep of the directory removes it
                }
            });
        } catch (IOException | UncheckedIOException e) {
            // removed meanwhile
        }
    }
}
