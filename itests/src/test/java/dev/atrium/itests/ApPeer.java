package dev.atrium.itests;

import com.fasterxml.jackson.databind.node.TextNode;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Another ActivityPub instance in the test: a real JDK HTTP server on loopback serving its actors' documents (each with
 * an RSA key made by the {@code openssl} command) and recording what reaches their inboxes. It signs requests the
 * draft-cavage way with {@code openssl dgst -sha256 -sign} and verifies Atrium's signatures with {@code openssl dgst
 * -verify}: none of Atrium's signing code is involved on this side.
 */
final class ApPeer implements AutoCloseable {

    static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.ROOT);

    record Received(String path, Map<String, List<String>> headers, byte[] body) {
        String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return String.join(", ", e.getValue());
                }
            }
            return null;
        }
    }

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final Path dir;
    private final Map<String, String> documents = new ConcurrentHashMap<>();
    final List<Received> inbox = new CopyOnWriteArrayList<>();

    ApPeer(Path dir) throws IOException {
        this.dir = dir;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            try (exchange) {
                byte[] body = exchange.getRequestBody().readAllBytes();
                String path = exchange.getRequestURI().getRawPath();
                if (exchange.getRequestMethod().equals("POST") && path.endsWith("/inbox")) {
                    inbox.add(new Received(path, Map.copyOf(exchange.getRequestHeaders()), body));
                    exchange.sendResponseHeaders(202, -1);
                    return;
                }
                String doc = documents.get(path);
                if (doc == null) {
                    exchange.sendResponseHeaders(404, -1);
                    return;
                }
                byte[] out = doc.getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/activity+json");
                exchange.sendResponseHeaders(200, out.length);
                exchange.getResponseBody().write(out);
            }
        });
        server.setExecutor(threads);
        server.start();
    }

    String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** An actor {@code /users/<name>} with a fresh openssl key {@code <name>}; returns its URI. */
    String actor(String name) throws Exception {
        String pem = key(name);
        String actor = base() + "/users/" + name;
        documents.put(
                "/users/" + name,
                "{\"@context\":[\"https://www.w3.org/ns/activitystreams\",\"https://w3id.org/security/v1\"],\"id\":\""
                        + actor
                        + "\",\"type\":\"Person\",\"preferredUsername\":\"" + name + "\",\"inbox\":\"" + actor
                        + "/inbox\",\"publicKey\":{\"id\":\"" + actor
                        + "#main-key\",\"owner\":\"" + actor + "\",\"publicKeyPem\":"
                        + TextNode.valueOf(pem).toString() + "}}");
        return actor;
    }

    /** A fresh openssl RSA key {@code <name>} (for {@link #signed}); returns its public half in PEM. */
    String key(String name) throws Exception {
        Path key = dir.resolve(name + ".pem");
        Path pub = dir.resolve(name + ".pub.pem");
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key.toString());
        openssl("pkey", "-in", key.toString(), "-pubout", "-out", pub.toString());
        return Files.readString(pub);
    }

    /** Serves {@code json} at {@code path} as an ActivityPub document; returns its URL. */
    String serve(String path, String json) {
        documents.put(path, json);
        return base() + path;
    }

    static String digest(byte[] body) throws Exception {
        return "SHA-256="
                + Base64.getEncoder()
                        .encodeToString(MessageDigest.getInstance("SHA-256").digest(body));
    }

    static String now() {
        return HTTP_DATE.format(ZonedDateTime.now(ZoneOffset.UTC));
    }

    /**
     * The headers of a POST of {@code body} to {@code target} on {@code host}, signed by {@code keyName}'s key under
     * {@code keyId} over {@code (request-target) host date digest}.
     */
    Map<String, String> signed(String keyName, String keyId, String host, String target, String date, String digest)
            throws Exception {
        String text =
                "(request-target): post " + target + "\nhost: " + host + "\ndate: " + date + "\ndigest: " + digest;
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Content-Type", "application/activity+json");
        h.put("Date", date);
        h.put("Digest", digest);
        h.put(
                "Signature",
                "keyId=\"" + keyId
                        + "\",algorithm=\"rsa-sha256\",headers=\"(request-target) host date digest\",signature=\""
                        + sign(keyName, text) + "\"");
        return h;
    }

    String sign(String keyName, String text) throws Exception {
        Path in = Files.createTempFile(dir, "signing", ".txt");
        Path out = dir.resolve(in.getFileName() + ".sig");
        Files.writeString(in, text, StandardCharsets.UTF_8);
        openssl(
                "dgst",
                "-sha256",
                "-sign",
                dir.resolve(keyName + ".pem").toString(),
                "-out",
                out.toString(),
                in.toString());
        return Base64.getEncoder().encodeToString(Files.readAllBytes(out));
    }

    /**
     * Whether a request Atrium sent carries a draft-cavage signature that openssl verifies with {@code publicPem} over the
     * headers it names, and a {@code Digest} of its body.
     */
    boolean verifies(Received r, String publicPem) throws Exception {
        if (!digest(r.body()).equals(r.header("Digest"))) {
            return false;
        }
        Map<String, String> params = new LinkedHashMap<>();
        for (String part : r.header("Signature").split(",(?=[a-zA-Z]+=)")) {
            int eq = part.indexOf('=');
            params.put(
                    part.substring(0, eq).trim(), part.substring(eq + 1).trim().replaceAll("^\"|\"$", ""));
        }
        List<String> lines = new ArrayList<>();
        for (String name : params.get("headers").split(" ")) {
            lines.add(
                    name.equals("(request-target)")
                            ? "(request-target): post " + r.path()
                            : name + ": " + r.header(name));
        }
        Path pub = Files.createTempFile(dir, "pub", ".pem");
        Path in = Files.createTempFile(dir, "signed", ".txt");
        Path sig = Files.createTempFile(dir, "sig", ".bin");
        Files.writeString(pub, publicPem);
        Files.writeString(in, String.join("\n", lines), StandardCharsets.UTF_8);
        Files.write(sig, Base64.getDecoder().decode(params.get("signature")));
        Process p = new ProcessBuilder(
                        "openssl",
                        "dgst",
                        "-sha256",
                        "-verify",
                        pub.toString(),
                        "-signature",
                        sig.toString(),
                        in.toString())
                .redirectErrorStream(true)
                .start();
        String output = new String(p.getInputStream().readAllBytes());
        return p.waitFor() == 0 && output.contains("Verified OK");
    }

    private static void openssl(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IllegalStateException("openssl " + String.join(" ", args) + " failed: " + output);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
