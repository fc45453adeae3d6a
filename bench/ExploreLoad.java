import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * bench/explore.sh's helper ({@code java ExploreLoad.java API}): sends explore's search, trending and suggest requests
 * from {@code -Dclients} concurrent clients, {@code -Drequests} of each, anonymous (explore answers anyone), and prints
 * p50, p99 and requests/s for each. Search and suggest terms are drawn from the words the repositories were made of,
 * some misspelt (fuzzy names), so every request is a new query.
 */
public class ExploreLoad {

    static final String[] WORDS = ("parser lexer compiler router server client proxy cache queue stream logger tracer "
                    + "metrics graph vector matrix tensor image audio video codec crypto hash token auth oauth session "
                    + "template render widget layout canvas chart table grid editor terminal shell script build deploy "
                    + "docker cloud storage bucket file sync backup mirror search index query filter merge diff patch "
                    + "release package module plugin kernel driver sensor robot game engine physics shader sound music "
                    + "calendar clock timer email chat bot agent model dataset loader crawl http socket json yaml")
            .split(" ");
    static final String[] ADJECTIVES =
            "fast tiny simple smart lazy async safe secure light micro mini super hyper open free easy quick solid clean"
                    .split(" ");

    public static void main(String[] args) throws Exception {
        String api = args[0];
        int clients = Integer.parseInt(System.getProperty("clients", "16"));
        int requests = Integer.parseInt(System.getProperty("requests", "2000"));
        HttpClient http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        IntFunction<String> search = i -> {
            Random r = new Random(1000 + i);
            String q = switch (i % 4) {
                case 0 -> pick(r, WORDS);
                case 1 -> pick(r, WORDS) + " " + pick(r, WORDS);
                case 2 -> pick(r, ADJECTIVES) + "-" + pick(r, WORDS);
                default -> misspell(r, pick(r, ADJECTIVES) + "-" + pick(r, WORDS));
            };
            return api + "/api/explore/repos?q=" + URLEncoder.encode(q, StandardCharsets.UTF_8);
        };
        IntFunction<String> trending = i -> api + "/api/explore/repos/trending?offset=" + (i % 5) * 20;
        IntFunction<String> suggest = i -> {
            Random r = new Random(5000 + i);
            String full = pick(r, ADJECTIVES) + "-" + pick(r, WORDS);
            String q = i % 3 == 2 ? misspell(r, full) : full.substring(0, Math.min(full.length(), 2 + r.nextInt(6)));
            return api + "/api/explore/suggest?q=" + URLEncoder.encode(q, StandardCharsets.UTF_8);
        };
        // warm-up: the JIT, the pool, the owner names of the most listed workspaces
        run(http, "warm-up", 4, 300, search, false);
        run(http, "warm-up", 4, 100, trending, false);
        run(http, "warm-up", 4, 300, suggest, false);
        // the floor: one client, nothing queued behind it
        run(http, "GET /api/explore/repos?q=", 1, 200, i -> search.apply(100_000 + i), true);
        run(http, "GET /api/explore/suggest?q=", 1, 200, i -> suggest.apply(100_000 + i), true);
        run(http, "GET /api/explore/repos?q=", clients, requests, search, true);
        // the same queries again: the owners of every listed workspace are now known (RepositoryOwners keeps them 60 s)
        run(http, "GET /api/explore/repos?q= (again, owners kept)", clients, requests, search, true);
        run(http, "GET /api/explore/repos/trending", clients, requests, trending, true);
        run(http, "GET /api/explore/suggest?q=", clients, requests, suggest, true);
    }

    static String pick(Random r, String[] from) {
        return from[r.nextInt(from.length)];
    }

    /** Two neighbouring letters swapped, as a typing slip. */
    static String misspell(Random r, String s) {
        int at = 1 + r.nextInt(Math.max(1, s.length() - 2));
        char[] c = s.toCharArray();
        char t = c[at];
        c[at] = c[at - 1];
        c[at - 1] = t;
        return new String(c);
    }

    static void run(HttpClient http, String label, int clients, int requests, IntFunction<String> url, boolean print)
            throws Exception {
        AtomicInteger next = new AtomicInteger();
        long[] took = new long[requests];
        AtomicInteger failures = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        List<Future<?>> all = new ArrayList<>();
        long start = System.nanoTime();
        for (int c = 0; c < clients; c++) {
            all.add(pool.submit(() -> {
                int i;
                while ((i = next.getAndIncrement()) < requests) {
                    HttpRequest req = HttpRequest.newBuilder(URI.create(url.apply(i)))
                            .timeout(Duration.ofSeconds(30))
                            .GET()
                            .build();
                    long s = System.nanoTime();
                    HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
                    took[i] = System.nanoTime() - s;
                    if (r.statusCode() != 200) {
                        failures.incrementAndGet();
                        if (failures.get() < 3) {
                            System.out.println("non-200: " + r.statusCode() + " " + r.body());
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : all) {
            f.get();
        }
        long wall = System.nanoTime() - start;
        pool.shutdown();
        if (!print) {
            return;
        }
        long[] sorted = took.clone();
        Arrays.sort(sorted);
        System.out.printf(
                "%s: %d clients, %d requests: p50 %.1f ms, p99 %.1f ms, %.0f requests/s, %d not 200%n",
                label,
                clients,
                requests,
                sorted[requests / 2] / 1e6,
                sorted[(int) Math.ceil(requests * 0.99) - 1] / 1e6,
                requests / (wall / 1e9),
                failures.get());
    }
}
