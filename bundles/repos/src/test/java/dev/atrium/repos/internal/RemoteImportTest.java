package dev.atrium.repos.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.eclipse.jgit.transport.PacketLineOut;
import org.eclipse.jgit.transport.RefAdvertiser;
import org.eclipse.jgit.transport.UploadPack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A remote import against a real Git smart-HTTP server on loopback (JGit's {@link UploadPack} behind an HTTP
 * server); the guard decides which names lead where, and only its answers can lead a connection anywhere.
 */
class RemoteImportTest {

    /** A name no resolver knows (RFC 6761): a connection reaches it only through the guard's answer. */
    static final String REMOTE = "remote.invalid";

    static final RemoteImport.Limits LIMITS = new RemoteImport.Limits(1L << 30, 5_000_000, 30);

    @TempDir
    Path tmp;

    private Repository upstream;
    private ObjectId head;
    private HttpServer server;
    private ExecutorService serving;
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private final AtomicBoolean advertised = new AtomicBoolean();
    private final List<String> acceptEncodings = new CopyOnWriteArrayList<>();
    /** Once the remote has advertised its refs, later requests wait this long before they are answered. */
    private volatile long stallAfterAdvertisingMillis;

    @BeforeEach
    void serve() throws Exception {
        try (Git git = Git.init()
                .setDirectory(tmp.resolve("upstream").toFile())
                .setInitialBranch("main")
                .call()) {
            Files.writeString(tmp.resolve("upstream").resolve("README"), "hello\n");
            git.add().addFilepattern("README").call();
            head = git.commit()
                    .setMessage("first")
                    .setAuthor("A", "a@example.org")
                    .setCommitter("A", "a@example.org")
                    .setSign(false)
                    .call()
                    .getId();
            upstream = git.getRepository();
        }
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        serving = Executors.newCachedThreadPool();
        server.setExecutor(serving);
        server.createContext("/repo.git/", this::smartHttp);
        server.createContext("/bad.git/", ex -> {
            ex.getResponseHeaders().set("Location", "http://a b/x/info/refs");
            ex.sendResponseHeaders(302, -1);
            ex.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
        serving.shutdownNow();
        upstream.close();
    }

    /** Git's smart HTTP protocol (v0), served by JGit's upload-pack; every connection is closed after one exchange. */
    private void smartHttp(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        requests.add(ex.getRequestMethod() + " " + path);
        acceptEncodings.add(String.valueOf(ex.getRequestHeaders().getFirst("Accept-Encoding")));
        ex.getResponseHeaders().set("Connection", "close");
        if (advertised.get() && stallAfterAdvertisingMillis > 0) {
            try {
                Thread.sleep(stallAfterAdvertisingMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        UploadPack up = new UploadPack(upstream);
        up.setBiDirectionalPipe(false);
        if (path.endsWith("/info/refs")) {
            ex.getResponseHeaders().set("Content-Type", "application/x-git-upload-pack-advertisement");
            // as real servers do: gzip for a client that asks for it
            boolean gzip = "gzip".equals(ex.getRequestHeaders().getFirst("Accept-Encoding"));
            if (gzip) {
                ex.getResponseHeaders().set("Content-Encoding", "gzip");
            }
            ex.sendResponseHeaders(200, 0);
            try (OutputStream out = gzip ? new GZIPOutputStream(ex.getResponseBody()) : ex.getResponseBody()) {
                PacketLineOut pck = new PacketLineOut(out);
                pck.writeString("# service=git-upload-pack\n");
                pck.end();
                up.sendAdvertisedRefs(new RefAdvertiser.PacketLineOutRefAdvertiser(pck));
            }
            advertised.set(true);
        } else if (path.endsWith("/git-upload-pack")) {
            InputStream in = ex.getRequestBody();
            if ("gzip".equals(ex.getRequestHeaders().getFirst("Content-Encoding"))) {
                in = new GZIPInputStream(in);
            }
            ex.getResponseHeaders().set("Content-Type", "application/x-git-upload-pack-result");
            ex.sendResponseHeaders(200, 0);
            try (OutputStream out = ex.getResponseBody()) {
                up.upload(in, out, null);
            }
        } else {
            ex.sendResponseHeaders(404, -1);
        }
        ex.close();
    }

    private URI remote(String host) {
        return URI.create("http://" + host + ":" + server.getAddress().getPort() + "/repo.git");
    }

    private Repository local() throws IOException {
        Repository r = new FileRepositoryBuilder()
                .setGitDir(tmp.resolve("local.git").toFile())
                .setBare()
                .build();
        r.create(true);
        return r;
    }

    private static ApiException refusedAs(String address) {
        return ApiException.badRequest("the URL may not be fetched: it resolves to " + address + "; a private address");
    }

    @Test
    void aCodeHostsArchiveUrlNamesOwnerRepositoryAndBranch() {
        var hosts = ArchiveImport.hosts(
                Repositories.DEFAULT_ARCHIVE_HOSTS + ", git.example:8443=https://x/{owner}/{repo}/{ref}");
        assertEquals(
                "https://codeload.github.com/octo/hello/tar.gz/refs/heads/main",
                ArchiveImport.url(URI.create("https://github.com/octo/hello.git"), "main", hosts)
                        .orElseThrow()
                        .toString());
        assertEquals(
                "https://gitlab.com/group/sub/app/-/archive/dev%2Fx/app-dev%2Fx.tar.gz",
                ArchiveImport.url(URI.create("https://GitLab.com/group/sub/app/"), "dev/x", hosts)
                        .orElseThrow()
                        .toString());
        assertEquals(
                "https://x/o/r/main",
                ArchiveImport.url(URI.create("https://git.example:8443/o/r"), "main", hosts)
                        .orElseThrow()
                        .toString());
        assertTrue(
                ArchiveImport.url(URI.create("https://git.example/o/r"), "main", hosts)
                        .isEmpty(),
                "port differs");
        assertTrue(ArchiveImport.url(URI.create("https://example.org/o/r"), "main", hosts)
                .isEmpty());
        assertTrue(ArchiveImport.url(URI.create("https://github.com/onlyname"), "main", hosts)
                .isEmpty());
    }

    @Test
    void theDefaultBranchIsWhatHeadsSymrefNames() {
        String first =
                "0000000000000000000000000000000000000000 HEAD\0multi_ack symref=HEAD:refs/heads/trunk agent=x\n";
        assertEquals("trunk", RemoteImport.defaultBranch(first.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        assertEquals(
                "main", RemoteImport.defaultBranch("x\0multi_ack\n".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    @Test
    void everyConnectionOfTheImportGoesToTheAddressesTheGuardApproved() throws Exception {
        EgressGuard guard = uri -> {
            if (REMOTE.equals(uri.getHost())) {
                return List.of(InetAddress.getLoopbackAddress());
            }
            throw refusedAs(uri.getHost());
        };
        try (Repository into = local()) {
            RemoteImport.Outcome outcome = RemoteImport.run(guard, remote(REMOTE), null, LIMITS, into);
            assertFalse(outcome.partial());
            assertNotNull(into.exactRef("refs/heads/main"), "the branch was fetched");
            assertEquals(head, into.exactRef("refs/heads/main").getObjectId());
            assertTrue(into.getObjectDatabase().has(head));
        }
        assertTrue(
                requests.stream().anyMatch(r -> r.startsWith("POST ") && r.endsWith("/git-upload-pack")),
                "JGit's fetch went through the guarded client: " + requests);
        assertEquals("null", acceptEncodings.get(0), "the probe reads the advertisement as it is");
        assertEquals("gzip", acceptEncodings.get(1), "JGit asks for gzip and decodes it itself");
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (importThreads() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(0, importThreads(), "the import's client stopped with its threads");
    }

    private static long importThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("atrium-git-import"))
                .count();
    }

    @Test
    void aNameWhoseAnswerChangesBeforeTheProbeConnectsIsNotConnectedTo() throws Exception {
        AtomicBoolean checked = new AtomicBoolean();
        EgressGuard rebinding = uri -> {
            if (checked.compareAndSet(false, true)) {
                return List.of(InetAddress.getLoopbackAddress());
            }
            throw refusedAs("10.0.0.1");
        };
        try (Repository into = local()) {
            ApiException refused = assertThrows(
                    ApiException.class, () -> RemoteImport.run(rebinding, remote("127.0.0.1"), null, LIMITS, into));
            assertEquals(400, refused.status());
            assertTrue(refused.getMessage().contains("10.0.0.1"), refused.getMessage());
        }
        assertEquals(List.of(), requests, "nothing was connected to");
    }

    @Test
    void aNameWhoseAnswerChangesAfterTheProbeIsNotFetchedFrom() throws Exception {
        // the name leads to the remote until it has answered the probe, and to a private address afterwards
        EgressGuard rebinding = uri -> {
            if (!advertised.get()) {
                return List.of(InetAddress.getLoopbackAddress());
            }
            throw refusedAs("10.0.0.1");
        };
        try (Repository into = local()) {
            ApiException refused = assertThrows(
                    ApiException.class, () -> RemoteImport.run(rebinding, remote(REMOTE), null, LIMITS, into));
            assertEquals(400, refused.status());
            assertTrue(refused.getMessage().contains("10.0.0.1"), refused.getMessage());
            assertEquals(null, into.exactRef("refs/heads/main"), "nothing was fetched");
        }
        assertEquals(List.of("GET /repo.git/info/refs"), requests, "only the probe reached the remote");
    }

    @Test
    void aRemoteThatStopsAnsweringEndsTheImportSayingSo() throws Exception {
        stallAfterAdvertisingMillis = 3_000;
        EgressGuard loopback = uri -> List.of(InetAddress.getLoopbackAddress());
        try (Repository into = local()) {
            long start = System.nanoTime();
            ApiException late = assertThrows(
                    ApiException.class,
                    () -> RemoteImport.run(
                            loopback, remote(REMOTE), null, new RemoteImport.Limits(1L << 30, 5_000_000, 1), into));
            assertEquals(400, late.status());
            // JGit words a SocketTimeoutException as its own "Connection time out: <host>"
            assertTrue(late.getMessage().contains("time out: " + REMOTE), late.getMessage());
            assertTrue(System.nanoTime() - start < 2_900_000_000L, "the import gave up at its timeout");
        }
    }

    @Test
    void aRedirectToAnInvalidUrlIsABadRequest() throws Exception {
        EgressGuard loopback = uri -> List.of(InetAddress.getLoopbackAddress());
        URI bad = URI.create("http://" + REMOTE + ":" + server.getAddress().getPort() + "/bad.git");
        try (Repository into = local()) {
            ApiException refused =
                    assertThrows(ApiException.class, () -> RemoteImport.run(loopback, bad, null, LIMITS, into));
            assertEquals(400, refused.status());
            assertTrue(refused.getMessage().contains("invalid URL"), refused.getMessage());
        }
    }

    @Test
    void aRemoteThatDoesNotSpeakGitIsRefusedByName() throws Exception {
        EgressGuard loopback = uri -> List.of(InetAddress.getLoopbackAddress());
        URI wrong = URI.create("http://" + REMOTE + ":" + server.getAddress().getPort() + "/nothing.git");
        try (Repository into = local()) {
            ApiException refused =
                    assertThrows(ApiException.class, () -> RemoteImport.run(loopback, wrong, null, LIMITS, into));
            assertEquals(400, refused.status());
            assertTrue(refused.getMessage().contains("answered 404"), refused.getMessage());
        }
    }
}
