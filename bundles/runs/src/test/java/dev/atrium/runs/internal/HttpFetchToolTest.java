package dev.atrium.runs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.runs.api.AgentTool;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The fetch tool against a real HTTP server on loopback; the guard decides which names lead where. */
class HttpFetchToolTest {

    static final AgentTool.Context GRANTED =
            new AgentTool.Context("run", "thread", "space", "principal", Set.of("egress.http"));
    /** A name no resolver knows (RFC 6761): only the guard's answer can lead a connection anywhere. */
    static final String PINNED = "rebind.invalid";

    private HttpServer target;
    private final List<HttpFetchTool> tools = new CopyOnWriteArrayList<>();
    private final List<String> hosts = new CopyOnWriteArrayList<>();
    private final List<String> cookies = new CopyOnWriteArrayList<>();
    private final CountDownLatch trickling = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void serve() throws IOException {
        target = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        target.setExecutor(Executors.newCachedThreadPool());
        target.createContext("/page", ex -> {
            hosts.add(ex.getRequestHeaders().getFirst("Host"));
            cookies.add(String.valueOf(ex.getRequestHeaders().getFirst("Cookie")));
            byte[] b = "the page".getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "text/plain");
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        target.createContext("/moved", ex -> {
            hosts.add(ex.getRequestHeaders().getFirst("Host"));
            ex.getResponseHeaders()
                    .set(
                            "Location",
                            ex.getRequestURI().getQuery() == null
                                    ? "/page"
                                    : ex.getRequestURI().getQuery());
            ex.sendResponseHeaders(302, -1);
            ex.close();
        });
        target.createContext("/loop", ex -> {
            ex.getResponseHeaders().set("Location", "/loop");
            ex.sendResponseHeaders(302, -1);
            ex.close();
        });
        target.createContext("/cookie", ex -> {
            ex.getResponseHeaders().set("Set-Cookie", "sid=someone-elses-session; Path=/");
            ex.sendResponseHeaders(204, -1);
            ex.close();
        });
        target.createContext("/big", ex -> {
            byte[] b = "y".repeat(200_000).getBytes(StandardCharsets.US_ASCII);
            ex.sendResponseHeaders(200, b.length);
            try {
                ex.getResponseBody().write(b);
            } catch (IOException e) {
                // the client stopped at its cap
            }
            ex.close();
        });
        // /dir/...?to=X redirects to X (decoded, written as it is); ?choices answers 300; anything else says where it
        // is
        target.createContext("/dir/", ex -> {
            String q = ex.getRequestURI().getRawQuery();
            if (q != null && q.startsWith("to=")) {
                ex.getResponseHeaders()
                        .set("Location", java.net.URLDecoder.decode(q.substring(3), StandardCharsets.UTF_8));
                ex.sendResponseHeaders(302, -1);
            } else if ("choices".equals(q)) {
                ex.getResponseHeaders().set("Location", "/page");
                ex.sendResponseHeaders(300, -1);
            } else {
                byte[] b = ("at " + ex.getRequestURI().getRawPath() + (q == null ? "" : "?" + q))
                        .getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(200, b.length);
                ex.getResponseBody().write(b);
            }
            ex.close();
        });
        target.createContext("/slow", ex -> {
            ex.sendResponseHeaders(200, 0);
            trickling.countDown();
            try {
                for (int i = 0; i < 60 && release.getCount() > 0; i++) {
                    ex.getResponseBody().write('x');
                    ex.getResponseBody().flush();
                    release.await(200, TimeUnit.MILLISECONDS);
                }
            } catch (IOException | InterruptedException e) {
                // the client went away
            }
            ex.close();
        });
        target.start();
    }

    @AfterEach
    void stop() throws Exception {
        for (HttpFetchTool tool : tools) {
            tool.deactivate();
        }
        release.countDown();
        target.stop(0);
        ((java.util.concurrent.ExecutorService) target.getExecutor()).shutdownNow();
    }

    /** A tool stopped after the test. */
    private HttpFetchTool tool(EgressGuard guard, long deadlineSeconds) throws Exception {
        HttpFetchTool tool = new HttpFetchTool(guard, TimeUnit.SECONDS.toNanos(deadlineSeconds));
        tools.add(tool);
        return tool;
    }

    private String url(String host, String path) {
        return "http://" + host + ":" + target.getAddress().getPort() + path;
    }

    private static String args(String url) {
        return "{\"url\":\"" + url + "\"}";
    }

    /** Allows the pinned name and the loopback literal (both lead to loopback), refuses everything else. */
    private static List<InetAddress> loopbackOnly(java.net.URI uri) {
        if (PINNED.equals(uri.getHost()) || "127.0.0.1".equals(uri.getHost())) {
            return List.of(InetAddress.getLoopbackAddress());
        }
        throw ApiException.badRequest("the URL may not be fetched: " + uri.getHost() + " is not allowed here");
    }

    @Test
    void aFetchConnectsToTheAddressesTheGuardApprovedAndNowhereElse() throws Exception {
        HttpFetchTool tool = tool(HttpFetchToolTest::loopbackOnly, 10);
        String result = tool.execute(GRANTED, args(url(PINNED, "/page")));
        assertTrue(result.startsWith("status: 200\ncontent-type: text/plain\n\n"), result);
        assertTrue(result.endsWith("the page"), result);
        assertEquals(
                List.of(PINNED + ":" + target.getAddress().getPort()),
                hosts,
                "the request names the host it asked for");
    }

    @Test
    void aNameWhoseAnswerChangesAfterTheCheckIsNotConnectedTo() throws Exception {
        // DNS rebinding: the first answer is public, every later one private
        AtomicInteger answers = new AtomicInteger();
        EgressGuard rebinding = uri -> {
            if (answers.getAndIncrement() == 0) {
                return List.of(InetAddress.getLoopbackAddress());
            }
            throw ApiException.badRequest(
                    "the URL may not be fetched: " + uri.getHost() + " resolves to 10.0.0.1; a private address");
        };
        HttpFetchTool tool = tool(rebinding, 10);
        IOException refused =
                assertThrows(IOException.class, () -> tool.execute(GRANTED, args(url("127.0.0.1", "/page"))));
        assertTrue(refused.getMessage().startsWith("refused: "), refused.getMessage());
        assertTrue(refused.getMessage().contains("10.0.0.1"), refused.getMessage());
        assertEquals(List.of(), hosts, "nothing was connected to");
    }

    @Test
    void redirectsPassTheGuardAndEndAfterFive() throws Exception {
        HttpFetchTool tool = tool(HttpFetchToolTest::loopbackOnly, 10);
        assertTrue(tool.execute(GRANTED, args(url(PINNED, "/moved"))).endsWith("the page"));
        assertEquals(2, hosts.size());

        String elsewhere = "http://example.com:" + target.getAddress().getPort() + "/page";
        IOException refused =
                assertThrows(IOException.class, () -> tool.execute(GRANTED, args(url(PINNED, "/moved?" + elsewhere))));
        assertTrue(refused.getMessage().contains("example.com is not allowed"), refused.getMessage());

        IOException tooMany = assertThrows(IOException.class, () -> tool.execute(GRANTED, args(url(PINNED, "/loop"))));
        assertEquals("too many redirects", tooMany.getMessage());
    }

    @Test
    void theDeadlineCoversATricklingBody() throws Exception {
        HttpFetchTool tool = tool(HttpFetchToolTest::loopbackOnly, 1);
        long start = System.nanoTime();
        IOException late = assertThrows(IOException.class, () -> tool.execute(GRANTED, args(url(PINNED, "/slow"))));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals("the fetch took longer than 1 seconds", late.getMessage());
        assertTrue(millis < 5_000, "ended after " + millis + " ms");
    }

    @Test
    void aRunWithoutTheGrantReachesNothing() throws Exception {
        HttpFetchTool tool = tool(HttpFetchToolTest::loopbackOnly, 10);
        AgentTool.Context withoutEgress =
                new AgentTool.Context("run", "thread", "space", "principal", Set.of("storage.read"));
        assertThrows(IOException.class, () -> tool.execute(withoutEgress, args(url(PINNED, "/page"))));
        assertEquals(List.of(), hosts);
    }

    @Test
    void aCookieOneFetchReceivedIsNeverSentOnAnother() throws Exception {
        HttpFetchTool tool = tool(HttpFetchToolTest::loopbackOnly, 10);
        tool.execute(GRANTED, args(url(PINNED, "/cookie")));
        tool.execute(GRANTED, args(url(PINNED, "/page")));
        assertEquals(List.of("null"), cookies, "the second fetch (another user's, perhaps) carries no cookie");
    }

    @Test
    void aBodyIsCutAtItsCap() throws Exception {
        HttpFetchTool tool = tool(HttpFetchToolTest::loopbackOnly, 10);
        String result = tool.execute(GRANTED, args(url(PINNED, "/big")));
        String body = result.substring(result.indexOf("\n\n") + 2);
        assertEquals(HttpFetchTool.MAX_BYTES, body.length());
    }

    @Test
    void redirectsResolveAsRfc3986SaysAndOnlyThoseThatNameTheResourceAreFollowed() throws Exception {
        HttpFetchTool tool = tool(HttpFetchToolTest::loopbackOnly, 10);
        // a query-only reference keeps the path (java.net.URI alone would go to /dir/?y=2)
        assertTrue(
                tool.execute(GRANTED, args(url(PINNED, "/dir/x?to=%3Fy%3D2"))).endsWith("at /dir/x?y=2"));
        assertTrue(tool.execute(GRANTED, args(url(PINNED, "/dir/x?to=page"))).endsWith("at /dir/page"));
        // a raw space and a non-ASCII letter in Location are sent percent-encoded, as browsers do
        String spaced = tool.execute(GRANTED, args(url(PINNED, "/dir/x?to=%2Fdir%2Fa%20b%C3%A9")));
        assertTrue(spaced.endsWith("at /dir/a%20b%C3%A9"), spaced);
        // 300 lists choices: the model gets it as it is
        assertTrue(tool.execute(GRANTED, args(url(PINNED, "/dir/x?choices"))).startsWith("status: 300\n"));
        assertEquals(List.of(), hosts, "/page was never reached");
    }

    @Test
    void anInterruptWhileTheBodyArrivesEndsTheFetchAsAnInterruption() throws Exception {
        HttpFetchTool tool = tool(HttpFetchToolTest::loopbackOnly, 30);
        java.util.concurrent.atomic.AtomicReference<Throwable> outcome =
                new java.util.concurrent.atomic.AtomicReference<>();
        Thread worker = new Thread(() -> {
            try {
                tool.execute(GRANTED, args(url(PINNED, "/slow")));
                outcome.set(new AssertionError("the fetch ended normally"));
            } catch (Throwable t) {
                outcome.set(t);
            }
        });
        worker.start();
        assertTrue(trickling.await(10, TimeUnit.SECONDS));
        Thread.sleep(300); // the body is being read
        worker.interrupt();
        worker.join(5_000);
        assertTrue(outcome.get() instanceof InterruptedException, String.valueOf(outcome.get()));
    }

    @Test
    void stoppingTheToolLeavesNoThreadOfItsOwn() throws Exception {
        HttpFetchTool tool = tool(HttpFetchToolTest::loopbackOnly, 10);
        tool.execute(GRANTED, args(url(PINNED, "/page")));
        assertTrue(threadsOfTheTool() > 0);
        tool.deactivate();
        for (int i = 0; i < 50 && threadsOfTheTool() > 0; i++) {
            Thread.sleep(100);
        }
        assertEquals(0, threadsOfTheTool());
    }

    private static long threadsOfTheTool() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(HttpFetchTool.THREADS))
                .count();
    }
}
