package dev.atrium.cli;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A stand-in for the server's app-deployment and store-registry routes on loopback (the JDK's HTTP server): each
 * {@code METHOD path?query} answers its queued responses in turn, the last one again and again; every request is
 * recorded. The real server's routes are exercised by the itests, which run the CLI against it.
 */
final class FakeServer implements AutoCloseable {

    record Answer(int status, String contentType, String body) {}

    record Request(String method, String path, String authorization, String body) {}

    private final HttpServer server;
    private final Map<String, Deque<Answer>> answers = new ConcurrentHashMap<>();
    final List<Request> requests = new CopyOnWriteArrayList<>();

    FakeServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getRawPath()
                    + (exchange.getRequestURI().getRawQuery() == null
                            ? ""
                            : "?" + exchange.getRequestURI().getRawQuery());
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String key = exchange.getRequestMethod() + " " + path;
            requests.add(new Request(
                    exchange.getRequestMethod(),
                    path,
                    exchange.getRequestHeaders().getFirst("Authorization"),
                    body));
            Deque<Answer> queue = answers.get(key);
            Answer a;
            synchronized (this) {
                a = queue == null
                        ? new Answer(
                                404,
                                "application/json",
                                "{\"error\":{\"code\":\"NOT_FOUND\",\"message\":\"no " + key + "\"}}")
                        : queue.size() > 1 ? queue.poll() : queue.peek();
            }
            byte[] bytes = a.body().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", a.contentType());
            exchange.sendResponseHeaders(a.status(), bytes.length == 0 ? -1 : bytes.length);
            if (bytes.length > 0) {
                exchange.getResponseBody().write(bytes);
            }
            exchange.close();
        });
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Queues JSON answers for {@code METHOD path}. */
    FakeServer on(String methodAndPath, int status, String... bodies) {
        for (String b : bodies) {
            answer(methodAndPath, new Answer(status, "application/json", b));
        }
        return this;
    }

    FakeServer answer(String methodAndPath, Answer a) {
        answers.computeIfAbsent(methodAndPath, k -> new ArrayDeque<>()).add(a);
        return this;
    }

    Request only(String method, String path) {
        List<Request> found = requests.stream()
                .filter(r -> r.method().equals(method) && r.path().equals(path))
                .toList();
        if (found.size() != 1) {
            throw new AssertionError(found.size() + " requests " + method + " " + path + " in " + requests);
        }
        return found.get(0);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
