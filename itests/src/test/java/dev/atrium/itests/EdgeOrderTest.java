package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Hashtable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;

/**
 * The kernel runs first whatever another bundle registers (issue 34): a servlet filter of a foreign bundle with the
 * highest ranking runs after the kernel's envelope; Jetty handlers contributed to the kernel's edge run in the order of
 * their names, not their rankings; and a stopping server answers 503 in front of all of them, waits for the answers in
 * flight but not for an event stream.
 */
@ResourceLock(InFrameworkRuntime.LOCK)
class EdgeOrderTest {

    @TempDir
    Path tmp;

    @Test
    void theKernelRunsBeforeAForeignBundlesHighestRankedFilterAndEdgeHandlersGoByName() throws Exception {
        try (InFrameworkRuntime runtime = InFrameworkRuntime.start(tmp.resolve("runtime"))) {
            runtime.assertHealthy(60_000);
            Bundle kernel = runtime.bundle("dev.atrium.kernel");
            BundleContext foreign = runtime.framework.getBundleContext();
            registerForeignFilter(kernel, foreign);
            registerEdgeHandler(kernel, foreign, "b-foreign", "b", Integer.MAX_VALUE);
            registerEdgeHandler(kernel, foreign, "a-foreign", "a", Integer.MIN_VALUE);

            HttpClient client = HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(2))
                    .build();
            HttpResponse<String> probe = get(client, runtime.base() + "/api/foreign/x");
            assertEquals(200, probe.statusCode(), probe.body());
            assertEquals("foreign", probe.body());
            assertTrue(
                    probe.headers().firstValue("X-Request-Id").isPresent(),
                    "the kernel's envelope ran before the foreign filter: "
                            + probe.headers().map());

            RawHttp.Response refused;
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", runtime.port)) {
                s.setSoTimeout(10_000);
                s.getOutputStream()
                        .write("GET /api/foreign/%2e%2e/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                                .getBytes(StandardCharsets.ISO_8859_1));
                refused = RawHttp.read(s.getInputStream());
            }
            UriRejectionTest.specError(refused, "/api/foreign/%2e%2e/x");

            HttpResponse<String> byName = get(client, runtime.base() + "/edge-probe");
            assertEquals(200, byName.statusCode(), byName.body());
            assertEquals("a", byName.body(), "edge handlers go by name, not ranking");

            // a request in flight when the framework stops is finished; one that arrives meanwhile is the stopping
            // server's 503, not the foreign filter's 200; then the listener closes
            java.net.Socket stream = new java.net.Socket("127.0.0.1", runtime.port);
            stream.setSoTimeout(10_000);
            stream.getOutputStream()
                    .write(("GET /api/foreign/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
            String streamHead = new String(stream.getInputStream().readNBytes(40), StandardCharsets.ISO_8859_1);
            assertTrue(streamHead.startsWith("HTTP/1.1 200"), streamHead);
            CompletableFuture<HttpResponse<String>> slow =
                    CompletableFuture.supplyAsync(() -> getUnchecked(client, runtime.base() + "/api/foreign/slow"));
            Thread.sleep(500);
            Thread stopper = new Thread(() -> {
                try {
                    runtime.framework.stop();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            stopper.start();
            Thread.sleep(500);
            HttpResponse<String> stopping = get(
                    HttpClient.newBuilder()
                            .connectTimeout(Duration.ofSeconds(2))
                            .build(),
                    runtime.base() + "/api/foreign/x");
            assertEquals(503, stopping.statusCode(), stopping.body());
            assertTrue(stopping.body().contains("\"SERVICE_UNAVAILABLE\""), stopping.body());
            assertTrue(
                    stopping.headers().firstValue("Retry-After").isPresent(),
                    stopping.headers().map().toString());
            HttpResponse<String> finished = slow.get(10, TimeUnit.SECONDS);
            long finishedAt = System.nanoTime();
            assertEquals(200, finished.statusCode(), finished.body());
            assertEquals("slow", finished.body());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            boolean closed = false;
            while (!closed && System.nanoTime() < deadline) {
                try {
                    get(
                            HttpClient.newBuilder()
                                    .connectTimeout(Duration.ofSeconds(1))
                                    .build(),
                            runtime.base() + "/healthz");
                    Thread.sleep(100);
                } catch (ConnectException e) {
                    closed = true;
                } catch (java.io.IOException e) {
                    closed = e.getCause() instanceof ConnectException;
                }
            }
            assertTrue(closed, "the listener closed once the request in flight was answered");
            long closedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - finishedAt);
            assertTrue(
                    closedAfter < 2_000,
                    "the open event stream did not hold the stop to its deadline: closed " + closedAfter
                            + " ms after the last answer");
            stream.close();
            stopper.join(30_000);
        }
    }

    private static HttpResponse<String> get(HttpClient client, String url) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> getUnchecked(HttpClient client, String url) {
        try {
            return get(client, url);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A javax.servlet Filter on every path, ranked as high as a ranking goes, registered by another bundle: it answers
     * {@code /api/foreign/…} itself ("slow" after 3 s for {@code …/slow}) and passes everything else on.
     */
    private static void registerForeignFilter(Bundle kernel, BundleContext foreign) throws Exception {
        Class<?> filter = kernel.loadClass("javax.servlet.Filter");
        Class<?> request = kernel.loadClass("javax.servlet.http.HttpServletRequest");
        Class<?> response = kernel.loadClass("javax.servlet.http.HttpServletResponse");
        Class<?> chain = kernel.loadClass("javax.servlet.FilterChain");
        Class<?> servletRequest = kernel.loadClass("javax.servlet.ServletRequest");
        Class<?> servletResponse = kernel.loadClass("javax.servlet.ServletResponse");
        Method uri = request.getMethod("getRequestURI");
        Method status = response.getMethod("setStatus", int.class);
        Method writer = servletResponse.getMethod("getWriter");
        Method pass = chain.getMethod("doFilter", servletRequest, servletResponse);
        Method contentType = servletResponse.getMethod("setContentType", String.class);
        Method flush = servletResponse.getMethod("flushBuffer");
        InvocationHandler h = (proxy, m, args) -> {
            switch (m.getName()) {
                case "doFilter" -> {
                    String path = (String) uri.invoke(args[0]);
                    if (path.equals("/api/foreign/stream")) {
                        // an event stream that lasts: the stop does not wait for it
                        status.invoke(args[1], 200);
                        contentType.invoke(args[1], "text/event-stream");
                        ((java.io.PrintWriter) writer.invoke(args[1])).write(": open\n\n");
                        flush.invoke(args[1]);
                        Thread.sleep(8_000);
                    } else if (path.startsWith("/api/foreign/")) {
                        if (path.endsWith("/slow")) {
                            Thread.sleep(3_000);
                        }
                        status.invoke(args[1], 200);
                        ((java.io.PrintWriter) writer.invoke(args[1]))
                                .write(path.endsWith("/slow") ? "slow" : "foreign");
                    } else {
                        pass.invoke(args[2], args[0], args[1]);
                    }
                    return null;
                }
                case "hashCode" -> {
                    return System.identityHashCode(proxy);
                }
                case "equals" -> {
                    return proxy == args[0];
                }
                case "toString" -> {
                    return "foreign filter";
                }
                default -> {
                    return null;
                }
            }
        };
        Object proxy = Proxy.newProxyInstance(filter.getClassLoader(), new Class<?>[] {filter}, h);
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("osgi.http.whiteboard.filter.pattern", "/*");
        props.put("osgi.http.whiteboard.context.select", "(osgi.http.whiteboard.context.name=*)");
        props.put("osgi.http.whiteboard.filter.asyncSupported", Boolean.TRUE);
        props.put("service.ranking", Integer.MAX_VALUE);
        foreign.registerService(filter.getName(), proxy, props);
    }

    /** A Jetty handler for the kernel's edge, named {@code name}, answering {@code /edge-probe} with {@code body}. */
    private static void registerEdgeHandler(Bundle kernel, BundleContext foreign, String name, String body, int ranking)
            throws Exception {
        Class<?> handler = kernel.loadClass("org.eclipse.jetty.server.Request$Handler");
        Class<?> request = kernel.loadClass("org.eclipse.jetty.server.Request");
        Class<?> response = kernel.loadClass("org.eclipse.jetty.server.Response");
        Class<?> callback = kernel.loadClass("org.eclipse.jetty.util.Callback");
        Class<?> httpUri = kernel.loadClass("org.eclipse.jetty.http.HttpURI");
        Method uri = request.getMethod("getHttpURI");
        Method path = httpUri.getMethod("getPath");
        Method status = response.getMethod("setStatus", int.class);
        Method write = response.getMethod("write", boolean.class, ByteBuffer.class, callback);
        InvocationHandler h = (proxy, m, args) -> {
            switch (m.getName()) {
                case "handle" -> {
                    if (!"/edge-probe".equals(path.invoke(uri.invoke(args[0])))) {
                        return false;
                    }
                    status.invoke(args[1], 200);
                    write.invoke(args[1], true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), args[2]);
                    return true;
                }
                case "getInvocationType" -> {
                    return m.getReturnType().getEnumConstants()[0];
                }
                case "hashCode" -> {
                    return System.identityHashCode(proxy);
                }
                case "equals" -> {
                    return proxy == args[0];
                }
                case "toString" -> {
                    return "edge handler " + name;
                }
                default -> {
                    return null;
                }
            }
        };
        Object proxy = Proxy.newProxyInstance(handler.getClassLoader(), new Class<?>[] {handler}, h);
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("atrium.edge.handler", name);
        props.put("service.ranking", ranking);
        foreign.registerService(handler.getName(), proxy, props);
    }
}
