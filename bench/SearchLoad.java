import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * bench/search.sh's helper (run with `java SearchLoad.java MODE ...`, the PostgreSQL driver on the class path):
 * <ul>
 *   <li>{@code embeddings PORT}: an OpenAI-compatible embeddings API whose vectors are made from the text's words,
 *       each word a fixed random 384-dimension direction, so texts of one topic (sharing words) are near each other,
 *       as real embeddings cluster. A word ending in {@code x} has the direction of the word without it: the recall
 *       queries use such words, which match no stored text by keywords, so their answers are the vector part's.</li>
 *   <li>{@code load JDBC API TOKEN SPACE N}: writes N items (half memories, half thread messages in threads of 20)
 *       straight into the capabilities' tables, waits for the index to hold them all embedded, then measures.</li>
 * </ul>
 */
public class SearchLoad {

    static final int DIMS = 384;
    static final int TOPICS = 200;
    static final int WORDS_PER_TOPIC = 40;
    static final int SHARED_WORDS = 2000;
    static final ConcurrentHashMap<String, float[]> WORD_VECTORS = new ConcurrentHashMap<>();

    public static void main(String[] args) throws Exception {
        if (args[0].equals("embeddings")) {
            serve(Integer.parseInt(args[1]));
        } else {
            load(args[1], args[2], args[3], args[4], Integer.parseInt(args[5]));
        }
    }

    // ------------------------------------------------------------------ the embeddings API

    static float[] word(String w) {
        String base = w.endsWith("x") && w.length() > 1 ? w.substring(0, w.length() - 1) : w;
        return WORD_VECTORS.computeIfAbsent(base, b -> {
            Random r = new Random(b.hashCode() * 31L + 7);
            float[] v = new float[DIMS];
            for (int i = 0; i < DIMS; i++) {
                v[i] = (float) r.nextGaussian();
            }
            return v;
        });
    }

    static float[] embed(String text) {
        float[] v = new float[DIMS];
        for (String w : text.toLowerCase().split("[^a-z0-9]+")) {
            if (w.isEmpty()) {
                continue;
            }
            float[] d = word(w);
            for (int i = 0; i < DIMS; i++) {
                v[i] += d[i];
            }
        }
        double n = 0;
        for (float f : v) {
            n += f * f;
        }
        n = Math.sqrt(n == 0 ? 1 : n);
        for (int i = 0; i < DIMS; i++) {
            v[i] /= (float) n;
        }
        return v;
    }

    static final Pattern STRING = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");

