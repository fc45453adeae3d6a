import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Run event append -> SSE client latency: SUBSCRIBERS clients hold GET /api/runs/:id/sse on one (queued, so open)
 * run while EVENTS events are appended to it (each POST /api/runs/:id/artifacts appends one `artifact.created`
 * event), one every 20 ms. Latency = arrival at the client minus the event's created_at (PostgreSQL's clock, same
 * machine). Prints median, p90, p99 and max over every (event, subscriber) pair, and events lost.
 * <p>
 * The subscribers are plain non-blocking sockets on READERS selector threads (default 1), each reading what arrived
 * and finding the event's created_at in the raw bytes: the client's own cost per delivery is a read and a scan, so
 * the figure is the server's, not a heavyweight client library's, on a machine both share.
 * java SseLatency.java BASE_URL TOKEN [SUBSCRIBERS] [EVENTS] [READERS]
 */
public final class SseLatency {

    static final byte[] MARK = "\"type\":\"artifact.created\"".getBytes(StandardCharsets.US_ASCII);
    static final byte[] CREATED = "\"created_at\":\"".getBytes(StandardCharsets.US_ASCII);

    public static void main(String[] args) throws Exception {
        String base = args[0];
        String token = args[1];
        int subscribers = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        int events = args.length > 3 ? Integer.parseInt(args[3]) : 200;
        int readers = args.length > 4 ? Integer.parseInt(args[4]) : 1;
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        String thread = field(post(http, base + "/api/spaces/bench/threads", token, "{\"title\":\"bench\"}"), "id");
        String run = field(post(http, base + "/api/threads/" + thread + "/runs", token, "{}"), "id");

        URI uri = URI.create(base);
        byte[] request = ("GET /api/runs/" + run + "/sse HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
                + "\r\nAuthorization: Bearer " + token + "\r\nAccept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        long[] latencies = new long[subscribers * events];
        AtomicInteger received = new AtomicInteger();
        AtomicInteger connected = new AtomicInteger();
        List<Reader> pool = new ArrayList<>();
        for (int r = 0; r < readers; r++) {
            pool.add(new Reader(latencies, received, connected));
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < subscribers; i++) {
            SocketChannel ch = SocketChannel.open(new InetSocketAddress(uri.getHost(), uri.getPort()));
            ch.write(ByteBuffer.wrap(request));
            ch.configureBlocking(false);
            pool.get(i % readers).add(ch);
        }
        pool.forEach(Thread::start);
        long deadline = System.currentTimeMillis() + 120_000;
        while (connected.get() < subscribers && System.currentTimeMillis() < deadline) {
            Thread.sleep(10);
        }
        if (connected.get() < subscribers) {
            System.out.println("only " + connected.get() + " of " + subscribers + " subscribers connected");
        }
        Thread.sleep(2_000); // let every subscription register and read its backlog
        System.out.printf("%d subscribers connected in %d ms (%d reader thread%s)%n", subscribers, (System.nanoTime() - t0) / 1_000_000,
                readers, readers == 1 ? "" : "s");
        for (int i = 0; i < events; i++) {
            post(http, base + "/api/runs/" + run + "/artifacts", token, "{\"name\":\"a" + i + "\",\"content\":\"x\"}");
            Thread.sleep(20);
        }
        deadline = System.currentTimeMillis() + 30_000;
        while (received.get() < subscribers * events && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        int n = Math.min(received.get(), latencies.length);
        long[] sorted = Arrays.copyOf(latencies, n);
        Arrays.sort(sorted);
        System.out.printf("events appended: %d, subscribers: %d, deliveries: %d of %d (lost %d)%n", events, subscribers, n,
                (long) subscribers * events, (long) subscribers * events - n);
        if (n > 0) {
            System.out.printf("append -> SSE client latency: median %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms (target p99 <= 20 ms)%n",
                    sorted[n / 2] / 1000.0, sorted[(int) (n * 0.90)] / 1000.0, sorted[Math.min(n - 1, (int) (n * 0.99))] / 1000.0,
                    sorted[n - 1] / 1000.0);
        }
        System.exit(0);
    }

    /** One selector thread reading its share of the subscribers. */
    static final class Reader extends Thread {
        private final Selector selector;
        private final long[] latencies;
        private final AtomicInteger received;
        private final AtomicInteger connected;
        private final ByteBuffer buffer = ByteBuffer.allocateDirect(256 * 1024);
        private final byte[] bytes = new byte[512 * 1024];
        private String lastStamp = "";
        private long lastMicros;

        Reader(long[] latencies, AtomicInteger received, AtomicInteger connected) throws IOException {
            super("sse-reader");
            setDaemon(true);
            this.selector = Selector.open();
            this.latencies = latencies;
            this.received = received;
            this.connected = connected;
        }

        void add(SocketChannel ch) throws IOException {
            ch.register(selector, SelectionKey.OP_READ, new Conn());
        }

        @Override
        public void run() {
            try {
                while (true) {
                    selector.select();
                    var keys = selector.selectedKeys();
                    for (SelectionKey key : keys) {
                        read(key);
                    }
                    keys.clear();
                }
            } catch (IOException e) {
                e.printStackTrace();
            }
        }

        private void read(SelectionKey key) throws IOException {
            SocketChannel ch = (SocketChannel) key.channel();
            Conn conn = (Conn) key.attachment();
            buffer.clear();
            int n = ch.read(buffer);
            if (n < 0) {
                key.cancel();
                ch.close();
                return;
            }
            Instant now = Instant.now();
            long nowMicros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
            buffer.flip();
            // a frame may straddle two reads: keep the unfinished tail of the previous one in front
            int carry = conn.tail.length;
            System.arraycopy(conn.tail, 0, bytes, 0, carry);
            buffer.get(bytes, carry, n);
            int len = carry + n;
            if (!conn.connected) {
                conn.connected = true;
                connected.incrementAndGet();
            }
            int from = 0;
            int lastFrameEnd = 0;
            while (true) {
                int end = indexOf(bytes, from, len, (byte) '\n', (byte) '\n');
                if (end < 0) {
                    break;
                }
                int mark = indexOf(bytes, from, end, MARK);
                if (mark >= 0) {
                    int c = indexOf(bytes, mark, end, CREATED);
                    if (c >= 0) {
                        int start = c + CREATED.length;
                        int stop = start;
                        while (stop < end && bytes[stop] != '"') {
                            stop++;
                        }
                        long created = micros(new String(bytes, start, stop - start, StandardCharsets.US_ASCII));
                        int i = received.getAndIncrement();
                        if (i < latencies.length) {
                            latencies[i] = nowMicros - created;
                        }
                    }
                }
                from = end + 2;
                lastFrameEnd = from;
            }
            conn.tail = len - lastFrameEnd > 64 * 1024 ? new byte[0] : Arrays.copyOfRange(bytes, lastFrameEnd, len);
        }

        private long micros(String stamp) {
            if (!stamp.equals(lastStamp)) {
                Instant t = Instant.parse(stamp);
                lastMicros = t.getEpochSecond() * 1_000_000 + t.getNano() / 1000;
                lastStamp = stamp;
            }
            return lastMicros;
        }
    }

    static final class Conn {
        byte[] tail = new byte[0];
        boolean connected;
    }

    static int indexOf(byte[] b, int from, int to, byte x, byte y) {
        for (int i = from; i + 1 < to; i++) {
            if (b[i] == x && b[i + 1] == y) {
                return i;
            }
        }
        return -1;
    }

    static int indexOf(byte[] b, int from, int to, byte[] needle) {
        outer:
        for (int i = from; i + needle.length <= to; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (b[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    static String post(HttpClient http, String url, String token, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + token);
        b = json == null ? b.GET() : b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json));
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 != 2) {
            throw new IllegalStateException(url + " answered " + r.statusCode() + ": " + r.body());
        }
        return r.body();
    }

    static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":\"([^\"]+)\"").matcher(json);
        if (!m.find()) {
            throw new IllegalStateException("no " + name + " in " + json);
        }
        return m.group(1);
    }
}
