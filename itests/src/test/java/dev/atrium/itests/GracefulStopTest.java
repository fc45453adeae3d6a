package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request in flight when the server is told to stop (SIGTERM) is answered in full before the server goes (issue 32,
 * finding 14). Before, an upload that finished during the stop was stored but answered 200 with an empty body: the
 * first bundle to stop is Aries' whiteboard, and with it went what writes the answer. From SIGTERM on, a new request
 * is answered 503 with the spec's body and {@code Retry-After}, then the listener closes (issue 34): no client meets a
 * half-stopped server (Jetty's HTML 404, a route gone, a 500 from a servlet stack torn down).
 */
class GracefulStopTest {

    @TempDir
    Path tmp;

    @Test
    void anUploadThatFinishesWhileTheServerStopsIsAnsweredWithItsRecord() throws Throwable {
        TestDatabase db = TestDatabase.create();
        AtriumServer server = AtriumServer.launch(tmp.resolve("data"), db);
        try {
            User u = server.newUser();
            String space = "/api/spaces/" + u.defaultSpaceId();
            Http.Reply created =
                    u.http().post(space + "/storage/files", Map.of("path", "slow.bin", "content", "first"));
            assertEquals(201, created.status(), created.body());
            String fileId = created.json().path("file").path("id").asText();

            byte[] content = new byte[2 << 20];
            Arrays.fill(content, (byte) 'x');
            try (Socket s = new Socket("127.0.0.1", server.port)) {
                s.setSoTimeout(60_000);
                OutputStream out = s.getOutputStream();
                out.write(("PUT " + space + "/storage/" + fileId + "/content HTTP/1.1\r\nHost: 127.0.0.1:" + server.port
                                + "\r\nAuthorization: Bearer " + u.http().token()
                                + "\r\nContent-Type: application/octet-stream\r\nContent-Length: "
                                + content.length + "\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
                int sent = 64 << 10;
                out.write(content, 0, sent);
                out.flush();
                Thread.sleep(500);
                server.process.destroy(); // SIGTERM, as a service manager sends it
                // the rest of the body, over about two seconds, while the server stops
                for (int chunk = 128 << 10; sent < content.length; sent += chunk) {
                    out.write(content, sent, Math.min(chunk, content.length - sent));
                    out.flush();
                    Thread.sleep(120);
                }
                InputStream in = s.getInputStream();
                RawHttp.Response r = RawHttp.read(in);
                String body = new String(r.body(), StandardCharsets.UTF_8);
                assertEquals(200, r.status(), body);
                JsonNode file = Http.JSON.readTree(body).path("file");
                assertEquals(fileId, file.path("id").asText(), "the answer is the file's record: " + body);
                assertEquals(content.length, file.path("size").asLong(), body);
            }
            assertTrue(server.process.waitFor(30, TimeUnit.SECONDS), "the server stopped");
        } finally {
            server.close();
        }
    }

    @Test
    void aStopUnderLoadAnswers503ThenRefusesConnectionsAndNeverAHalfStoppedServer() throws Throwable {
        TestDatabase db = TestDatabase.create();
        AtriumServer server = AtriumServer.launch(tmp.resolve("data"), db);
        try {
            User u = server.newUser();
            String space = "/api/spaces/" + u.defaultSpaceId();
            String fileId = u.http()
                    .post(space + "/storage/files", Map.of("path", "long.bin", "content", "first"))
                    .json()
                    .path("file")
                    .path("id")
                    .asText();
            Map<String, AtomicLong> answers = new ConcurrentHashMap<>();
            Map<String, AtomicLong> workerAnswers = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
            AtomicLong refusedAt = new AtomicLong();
            AtomicLong sigtermAt = new AtomicLong();
            // and a deployed worker's traffic, which the kernel's relay passes (issue 34), where workerd runs here
            String workerHost = null;
            if (ServicesWorkerdTest.workerdPresent(server)) {
                String id = ServicesTest.createService(u, ServicesTest.unique("stopping"));
                Http.Reply deployed = u.http()
                        .post("/api/services/" + id + "/deployments", Map.of("bundle", ServicesWorkerdTest.code("v1")));
                assertEquals(201, deployed.status(), deployed.body());
                workerHost = u.http()
                                .get("/api/services/" + id)
                                .get("service")
                                .get("slug")
                                .asText() + ".apps.localhost";
            }
            int workerClients = workerHost == null ? 0 : 4;
            CountDownLatch clientsDone = new CountDownLatch(8 + workerClients);
            List<Thread> clients = new ArrayList<>();
            for (int c = 0; c < 8 + workerClients; c++) {
                boolean worker = c >= 8;
                String host = worker ? workerHost : "127.0.0.1:" + server.port;
                Thread t = new Thread(() -> {
                    try {
                        keepAliveClient(
                                server.port,
                                host,
                                worker ? "/" : space,
                                worker ? null : u.http().token(),
                                worker ? workerAnswers : answers,
                                wrong,
                                refusedAt);
                    } finally {
                        clientsDone.countDown();
                    }
                });
                t.start();
                clients.add(t);
            }
            // an upload longer than the drain time: it is cut, and its client sees that
            byte[] chunk = new byte[64 << 10];
            Arrays.fill(chunk, (byte) 'y');
            int total = 200 * chunk.length;
            try (Socket s = new Socket("127.0.0.1", server.port)) {
                s.setSoTimeout(30_000);
                OutputStream out = s.getOutputStream();
                out.write(("PUT " + space + "/storage/" + fileId + "/content HTTP/1.1\r\nHost: 127.0.0.1:" + server.port
                                + "\r\nAuthorization: Bearer " + u.http().token()
                                + "\r\nContent-Type: application/octet-stream\r\nContent-Length: " + total
                                + "\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
                out.write(chunk);
                out.flush();
                Thread.sleep(1_000);
                sigtermAt.set(System.nanoTime());
                server.process.destroy();
                boolean cut = false;
                try {
                    // 64 KiB every 100 ms: about 20 s for the whole body, far past the drain time
                    for (int i = 1; i < 200; i++) {
                        out.write(chunk);
                        out.flush();
                        Thread.sleep(100);
                    }
                } catch (IOException expected) {
                    cut = true;
                }
                if (!cut) {
                    try {
                        RawHttp.Response r = RawHttp.read(s.getInputStream());
                        assertTrue(
                                r.status() >= 400,
                                "an upload still running at the deadline is not stored: " + r.status());
                    } catch (IOException expected) {
                        // the connection was closed under it: the client sees that
                    }
                }
            }
            assertTrue(server.process.waitFor(30, TimeUnit.SECONDS), "the server stopped");
            long stopMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sigtermAt.get());
            assertTrue(clientsDone.await(30, TimeUnit.SECONDS));
            System.out.println("stop under load: answers " + answers + ", a worker's " + workerAnswers
                    + ", listener closed "
                    + TimeUnit.NANOSECONDS.toMillis(refusedAt.get() - sigtermAt.get())
                    + " ms after SIGTERM, process gone within " + stopMillis + " ms");
            assertTrue(wrong.isEmpty(), "answers of a half-stopped server: " + wrong);
            assertTrue(answers.containsKey("200"), "the clients were answered before the stop: " + answers);
            assertTrue(answers.containsKey("503"), "new requests were answered 503 while requests drained: " + answers);
            if (workerClients > 0) {
                assertTrue(workerAnswers.containsKey("200"), "the worker answered before the stop: " + workerAnswers);
                assertTrue(
                        workerAnswers.containsKey("503"),
                        "relayed connections' new requests were answered 503 too: " + workerAnswers);
            }
            assertTrue(refusedAt.get() > sigtermAt.get(), "the listener closed: new connections were refused");
            assertTrue(
                    stopMillis < 12_000,
                    "a stop under load ends within the drain time and the bundles' stop: " + stopMillis + " ms");
        } finally {
            server.close();
        }
    }

    /**
     * GETs over keep-alive connections until the server refuses the connection: every answer must be a 200 or the
     * stopping server's 503 with the spec's body and Retry-After; a connection the server closes is opened again.
     */
    private static void keepAliveClient(
            int port,
            String host,
            String path,
            String token,
            Map<String, AtomicLong> answers,
            ConcurrentLinkedQueue<String> wrong,
            AtomicLong refusedAt) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
        while (System.nanoTime() < end) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                s.setSoTimeout(20_000);
                OutputStream out = s.getOutputStream();
                InputStream in = s.getInputStream();
                while (true) {
                    out.write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n"
                                    + (token == null ? "" : "Authorization: Bearer " + token + "\r\n") + "\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                    RawHttp.Response r = RawHttp.read(in);
                    String body = new String(r.body(), StandardCharsets.UTF_8);
                    answers.computeIfAbsent(Integer.toString(r.status()), k -> new AtomicLong())
                            .incrementAndGet();
                    if (r.status() == 503) {
                        if (r.header("retry-after") == null
                                || !String.valueOf(r.header("content-type")).startsWith("application/json")
                                || !body.contains("\"SERVICE_UNAVAILABLE\"")) {
                            wrong.add("503 " + r.headers() + " " + body);
                        }
                    } else if (r.status() != 200) {
                        wrong.add(r.status() + " " + r.headers() + " " + body);
                    }
                    if ("close".equalsIgnoreCase(r.header("connection"))) {
                        break;
                    }
                }
            } catch (ConnectException refused) {
                refusedAt.compareAndSet(0, System.nanoTime());
                return;
            } catch (IOException | RuntimeException closed) {
                // the connection closed between or under requests: open another
            }
        }
        wrong.add("the listener never closed");
    }
}