    static void serve(int port) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/v1/embeddings", ex -> {
            String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            int input = body.indexOf("\"input\"");
            Matcher m = STRING.matcher(body.substring(body.indexOf('[', input)));
            StringBuilder out = new StringBuilder("{\"object\":\"list\",\"data\":[");
            int i = 0;
            while (m.find()) {
                String text = m.group(1).replace("\\n", " ");
                if (i > 0) {
                    out.append(',');
                }
                out.append("{\"object\":\"embedding\",\"index\":").append(i++).append(",\"embedding\":[");
                float[] v = embed(text);
                for (int d = 0; d < DIMS; d++) {
                    if (d > 0) {
                        out.append(',');
                    }
                    out.append(v[d]);
                }
                out.append("]}");
            }
            out.append("]}");
            byte[] bytes = out.toString().getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(200, bytes.length);
            ex.getResponseBody().write(bytes);
            ex.close();
        });
        server.start();
        System.out.println("embeddings on " + port);
        Thread.currentThread().join();
    }

    // ------------------------------------------------------------------ data and load

    static String topicWord(int topic, int i) {
        return "t" + topic + "w" + i;
    }

    static String text(Random r) {
        int topic = r.nextInt(TOPICS);
        int n = 8 + r.nextInt(8);
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            String w = r.nextInt(4) == 0 ? "common" + r.nextInt(SHARED_WORDS) : topicWord(topic, r.nextInt(WORDS_PER_TOPIC));
            b.append(letters(w)).append(' ');
        }
        return b.toString().strip();
    }

    /** Digits become letters: PostgreSQL's parser and the embeddings' words then see one word each. */
    static String letters(String w) {
        StringBuilder b = new StringBuilder();
        for (char c : w.toCharArray()) {
            b.append(Character.isDigit(c) ? (char) ('a' + (c - '0')) : c);
        }
        return b.toString();
    }

    static void load(String jdbc, String api, String token, String space, int n) throws Exception {
        Random r = new Random(42);
        try (Connection c = DriverManager.getConnection(jdbc)) {
            c.setAutoCommit(false);
            long t0 = System.nanoTime();
            try (PreparedStatement mem = c.prepareStatement(
                            "INSERT INTO memories (id, space_id, content) VALUES (?, ?, ?)");
                    PreparedStatement thread = c.prepareStatement(
                            "INSERT INTO threads (id, space_id, title) VALUES (?, ?, ?)");
                    PreparedStatement msg = c.prepareStatement(
                            "INSERT INTO thread_messages (id, thread_id, role, content) VALUES (?, ?, 'user', ?)")) {
                for (int i = 0; i < n / 2; i++) {
                    mem.setString(1, "mem_bench" + i);
                    mem.setString(2, space);
                    mem.setString(3, text(r));
                    mem.addBatch();
                }
                mem.executeBatch();
                for (int t = 0; t < n / 2 / 20; t++) {
                    thread.setString(1, "th_bench" + t);
                    thread.setString(2, space);
                    thread.setString(3, "thread " + letters(Integer.toString(t)));
                    thread.addBatch();
                    for (int m = 0; m < 20; m++) {
                        msg.setString(1, "msg_bench" + t + "_" + m);
                        msg.setString(2, "th_bench" + t);
                        msg.setString(3, text(r));
                        msg.addBatch();
                    }
                }
                thread.executeBatch();
                msg.executeBatch();
            }
            c.commit();
            System.out.printf("wrote %d items in %d ms%n", n, (System.nanoTime() - t0) / 1_000_000);
        }
        HttpClient http = HttpClient.newHttpClient();
        long t0 = System.nanoTime();
        String status;
        while (true) {
            status = send(http, api + "/api/spaces/" + space + "/index/status", token, null);
            long items = number(status, "items");
            long embedded = number(status, "embedded");
            long documents = number(status, "index_documents");
            if (items >= n && embedded == items && documents == embedded) {
                break;
            }
            Thread.sleep(1000);
        }
        System.out.printf("indexed (embedded and in Lucene) in %d s: %s%n", (System.nanoTime() - t0) / 1_000_000_000L, status);
        // what a workspace settles into: its index merged into one segment, the table's statistics made
        long m0 = System.nanoTime();
        while (number(status, "index_segments") > 1 && System.nanoTime() - m0 < 900_000_000_000L) {
            Thread.sleep(2000);
            status = send(http, api + "/api/spaces/" + space + "/index/status", token, null);
        }
        System.out.printf(
                "index merged into %d segment(s) %d s later%n",
                number(status, "index_segments"),
                (System.nanoTime() - m0) / 1_000_000_000L);
        try (Connection c = DriverManager.getConnection(jdbc)) {
            c.createStatement().execute("ANALYZE search_items"); // as autovacuum does after a bulk change
        }
        for (int k = 0; k < 50; k++) { // warm-up
            send(http, api + "/api/spaces/" + space + "/search", token, query("warm" + k, new Random(k), false));
        }
        long[] one = new long[200];
        for (int i = 0; i < one.length; i++) {
            String body = query("s" + i, new Random(7000 + i), false);
            long s0 = System.nanoTime();
            send(http, api + "/api/spaces/" + space + "/search", token, body);
            one[i] = System.nanoTime() - s0;
        }
        Arrays.sort(one);
        System.out.printf(
                "POST /search, one client, %d queries: p50 %.1f ms, p99 %.1f ms%n",
                one.length,
                one[one.length / 2] / 1e6,
                one[(int) Math.ceil(one.length * 0.99) - 1] / 1e6);

        // latency: 16 clients, each query new (no kept answer), words of a topic as users would type them
        int clients = Integer.parseInt(System.getProperty("clients", "16"));
        int requests = Integer.parseInt(System.getProperty("requests", "2000"));
        AtomicInteger next = new AtomicInteger();
        long[] took = new long[requests];
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        List<Future<?>> all = new ArrayList<>();
        long start = System.nanoTime();
        for (int c = 0; c < clients; c++) {
            all.add(pool.submit(() -> {
                int i;
                while ((i = next.getAndIncrement()) < requests) {
                    String body = query("q" + i, new Random(1000 + i), false);
                    long s = System.nanoTime();
                    send(http, api + "/api/spaces/" + space + "/search", token, body);
                    took[i] = System.nanoTime() - s;
                }
                return null;
            }));
        }
        for (Future<?> f : all) {
            f.get();
        }
        long wall = System.nanoTime() - start;
        pool.shutdown();
        long[] sorted = took.clone();
        Arrays.sort(sorted);
        System.out.printf(
                "POST /search, %d clients, %d queries: p50 %.1f ms, p99 %.1f ms, %.0f queries/s%n",
                clients,
                requests,
                sorted[requests / 2] / 1e6,
                sorted[(int) Math.ceil(requests * 0.99) - 1] / 1e6,
                requests / (wall / 1e9));

        // recall@10 of the vector part: queries of x-words (no keyword match) against exact cosine over every item
        List<String> keys = new ArrayList<>();
        List<float[]> vectors = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(jdbc);
                PreparedStatement s = c.prepareStatement(
                        "SELECT kind || ':' || item_id, embedding FROM search_items WHERE space_id = ?")) {
            s.setString(1, space);
            s.setFetchSize(5000);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    keys.add(rs.getString(1));
                    ByteBuffer b = ByteBuffer.wrap(rs.getBytes(2)).order(ByteOrder.LITTLE_ENDIAN);
                    float[] v = new float[DIMS];
                    b.asFloatBuffer().get(v);
                    vectors.add(v);
                }
            }
        }
        int queries = Integer.parseInt(System.getProperty("recallQueries", "100"));
        double recall = 0;
        for (int q = 0; q < queries; q++) {
            String body = query("r" + q, new Random(50_000 + q), true);
            String text = body.substring(body.indexOf(":\"") + 2, body.indexOf("\","));
            float[] qv = embed(text);
            Integer[] order = new Integer[keys.size()];
            double[] score = new double[keys.size()];
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
                float[] v = vectors.get(i);
                double dot = 0;
                for (int d = 0; d < DIMS; d++) {
                    dot += v[d] * qv[d];
                }
                score[i] = dot;
            }
            Arrays.sort(order, (a, b) -> Double.compare(score[b], score[a]));
            Set<String> truth = new HashSet<>();
            for (int i = 0; i < 10; i++) {
                truth.add(keys.get(order[i]));
            }
            String answer = send(http, api + "/api/spaces/" + space + "/search", token, body);
            Set<String> got = new HashSet<>();
            Matcher m = Pattern.compile("\"kind\":\"([a-z]+)\",\"id\":\"([^\"]+)\"").matcher(answer);
            while (m.find()) {
                got.add(m.group(1) + ":" + m.group(2));
            }
            got.retainAll(truth);
            recall += got.size() / 10.0 / queries;
        }
        System.out.printf("recall@10 of the vector part over %d queries: %.3f%n", queries, recall);
    }

    static String query(String salt, Random r, boolean xWords) {
        int topic = r.nextInt(TOPICS);
        StringBuilder b = new StringBuilder();
        int n = 2 + r.nextInt(3);
        for (int i = 0; i < n; i++) {
            b.append(letters(topicWord(topic, r.nextInt(WORDS_PER_TOPIC)))).append(xWords ? "x " : " ");
        }
        // a word of its own keeps every query new to the answer cache (and adds no keyword match)
        String text = b.toString().strip() + " " + letters(salt).replace(' ', 'z') + "zz";
        return "{\"query\":\"" + text + "\",\"limit\":10}";
    }

    static long number(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\":(\\d+)").matcher(json);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    static String send(HttpClient http, String url, String token, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + token);
        if (body != null) {
            b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException(url + " answered " + r.statusCode() + ": " + r.body());
        }
        return r.body();
    }
}
