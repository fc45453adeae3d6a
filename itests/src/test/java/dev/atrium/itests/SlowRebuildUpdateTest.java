package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceRegistration;

/**
 * Updates under load while every rebuild of the JAX-RS application is slow on purpose (issue 32, finding 16): a
 * whiteboard extension, a JAX-RS {@code Feature} whose {@code configure} sleeps, is part of every application Aries
 * builds. Once, under CPU pressure, the update gate opened before the last of several rebuilds and 59 requests met the
 * half-built application (404 "no route"); a slow rebuild makes that window wide every time instead of by chance. The
 * gate held through it here (400 ms and 1.5 s a build, four builds an update, and with six busy threads in the same JVM:
 * no request failed), so the one early opening seen had another cause; this keeps the slow case covered.
 */
@Isolated
@ResourceLock(InFrameworkRuntime.LOCK)
class SlowRebuildUpdateTest {

    /** What each application build is made to take on top of its own time. */
    static final long SLOW_MILLIS = 400;

    static final int UPDATES = 6;

    @TempDir
    Path tmp;

    @Test
    void updatesFailNoRequestWhenEveryWhiteboardRebuildIsSlow() throws Exception {
        try (InFrameworkRuntime rt = InFrameworkRuntime.start(tmp)) {
            rt.assertHealthy(180_000);
            String operator =
                    Files.readString(rt.data.resolve("operator.token")).trim();
            Http admin = new Http(rt.base(), operator);
            Http.Reply user = admin.post("/admin/users", Map.of("username", "slow"));
            assertEquals(201, user.status(), user.body());
            Http.Reply token = admin.post("/admin/users/slow/tokens", Map.of("scopes", "*"));
            assertEquals(201, token.status(), token.body());
            Http http = new Http(rt.base(), token.json().path("token").asText());
            String space = "/api/spaces/" + user.json().path("space").path("id").asText();
            String memory = http.post(space + "/memories", Map.of("content", "served through slow rebuilds"))
                    .json()
                    .path("memory")
                    .path("id")
                    .asText();

            AtomicInteger builds = new AtomicInteger();
            ServiceRegistration<?> slow = registerSlowFeature(rt, builds);
            try {
                // the extension itself made the whiteboard rebuild: wait for that to be over
                rt.assertHealthy(60_000);
                int before = builds.get();
                byte[] a = BundleUpdateTest.variant("slowA", null, s -> s);
                byte[] b = BundleUpdateTest.variant("slowB", null, s -> s);
                HttpClient client = HttpClient.newBuilder()
                        .connectTimeout(Duration.ofSeconds(5))
                        .build();
                AtomicBoolean running = new AtomicBoolean(true);
                AtomicLong requests = new AtomicLong();
                List<String> failures = Collections.synchronizedList(new ArrayList<>());
                List<Thread> clients = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    String path = i % 2 == 0 ? space + "/memories" : "/api/memories/" + memory;
                    Thread t = new Thread(
                            () -> {
                                while (running.get()) {
                                    try {
                                        HttpResponse<String> r = client.send(
                                                HttpRequest.newBuilder(URI.create(rt.base() + path))
                                                        .header("Authorization", "Bearer " + http.token())
                                                        .timeout(Duration.ofSeconds(30))
                                                        .build(),
                                                HttpResponse.BodyHandlers.ofString());
                                        requests.incrementAndGet();
                                        if (r.statusCode() / 100 != 2) {
                                            failures.add(r.statusCode() + " " + path + " " + r.body());
                                        }
                                    } catch (java.io.IOException | InterruptedException e) {
                                        failures.add(e + " " + path);
                                    }
                                }
                            },
                            "slow-load-" + i);
                    t.start();
                    clients.add(t);
                }
                try {
                    Thread.sleep(500);
                    for (int i = 0; i < UPDATES; i++) {
                        Http.Reply r = admin.send(
                                "POST",
                                "/admin/bundles/" + BundleUpdateTest.BSN + "/update",
                                i % 2 == 0 ? a : b,
                                "application/java-archive");
                        assertEquals(200, r.status(), "update " + i + ": " + r.body());
                        Thread.sleep(300);
                    }
                    Thread.sleep(500);
                } finally {
                    running.set(false);
                    for (Thread t : clients) {
                        t.join(30_000);
                    }
                }
                int rebuilds = builds.get() - before;
                System.out.println("slow rebuilds: " + UPDATES + " updates, " + rebuilds + " application builds of "
                        + SLOW_MILLIS + " ms or more, " + requests.get() + " requests by 4 clients, " + failures.size()
                        + " failed");
                assertTrue(rebuilds >= UPDATES, "every update rebuilt the slowed application: " + rebuilds + " builds");
                assertEquals(
                        List.of(),
                        failures.subList(0, Math.min(20, failures.size())),
                        failures.size() + " requests failed");
                assertTrue(requests.get() > 20, "the load ran: " + requests.get());
            } finally {
                slow.unregister();
            }
        }
    }

    /** A JAX-RS Feature of the framework's own JAX-RS API (a proxy: the test's classes are not the bundles'), counting its builds. */
    private static ServiceRegistration<?> registerSlowFeature(InFrameworkRuntime rt, AtomicInteger builds)
            throws Exception {
        Bundle aries = rt.bundle("org.apache.aries.jax.rs.whiteboard");
        Class<?> feature = aries.loadClass("javax.ws.rs.core.Feature");
        Object slow = Proxy.newProxyInstance(
                feature.getClassLoader(), new Class<?>[] {feature}, (proxy, method, args) -> switch (method.getName()) {
                    case "configure" -> {
                        builds.incrementAndGet();
                        Thread.sleep(SLOW_MILLIS);
                        yield Boolean.TRUE;
                    }
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "a feature that makes every application build slow";
                    default -> null;
                });
        Hashtable<String, Object> properties = new Hashtable<>();
        properties.put("osgi.jaxrs.extension", true);
        properties.put("osgi.jaxrs.name", "slow-rebuilds");
        return rt.framework.getBundleContext().registerService(feature.getName(), slow, properties);
    }
}
