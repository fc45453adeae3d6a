import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * Upgrade hold times under load: CLIENTS clients read a capability's list continuously while its bundle (the jar's) is
 * updated UPDATES times (alternating two builds of the same jar that differ in Bundle-Version). Prints the
 * distribution of how long requests were held by the kernel's update gate (X-Atrium-Held-Ms) and of the
 * request latency, and the number of failed requests. Run by bench/upgrade-hold.sh:
 * java UpgradeHold.java BASE_URL USER_TOKEN OPERATOR_TOKEN MEMORIES_JAR SPACE_PATH [UPDATES] [CLIENTS]
 */
public final class UpgradeHold {

    public static void main(String[] args) throws Exception {
        String base = args[0];
        String user = args[1];
        String operator = args[2];
        Path jar = Path.of(args[3]);
        String bsn = "dev.atrium." + jar.getFileName().toString().replace("-0.1.0-SNAPSHOT.jar", "");
        String path = args[4];
        int updates = args.length > 5 ? Integer.parseInt(args[5]) : 20;
        int clients = args.length > 6 ? Integer.parseInt(args[6]) : 8;
        byte[][] builds = { variant(jar, "holdA"), variant(jar, "holdB") };

        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong requests = new AtomicLong();
        List<Long> holds = Collections.synchronizedList(new ArrayList<>());
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            Thread t = new Thread(() -> {
                while (running.get()) {
                    long started = System.nanoTime();
                    try {
                        HttpResponse<Void> r = http.send(HttpRequest.newBuilder(URI.create(base + path)).header("Authorization", "Bearer " + user)
                                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.discarding());
                        requests.incrementAndGet();
                        latencies.add((System.nanoTime() - started) / 1_000_000);
                        r.headers().firstValue("X-Atrium-Held-Ms").map(Long::parseLong).ifPresent(holds::add);
                        if (r.statusCode() / 100 != 2) {
                            failures.add("HTTP " + r.statusCode());
                        }
                    } catch (IOException | InterruptedException e) {
                        failures.add(e.toString());
                    }
                }
            });
            t.start();
            threads.add(t);
        }
        long started = System.nanoTime();
        List<Long> updateTimes = new ArrayList<>();
        Thread.sleep(1000);
        for (int i = 0; i < updates; i++) {
            long u = System.nanoTime();
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/admin/bundles/" + bsn + "/update"))
                    .header("Authorization", "Bearer " + operator).header("Content-Type", "application/java-archive")
                    .timeout(Duration.ofSeconds(120)).POST(HttpRequest.BodyPublishers.ofByteArray(builds[i % 2])).build(),
                    HttpResponse.BodyHandlers.ofString());
            updateTimes.add((System.nanoTime() - u) / 1_000_000);
            if (r.statusCode() != 200) {
                System.out.println("update " + i + " failed: " + r.statusCode() + " " + r.body());
            }
            Thread.sleep(200);
        }
        Thread.sleep(500);
        running.set(false);
        for (Thread t : threads) {
            t.join();
        }
        http.send(HttpRequest.newBuilder(URI.create(base + "/admin/bundles/" + bsn + "/update")).header("Authorization", "Bearer " + operator)
                .header("Content-Type", "application/java-archive").POST(HttpRequest.BodyPublishers.ofFile(jar)).build(),
                HttpResponse.BodyHandlers.discarding());
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("Upgrade under load: %d updates of %s, %d clients, %d requests in %.1f s, %d failed%n",
                updates, bsn, clients, requests.get(), seconds, failures.size());
        System.out.println("                               count     median        p99        max");
        print("  held by the update gate (ms)", holds);
        print("  request latency (ms)        ", latencies);
        print("  update call (ms)            ", updateTimes);
        if (!failures.isEmpty()) {
            System.out.println("  first failures: " + failures.subList(0, Math.min(5, failures.size())));
        }
    }

    private static void print(String label, List<Long> values) {
        List<Long> v = new ArrayList<>(values);
        Collections.sort(v);
        if (v.isEmpty()) {
            System.out.printf("%s %6d %10s %10s %10s%n", label, 0, "-", "-", "-");
            return;
        }
        System.out.printf("%s %6d %10d %10d %10d%n", label, v.size(), v.get(v.size() / 2), v.get((int) Math.min(v.size() - 1, Math.ceil(v.size() * 0.99) - 1)),
                v.get(v.size() - 1));
    }

    /** The jar with another Bundle-Version qualifier: the same code, a distinguishable build. */
    static byte[] variant(Path jar, String qualifier) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JarInputStream in = new JarInputStream(Files.newInputStream(jar))) {
            Manifest manifest = new Manifest(in.getManifest());
            manifest.getMainAttributes().putValue("Bundle-Version", "0.1.0." + qualifier);
            try (JarOutputStream out = new JarOutputStream(bytes, manifest)) {
                for (JarEntry e = in.getNextJarEntry(); e != null; e = in.getNextJarEntry()) {
                    out.putNextEntry(new JarEntry(e.getName()));
                    in.transferTo(out);
                    out.closeEntry();
                }
            }
        }
        return bytes.toByteArray();
    }
}
