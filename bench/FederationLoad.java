import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * bench/federation.sh's load client and sink (a single-file program, JDK only, no Atrium code).
 *
 * The sink (JDK HttpServer, a pool of threads) serves remote actors {@code /users/<name>} (one RSA key pair shared by
 * all, each actor its own keyId {@code <actor>#main-key}) and their inboxes {@code /users/<name>/inbox}, which answer 202
 * and timestamp each delivery; the signature of every delivery (or every k-th) is checked with java.security against the
 * key document Atrium serves at the keyId (fetched once per keyId), with the Digest, the Date and the key's owner.
 *
 * Phase 1: CLIENTS threads POST signed Follows (draft-cavage, rsa-sha256, (request-target) host date digest) to the
 * inbox of one repository, from INBOX_ACTORS distinct actors in turn, WARMUP s untimed then SECONDS s counted.
 * Phase 2: FOLLOWERS actors u0..u{n-1} follow a second repository; their Accepts are awaited; then PUSHES times the push
 * command runs (a commit and a real git push) and each Push's arrival at every follower's inbox is timestamped.
 *
 * args: atriumBase inboxRepoActor fanoutRepoActor clients warmupS seconds inboxActors followers pushes pushCommand
 *       atriumJavaPid verifyEvery
 */
public class FederationLoad {

    static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US);

    // ------------------------------------------------------------------ the sink's records
    static String sinkBase;
    static KeyPair keys;
    static String publicPem;
    static final AtomicLong actorGets = new AtomicLong();
    static final AtomicLong acceptsInboxPhase = new AtomicLong();
    static final AtomicLong acceptsFanoutPhase = new AtomicLong();
    static final Map<String, AtomicLong> otherDeliveries = new ConcurrentHashMap<>();
    static final AtomicLong verified = new AtomicLong();
    static final AtomicLong verifyFailures = new AtomicLong();
    static final AtomicLong deliveriesSeen = new AtomicLong();
    static final ConcurrentLinkedQueue<String> failureSamples = new ConcurrentLinkedQueue<>();
    /** Push activity id -> arrival times (nanoTime) at the followers' inboxes, and the inboxes. */
    static final Map<String, ConcurrentLinkedQueue<long[]>> pushArrivals = new ConcurrentHashMap<>();
    static final Map<String, Set<String>> pushInboxes = new ConcurrentHashMap<>();
    /** Every delivery to a follower of the fan-out repository (u*): {nanoTime, 0 Push / 1 Update / 2 other}. */
    static final List<long[]> followerArrivals = Collections.synchronizedList(new ArrayList<>());
    static final Map<String, PublicKey> atriumKeys = new ConcurrentHashMap<>();
    static int verifyEvery = 1;
    static HttpClient http;

    public static void main(String[] args) throws Exception {
        String atrium = args[0];
        String inboxActor = args[1];
        String fanoutActor = args[2];
        int clients = Integer.parseInt(args[3]);
        int warmup = Integer.parseInt(args[4]);
        int seconds = Integer.parseInt(args[5]);
        int inboxActors = Integer.parseInt(args[6]);
        int followers = Integer.parseInt(args[7]);
        int pushes = Integer.parseInt(args[8]);
        String pushCommand = args[9];
        long atriumPid = Long.parseLong(args[10]);
        verifyEvery = Integer.parseInt(args[11]);

        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        keys = g.generateKeyPair();
        publicPem = "-----BEGIN PUBLIC KEY-----\n" + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(keys.getPublic().getEncoded())
                + "\n-----END PUBLIC KEY-----\n";
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10))
                .executor(Executors.newFixedThreadPool(4)).build();

        HttpServer sink = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024);
        ExecutorService sinkThreads = Executors.newFixedThreadPool(16);
        sink.setExecutor(sinkThreads);
        sink.createContext("/users/", FederationLoad::sinkHandle);
        sink.start();
        sinkBase = "http://127.0.0.1:" + sink.getAddress().getPort();
        log("sink on " + sinkBase);
        int failed = 0;
        try {
            failed = run(atrium, inboxActor, fanoutActor, clients, warmup, seconds, inboxActors, followers, pushes, pushCommand, atriumPid);
        } finally {
            sink.stop(0);
            sinkThreads.shutdownNow();
        }
        System.exit(failed);
    }

    static int run(String atrium, String inboxActor, String fanoutActor, int clients, int warmup, int seconds, int inboxActors,
            int followers, int pushes, String pushCommand, long atriumPid) throws Exception {
        String inboxPath = URI.create(inboxActor).getRawPath() + "/inbox";
        String fanoutPath = URI.create(fanoutActor).getRawPath() + "/inbox";
        int problems = 0;

        // ------------------------------------------------------------------ phase 1: signed inbox
        log("inbox: " + clients + " clients, " + warmup + " s warm-up + " + seconds + " s, Follows from " + inboxActors + " actors ...");
        AtomicInteger next = new AtomicInteger();
        AtomicLong ok = new AtomicLong(), errors = new AtomicLong();
        AtomicLong lat = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean measuring = new AtomicBoolean();
        long runId = System.currentTimeMillis();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < clients; t++) {
            Thread th = new Thread(() -> {
                while (!stop.get()) {
                    int i = next.getAndIncrement();
                    String actor = sinkBase + "/users/a" + (i % inboxActors);
                    long t0 = System.nanoTime();
                    int status;
                    String body;
                    try {
                        HttpResponse<String> r = follow(atrium, inboxPath, inboxActor, actor, sinkBase + "/follows/" + runId + "/" + i);
                        status = r.statusCode();
                        body = r.body();
                    } catch (Exception e) {
                        status = -1;
                        body = e.toString();
                    }
                    long took = System.nanoTime() - t0;
                    boolean counted = measuring.get();
                    if (status == 202 || status == 200) {
                        if (counted) {
                            ok.incrementAndGet();
                            latencies.add(took);
                        }
                    } else {
                        if (errors.incrementAndGet() <= 5) {
                            log("inbox answered " + status + ": " + trim(body));
                        }
                    }
                }
            }, "client-" + t);
            th.start();
            threads.add(th);
        }
        Thread.sleep(warmup * 1000L);
        long accepts202Before = next.get();
        long cpu0 = cpuTicks(atriumPid), self0 = selfCpuNanos(), gets0 = actorGets.get();
        long w0 = System.nanoTime();
        measuring.set(true);
        Thread.sleep(seconds * 1000L);
        measuring.set(false);
        long w1 = System.nanoTime();
        long cpu1 = cpuTicks(atriumPid), self1 = selfCpuNanos(), gets1 = actorGets.get();
        long counted = ok.get();
        stop.set(true);
        for (Thread th : threads) {
            th.join();
        }
        long sent = next.get();
        double window = (w1 - w0) / 1e9;
        double rate = counted / window;
        List<Long> l = new ArrayList<>(latencies);
        Collections.sort(l);
        out(String.format("signed inbox (POST %s, %d clients, Follows from %d actors in turn; %d s warm-up, %d s counted)", inboxPath,
                clients, inboxActors, warmup, seconds));
        out(String.format("  accepted (202/200) per s                 %10.1f   (%d in %.1f s; p50 %.1f ms, p99 %.1f ms per request)", rate, counted,
                window, pct(l, 50) / 1e6, pct(l, 99) / 1e6));
        out(String.format("  errors (any other answer), whole run     %10d   (of %d requests sent)", errors.get(), sent));
        out(String.format("  actor/key GETs Atrium made at the sink   %10d   in the counted window", gets1 - gets0));
        out(String.format("  CPU in the counted window, %% of one CPU  Atrium %.0f%%, this load client + sink %.0f%%",
                100.0 * (cpu1 - cpu0) / 100.0 / window, 100.0 * (self1 - self0) / 1e9 / window));
        if (errors.get() > 0) {
            problems++;
        }
        // the Accepts of those Follows: each new Follow (202) queued one for the sink
        long expectedAccepts = sent - errors.get();
        long a0 = System.nanoTime();
        waitFor(() -> acceptsInboxPhase.get() >= expectedAccepts, 300);
        out(String.format("  Accepts delivered to those actors        %10d   of ~%d (drained %.1f s after the load stopped)",
                acceptsInboxPhase.get(), expectedAccepts, (System.nanoTime() - a0) / 1e9));

        // ------------------------------------------------------------------ phase 2: fan-out
        log("fan-out: " + followers + " actors follow " + fanoutActor + " ...");
        AtomicInteger nf = new AtomicInteger();
        AtomicLong followErrors = new AtomicLong();
        threads.clear();
        long f0 = System.nanoTime();
        for (int t = 0; t < clients; t++) {
            Thread th = new Thread(() -> {
                for (int i; (i = nf.getAndIncrement()) < followers;) {
                    String actor = sinkBase + "/users/u" + i;
                    try {
                        HttpResponse<String> r = follow(atrium, fanoutPath, fanoutActor, actor, sinkBase + "/follows/" + runId + "/u" + i);
                        if (r.statusCode() != 202) {
                            if (followErrors.incrementAndGet() <= 5) {
                                log("follow of u" + i + " answered " + r.statusCode() + ": " + trim(r.body()));
                            }
                        }
                    } catch (Exception e) {
                        if (followErrors.incrementAndGet() <= 5) {
                            log("follow of u" + i + " failed: " + e);
                        }
                    }
                }
            });
            th.start();
            threads.add(th);
        }
        for (Thread th : threads) {
            th.join();
        }
        double followS = (System.nanoTime() - f0) / 1e9;
        boolean allAccepted = waitFor(() -> acceptsFanoutPhase.get() >= followers - followErrors.get(), 300);
        double acceptS = (System.nanoTime() - f0) / 1e9;
        out(String.format("outbox fan-out to %d followers (sink-served actors, one inbox each)", followers));
        out(String.format("  follows (first contact: each actor's key and document fetched)  %d in %.1f s = %.1f/s, %d errors", followers,
                followS, followers / followS, followErrors.get()));
        out(String.format("  their Accepts at the sink                %10d   (all in %.1f s from the first follow%s)", acceptsFanoutPhase.get(), acceptS,
                allAccepted ? "" : ", TIMED OUT"));
        if (followErrors.get() > 0 || !allAccepted) {
            problems++;
        }
        int expected = (int) (followers - followErrors.get());
        List<Long> pushLat = new ArrayList<>();
        List<Double> rates = new ArrayList<>();
        Set<String> done = new java.util.HashSet<>();
        long pushCpuTicks = 0, pushSelfNanos = 0, pushWallNanos = 0, pushDeliveries = 0;
        for (int p = 1; p <= pushes; p++) {
            waitQuiet(2000, 120); // what an earlier push left in the queue is not this push's
            long c0 = cpuTicks(atriumPid), s0 = selfCpuNanos(), t0 = System.nanoTime();
            int from = followerArrivals.size();
            Process proc = new ProcessBuilder("bash", "-c", pushCommand + " " + p).redirectErrorStream(true).start();
            String pushOut = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int rc = proc.waitFor();
            long end = System.nanoTime();
            if (rc != 0) {
                out("  push " + p + " FAILED (exit " + rc + "): " + trim(pushOut));
                problems++;
                continue;
            }
            String[] id = new String[1];
            boolean got = waitFor(() -> {
                for (var e : pushArrivals.entrySet()) {
                    if (!done.contains(e.getKey()) && e.getValue().size() >= expected) {
                        id[0] = e.getKey();
                        return true;
                    }
                }
                return false;
            }, 300);
            if (!got) {
                out("  push " + p + ": not every follower got its Push within 300 s");
                problems++;
                continue;
            }
            done.add(id[0]);
            waitQuiet(2000, 120); // the push's other activities (the Update of the moved default branch), and duplicates if any
            pushCpuTicks += cpuTicks(atriumPid) - c0;
            pushSelfNanos += selfCpuNanos() - s0;
            pushWallNanos += System.nanoTime() - t0 - 2_000_000_000L; // less the quiet wait
            List<long[]> arr = new ArrayList<>(pushArrivals.get(id[0]));
            long first = Long.MAX_VALUE, last = Long.MIN_VALUE;
            for (long[] a : arr) {
                first = Math.min(first, a[0]);
                last = Math.max(last, a[0]);
                pushLat.add(a[0] - end);
            }
            List<long[]> all;
            synchronized (followerArrivals) {
                all = new ArrayList<>(followerArrivals.subList(from, followerArrivals.size()));
            }
            long allFirst = Long.MAX_VALUE, allLast = Long.MIN_VALUE;
            int[] byType = new int[3];
            for (long[] a : all) {
                allFirst = Math.min(allFirst, a[0]);
                allLast = Math.max(allLast, a[0]);
                byType[(int) a[1]]++;
            }
            pushDeliveries += all.size();
            double r = (all.size() - 1) / Math.max(1e-9, (allLast - allFirst) / 1e9);
            rates.add(r);
            int distinct = pushInboxes.get(id[0]).size();
            out(String.format("  push %d: %d Push (%d inboxes) + %d Update + %d other = %d deliveries in %.2f s first to last = %.1f/s;"
                    + " Pushes arrived %.0f..%.0f ms after the push ended", p, arr.size(), distinct, byType[1], byType[2], all.size(),
                    (allLast - allFirst) / 1e9, r, (first - end) / 1e6, (last - end) / 1e6));
            if (arr.size() != expected || distinct != expected) {
                problems++;
            }
        }
        Collections.sort(pushLat);
        List<Double> sr = new ArrayList<>(rates);
        Collections.sort(sr);
        out(String.format("  deliveries/s, median of %d pushes        %10.1f   (all deliveries a push caused, first to last)", sr.size(),
                sr.isEmpty() ? 0 : sr.get(sr.size() / 2)));
        out(String.format("  push end -> Push delivered, all %d      p50 %.0f ms, p99 %.0f ms, max %.0f ms", pushLat.size(), pct(pushLat, 50) / 1e6,
                pct(pushLat, 99) / 1e6, pushLat.isEmpty() ? 0 : pushLat.get(pushLat.size() - 1) / 1e6));
        if (pushDeliveries > 0) {
            out(String.format("  CPU from each push to its last delivery: Atrium %.0f%% of one CPU, %.2f ms a delivery (git push included);"
                    + " this load client + sink %.0f%%", 100.0 * pushCpuTicks / 100.0 / (pushWallNanos / 1e9), pushCpuTicks * 10.0 / pushDeliveries,
                    100.0 * pushSelfNanos / pushWallNanos));
        }
        out(String.format("signatures of Atrium's deliveries checked at the sink: %d verified, %d FAILED (%s delivery of %d)",
                verified.get(), verifyFailures.get(), verifyEvery == 1 ? "every" : "every " + verifyEvery + "th", deliveriesSeen.get()));
        for (String f : failureSamples) {
            out("  failure: " + f);
        }
        if (!otherDeliveries.isEmpty()) {
            out("  other deliveries (neither Accept nor Push), also signed and checked: " + new java.util.TreeMap<>(otherDeliveries));
        }
        if (verifyFailures.get() > 0) {
            problems++;
        }
        return problems == 0 ? 0 : 3;
    }

    // ------------------------------------------------------------------ client side

    static HttpResponse<String> follow(String atrium, String inboxPath, String object, String actor, String id) throws Exception {
        String json = "{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"" + id + "\",\"type\":\"Follow\",\"actor\":\""
                + actor + "\",\"object\":\"" + object + "\"}";
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        URI target = URI.create(atrium + inboxPath);
        String host = target.getHost() + (target.getPort() == -1 ? "" : ":" + target.getPort());
        String date = HTTP_DATE.format(ZonedDateTime.now(ZoneOffset.UTC));
        String digest = "SHA-256=" + Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-256").digest(body));
        String text = "(request-target): post " + inboxPath + "\nhost: " + host + "\ndate: " + date + "\ndigest: " + digest;
        Signature s = Signature.getInstance("SHA256withRSA");
        s.initSign(keys.getPrivate());
        s.update(text.getBytes(StandardCharsets.UTF_8));
        String sig = "keyId=\"" + actor + "#main-key\",algorithm=\"rsa-sha256\",headers=\"(request-target) host date digest\",signature=\""
                + Base64.getEncoder().encodeToString(s.sign()) + "\"";
        HttpRequest req = HttpRequest.newBuilder(target).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/activity+json").header("Date", date).header("Digest", digest).header("Signature", sig)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
        return http.send(req, HttpResponse.BodyHandlers.ofString());
    }

    // ------------------------------------------------------------------ sink

    static void sinkHandle(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getRawPath();
            String name = path.substring("/users/".length());
            if (ex.getRequestMethod().equals("GET") && !name.contains("/")) {
                actorGets.incrementAndGet();
                String actor = sinkBase + "/users/" + name;
                String doc = "{\"@context\":[\"https://www.w3.org/ns/activitystreams\",\"https://w3id.org/security/v1\"],\"id\":\"" + actor
                        + "\",\"type\":\"Person\",\"preferredUsername\":\"" + name + "\",\"inbox\":\"" + actor + "/inbox\",\"publicKey\":{\"id\":\""
                        + actor + "#main-key\",\"owner\":\"" + actor + "\",\"publicKeyPem\":" + quote(publicPem) + "}}";
                send(ex, 200, doc);
                return;
            }
            if (ex.getRequestMethod().equals("POST") && name.endsWith("/inbox")) {
                byte[] body = ex.getRequestBody().readAllBytes();
                long at = System.nanoTime();
                long n = deliveriesSeen.incrementAndGet();
                Object parsed = new Json(new String(body, StandardCharsets.UTF_8)).value();
                @SuppressWarnings("unchecked")
                Map<String, Object> activity = parsed instanceof Map ? (Map<String, Object>) parsed : Map.of();
                if (n % verifyEvery == 0) {
                    String why = verify(ex, path, body, activity);
                    if (why == null) {
                        verified.incrementAndGet();
                    } else {
                        verifyFailures.incrementAndGet();
                        if (failureSamples.size() < 5) {
                            failureSamples.add(path + ": " + why);
                        }
                    }
                }
                String type = String.valueOf(activity.get("type"));
                String who = name.substring(0, name.indexOf('/'));
                if (who.startsWith("u") && !type.equals("Accept")) {
                    followerArrivals.add(new long[] { at, type.equals("Push") ? 0 : type.equals("Update") ? 1 : 2 });
                }
                if (type.equals("Accept")) {
                    (who.startsWith("u") ? acceptsFanoutPhase : acceptsInboxPhase).incrementAndGet();
                } else if (type.equals("Push")) {
                    String id = String.valueOf(activity.get("id"));
                    pushArrivals.computeIfAbsent(id, k -> new ConcurrentLinkedQueue<>()).add(new long[] { at });
                    pushInboxes.computeIfAbsent(id, k -> ConcurrentHashMap.newKeySet()).add(path);
                } else {
                    otherDeliveries.computeIfAbsent(type, k -> new AtomicLong()).incrementAndGet();
                }
                send(ex, 202, "");
                return;
            }
            send(ex, 404, "{}");
        } catch (RuntimeException e) {
            log("sink: " + e);
            send(ex, 500, "{}");
        }
    }

    /** null when the delivery's draft-cavage signature verifies against Atrium's key document; else why not. */
    static String verify(HttpExchange ex, String path, byte[] body, Map<String, Object> activity) {
        try {
            String header = ex.getRequestHeaders().getFirst("Signature");
            if (header == null) {
                return "no Signature header";
            }
            Map<String, String> params = new HashMap<>();
            for (var m : java.util.regex.Pattern.compile("(\\w+)=\"([^\"]*)\"").matcher(header).results().toList()) {
                params.put(m.group(1).toLowerCase(Locale.ROOT), m.group(2));
            }
            String keyId = params.get("keyid");
            List<String> names = List.of(params.getOrDefault("headers", "date").toLowerCase(Locale.ROOT).split(" "));
            for (String needed : List.of("(request-target)", "host", "date", "digest")) {
                if (!names.contains(needed)) {
                    return "the signature does not cover " + needed;
                }
            }
            String digest = ex.getRequestHeaders().getFirst("Digest");
            String want = "SHA-256=" + Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-256").digest(body));
            if (!want.equals(digest)) {
                return "Digest " + digest + " is not the body's " + want;
            }
            Instant date = ZonedDateTime.parse(ex.getRequestHeaders().getFirst("Date"), HTTP_DATE.withZone(ZoneOffset.UTC)).toInstant();
            if (Math.abs(Duration.between(date, Instant.now()).getSeconds()) > 300) {
                return "Date " + date + " is more than 5 min off";
            }
            StringBuilder text = new StringBuilder();
            for (String h : names) {
                if (text.length() > 0) {
                    text.append('\n');
                }
                if (h.equals("(request-target)")) {
                    String q = ex.getRequestURI().getRawQuery();
                    text.append("(request-target): post ").append(path).append(q == null ? "" : "?" + q);
                } else {
                    List<String> v = ex.getRequestHeaders().get(h);
                    if (v == null) {
                        return "signed header " + h + " is missing";
                    }
                    text.append(h).append(": ").append(String.join(", ", v));
                }
            }
            String owner = String.valueOf(activity.get("actor"));
            PublicKey key = atriumKey(keyId, owner);
            Signature s = Signature.getInstance("SHA256withRSA");
            s.initVerify(key);
            s.update(text.toString().getBytes(StandardCharsets.UTF_8));
            return s.verify(Base64.getDecoder().decode(params.get("signature"))) ? null : "the signature does not verify with " + keyId;
        } catch (Exception e) {
            return e.toString();
        }
    }

    /** Atrium's key document at keyId (fragment dropped), fetched once; its owner must be the activity's actor. */
    static PublicKey atriumKey(String keyId, String actor) throws Exception {
        PublicKey kept = atriumKeys.get(keyId + " " + actor);
        if (kept != null) {
            return kept;
        }
        URI uri = URI.create(keyId.contains("#") ? keyId.substring(0, keyId.indexOf('#')) : keyId);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).header("Accept", "application/activity+json").timeout(Duration.ofSeconds(30))
                .build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("GET " + uri + " answered " + r.statusCode());
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> doc = (Map<String, Object>) new Json(r.body()).value();
        @SuppressWarnings("unchecked")
        Map<String, Object> k = doc.containsKey("publicKeyPem") ? doc : (Map<String, Object>) doc.get("publicKey");
        if (!keyId.equals(k.get("id"))) {
            throw new IOException("the document at " + uri + " is not the key " + keyId);
        }
        if (!actor.equals(k.get("owner"))) {
            throw new IOException("the key " + keyId + " belongs to " + k.get("owner") + ", not to the activity's actor " + actor);
        }
        String b64 = ((String) k.get("publicKeyPem")).replaceAll("-----(BEGIN|END) PUBLIC KEY-----", "").replaceAll("\\s", "");
        PublicKey key = KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(b64)));
        atriumKeys.put(keyId + " " + actor, key);
        return key;
    }

    static void send(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        if (!body.isEmpty()) {
            ex.getResponseHeaders().set("Content-Type", "application/activity+json");
        }
        ex.sendResponseHeaders(status, b.length == 0 ? -1 : b.length);
        if (b.length > 0) {
            try (OutputStream o = ex.getResponseBody()) {
                o.write(b);
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    interface Cond {
        boolean met() throws Exception;
    }

    static boolean waitFor(Cond c, int seconds) throws Exception {
        long until = System.nanoTime() + seconds * 1_000_000_000L;
        while (!c.met()) {
            if (System.nanoTime() > until) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    /** Waits until no follower delivery arrived for quietMs (at most maxS). */
    static void waitQuiet(long quietMs, int maxS) throws Exception {
        long until = System.nanoTime() + maxS * 1_000_000_000L;
        int seen = -1;
        long since = System.nanoTime();
        while (System.nanoTime() < until) {
            int n = followerArrivals.size();
            if (n != seen) {
                seen = n;
                since = System.nanoTime();
            } else if (System.nanoTime() - since >= quietMs * 1_000_000L) {
                return;
            }
            Thread.sleep(20);
        }
    }

    static double pct(List<Long> sorted, int p) {
        if (sorted.isEmpty()) {
            return 0;
        }
        int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    /** utime + stime of a process in clock ticks (USER_HZ, 100 on Linux). */
    static long cpuTicks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    static long selfCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    static String trim(String s) {
        s = s == null ? "" : s.replaceAll("\\s+", " ");
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }

    static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }

    static void log(String s) {
        System.err.println("bench: " + s);
    }

    static void out(String s) {
        System.out.println(s);
        System.out.flush();
    }

    /** A small JSON reader: objects (LinkedHashMap), arrays (List), strings, numbers (Double), booleans, null. */
    static final class Json {
        private final String s;
        private int i;

        Json(String s) {
            this.s = s;
        }

        Object value() {
            ws();
            if (i >= s.length()) {
                throw new IllegalArgumentException("JSON ends early");
            }
            char c = s.charAt(i);
            switch (c) {
                case '{' -> {
                    i++;
                    Map<String, Object> m = new LinkedHashMap<>();
                    ws();
                    if (s.charAt(i) == '}') {
                        i++;
                        return m;
                    }
                    while (true) {
                        ws();
                        String k = string();
                        ws();
                        expect(':');
                        m.put(k, value());
                        ws();
                        if (s.charAt(i) == ',') {
                            i++;
                        } else {
                            expect('}');
                            return m;
                        }
                    }
                }
                case '[' -> {
                    i++;
                    List<Object> l = new ArrayList<>();
                    ws();
                    if (s.charAt(i) == ']') {
                        i++;
                        return l;
                    }
                    while (true) {
                        l.add(value());
                        ws();
                        if (s.charAt(i) == ',') {
                            i++;
                        } else {
                            expect(']');
                            return l;
                        }
                    }
                }
                case '"' -> {
                    return string();
                }
                default -> {
                    int start = i;
                    while (i < s.length() && "{}[],: \t\r\n".indexOf(s.charAt(i)) < 0) {
                        i++;
                    }
                    String w = s.substring(start, i);
                    return switch (w) {
                        case "true" -> Boolean.TRUE;
                        case "false" -> Boolean.FALSE;
                        case "null" -> null;
                        default -> Double.valueOf(w);
                    };
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c == '\\') {
                    char e = s.charAt(i++);
                    switch (e) {
                        case 'n' -> b.append('\n');
                        case 't' -> b.append('\t');
                        case 'r' -> b.append('\r');
                        case 'b' -> b.append('\b');
                        case 'f' -> b.append('\f');
                        case 'u' -> {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                            i += 4;
                        }
                        default -> b.append(e);
                    }
                } else {
                    b.append(c);
                }
            }
        }

        private void expect(char c) {
            if (s.charAt(i) != c) {
                throw new IllegalArgumentException("expected '" + c + "' at " + i);
            }
            i++;
        }

        private void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }
    }
}
