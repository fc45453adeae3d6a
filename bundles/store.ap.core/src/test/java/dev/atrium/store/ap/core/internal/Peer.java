package dev.atrium.store.ap.core.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.atrium.kernel.internal.egress.Egress;
import java.io.IOException;
import java.lang.annotation.Annotation;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * A remote ActivityPub server in the test: a real HTTP server on loopback serving documents by path, with an RSA key
 * made and used by the {@code openssl} command (an independent signer: none of Atrium's signing code).
 */
final class Peer implements AutoCloseable {

    final HttpServer server;
    private final java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newCachedThreadPool();
    final Path dir;
    final Map<String, Function<HttpExchange, Response>> routes = new ConcurrentHashMap<>();
    final List<Received> received = new CopyOnWriteArrayList<>();

    record Response(int status, String contentType, byte[] body, Map<String, String> headers) {
        static Response json(String type, String body) {
            return new Response(200, type, body.getBytes(StandardCharsets.UTF_8), Map.of());
        }
    }

    record Received(String method, String path, Map<String, List<String>> headers, byte[] body) {}

    Peer(Path dir) throws IOException {
        this.dir = dir;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            try (exchange) {
                byte[] body = exchange.getRequestBody().readAllBytes();
                received.add(new Received(
                        exchange.getRequestMethod(),
                        exchange.getRequestURI().getRawPath(),
                        Map.copyOf(exchange.getRequestHeaders()),
                        body));
                Function<HttpExchange, Response> route =
                        routes.get(exchange.getRequestURI().getRawPath());
                Response r = route == null
                        ? new Response(404, "text/plain", "no".getBytes(), Map.of())
                        : route.apply(exchange);
                r.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
                if (r.contentType() != null) {
                    exchange.getResponseHeaders().add("Content-Type", r.contentType());
                }
                exchange.sendResponseHeaders(r.status(), r.body().length == 0 ? -1 : r.body().length);
                if (r.body().length > 0) {
                    exchange.getResponseBody().write(r.body());
                }
            }
        });
        server.setExecutor(threads);
        server.start();
    }

    String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Makes an RSA key pair with openssl into {@code <name>.pem} / {@code <name>.pub.pem}; returns the public PEM. */
    String opensslKey(String name) throws Exception {
        Path key = dir.resolve(name + ".pem");
        Path pub = dir.resolve(name + ".pub.pem");
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key.toString());
        openssl("pkey", "-in", key.toString(), "-pubout", "-out", pub.toString());
        return Files.readString(pub);
    }

    /** An actor document at {@code path} publishing {@code publicPem} as {@code <actor>#main-key}. */
    String serveActor(String path, String publicPem) {
        String actor = base() + path;
        String doc =
                "{\"@context\":[\"https://www.w3.org/ns/activitystreams\",\"https://w3id.org/security/v1\"],\"id\":\""
                        + actor
                        + "\",\"type\":\"Service\",\"inbox\":\"" + actor + "/inbox\",\"publicKey\":{\"id\":\"" + actor
                        + "#main-key\",\"owner\":\""
                        + actor + "\",\"publicKeyPem\":"
                        + com.fasterxml.jackson.databind.node.TextNode.valueOf(publicPem)
                                .toString() + "}}";
        routes.put(path, ex -> Response.json("application/activity+json", doc));
        return actor;
    }

    /** openssl's RSA-SHA256 signature of {@code text} with key {@code name}, base64. */
    String opensslSign(String name, String text) throws Exception {
        Path in = Files.createTempFile(dir, "signing", ".txt");
        Path out = dir.resolve(in.getFileName() + ".sig");
        Files.writeString(in, text, StandardCharsets.UTF_8);
        openssl(
                "dgst",
                "-sha256",
                "-sign",
                dir.resolve(name + ".pem").toString(),
                "-out",
                out.toString(),
                in.toString());
        return Base64.getEncoder().encodeToString(Files.readAllBytes(out));
    }

    /** Whether openssl verifies {@code signatureBase64} over {@code text} with {@code publicPem}. */
    boolean opensslVerifies(String publicPem, String text, String signatureBase64) throws Exception {
        Path pub = Files.createTempFile(dir, "pub", ".pem");
        Path in = Files.createTempFile(dir, "signed", ".txt");
        Path sig = Files.createTempFile(dir, "sig", ".bin");
        Files.writeString(pub, publicPem);
        Files.writeString(in, text, StandardCharsets.UTF_8);
        Files.write(sig, Base64.getDecoder().decode(signatureBase64));
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

    static void openssl(String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IllegalStateException("openssl " + String.join(" ", args) + " failed: " + output);
        }
    }

    /** The kernel's real egress guard; loopback allowed only when the test says (as ATRIUM_EGRESS_ALLOW_LOOPBACK does). */
    static Egress guard(boolean allowLoopback) {
        return new Egress(new Egress.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return Egress.Config.class;
            }

            @Override
            public boolean allowLoopback() {
                return allowLoopback;
            }

            @Override
            public String dnsServer() {
                return "";
            }
        });
    }

    static GuardedFetcher.Config fetchTimeout(int seconds) {
        return new GuardedFetcher.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return GuardedFetcher.Config.class;
            }

            @Override
            public int fetchTimeoutSeconds() {
                return seconds;
            }
        };
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
