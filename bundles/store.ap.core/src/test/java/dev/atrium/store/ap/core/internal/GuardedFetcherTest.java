package dev.atrium.store.ap.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.TestPostgres;
import dev.atrium.store.ap.api.RemoteDocuments.RemoteException;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The guarded fetcher against a real HTTP server on loopback, with the kernel's real egress guard. */
class GuardedFetcherTest {

    @TempDir
    static Path dir;

    private static TestPostgres database;
    private static Peer peer;
    private static ActorKeyStore keys;
    private static GuardedFetcher fetcher;

    @BeforeAll
    static void start() throws Exception {
        database = TestPostgres.create("atrium_ap_fetch");
        peer = new Peer(dir);
        keys = new ActorKeyStore(
                database.dataSource(),
                database.migrations(ActorKeyStore.class, "/db/migration/V1__federation_core.sql"),
                TestPostgres.noBundleContext());
        fetcher = new GuardedFetcher(Peer.guard(true), keys, Peer.fetchTimeout(3));
    }

    @AfterAll
    static void stop() throws Exception {
        fetcher.stop();
        peer.close();
        database.close();
    }

    private static int status(URI uri) {
        return assertThrows(RemoteException.class, () -> fetcher.fetch(uri, null))
                .status();
    }

    @Test
    void anActivityPubDocumentIsFetchedAndARedirectFollowed() throws Exception {
        peer.routes.put(
                "/doc",
                ex -> Peer.Response.json(
                        "application/activity+json; charset=utf-8", "{\"id\":\"x\",\"type\":\"Note\"}"));
        peer.routes.put("/moved", ex -> new Peer.Response(301, null, new byte[0], Map.of("Location", "/doc")));
        assertEquals(
                "Note",
                fetcher.fetch(URI.create(peer.base() + "/moved"), null)
                        .path("type")
                        .asText());
        peer.routes.put(
                "/ld",
                ex -> Peer.Response.json(
                        "application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\"",
                        "{\"type\":\"Group\"}"));
        assertEquals(
                "Group",
                fetcher.fetch(URI.create(peer.base() + "/ld"), null)
                        .path("type")
                        .asText());
    }

    @Test
    void aSignedFetchCarriesTheLocalActorsSignature() throws Exception {
        peer.routes.put("/private", ex -> Peer.Response.json("application/activity+json", "{\"type\":\"Collection\"}"));
        fetcher.fetch(URI.create(peer.base() + "/private"), "https://atrium.example/ap/stores/main");
        Peer.Received got = peer.received.stream()
                .filter(r -> r.path().equals("/private"))
                .reduce((a, b) -> b)
                .orElseThrow();
        String signature = got.headers().get("Signature").get(0);
        assertTrue(signature.contains("keyId=\"https://atrium.example/ap/stores/main#main-key\""), signature);
        assertTrue(signature.contains("headers=\"(request-target) host date\""), signature);
    }

    @Test
    void aPrivateOrMetadataAddressIsRefusedAlsoBehindARedirect() throws Exception {
        for (String target : new String[] {
            "http://169.254.169.254/latest/meta-data",
            "http://10.0.0.1/",
            "http://[::ffff:10.0.0.1]/",
            "http://0x7f000001.internal/",
            "http://store.local/",
            "http://2130706433/",
            "file:///etc/passwd"
        }) {
            assertEquals(400, status(URI.create(target)), target);
            peer.routes.put("/hop", ex -> new Peer.Response(302, null, new byte[0], Map.of("Location", target)));
            assertEquals(400, status(URI.create(peer.base() + "/hop")), "behind a redirect: " + target);
        }
    }

    @Test
    void loopbackIsRefusedWithoutTheTestFlag() throws Exception {
        GuardedFetcher production = new GuardedFetcher(Peer.guard(false), keys, Peer.fetchTimeout(2));
        try {
            peer.routes.put("/doc2", ex -> Peer.Response.json("application/activity+json", "{}"));
            RemoteException e = assertThrows(
                    RemoteException.class, () -> production.fetch(URI.create(peer.base() + "/doc2"), null));
            assertEquals(400, e.status());
            assertTrue(e.getMessage().startsWith("refused"), e.getMessage());
        } finally {
            production.stop();
        }
    }

    @Test
    void hostileAnswersAreBoundedAndEndIn502Or504() throws Exception {
        peer.routes.put("/html", ex -> Peer.Response.json("text/html", "<html></html>"));
        assertEquals(502, status(URI.create(peer.base() + "/html")));
        peer.routes.put("/broken", ex -> Peer.Response.json("application/activity+json", "{\"id\":"));
        assertEquals(502, status(URI.create(peer.base() + "/broken")));
        peer.routes.put("/array", ex -> Peer.Response.json("application/activity+json", "[1,2]"));
        assertEquals(502, status(URI.create(peer.base() + "/array")));
        byte[] huge = new byte[GuardedFetcher.MAX_BYTES + 10];
        java.util.Arrays.fill(huge, (byte) ' ');
        huge[0] = '{';
        huge[huge.length - 1] = '}';
        peer.routes.put("/huge", ex -> new Peer.Response(200, "application/activity+json", huge, Map.of()));
        RemoteException tooBig =
                assertThrows(RemoteException.class, () -> fetcher.fetch(URI.create(peer.base() + "/huge"), null));
        assertEquals(502, tooBig.status());
        assertTrue(tooBig.getMessage().contains("larger"), tooBig.getMessage());
        peer.routes.put("/loop", ex -> new Peer.Response(302, null, new byte[0], Map.of("Location", "/loop")));
        assertEquals(502, status(URI.create(peer.base() + "/loop")));
        peer.routes.put("/gone", ex -> new Peer.Response(410, "text/plain", "gone".getBytes(), Map.of()));
        assertEquals(502, status(URI.create(peer.base() + "/gone")));
        peer.routes.put("/slow", ex -> {
            try {
                Thread.sleep(3000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Peer.Response.json("application/activity+json", "{}");
        });
        // a fetcher with the shortest deadline (1 s): the answer comes after 3 s, so a deadline that does not hold
        // takes 3 s or more (the others' 3 s deadline made the test wait them out)
        GuardedFetcher quick = new GuardedFetcher(Peer.guard(true), keys, Peer.fetchTimeout(1));
        try {
            long started = System.nanoTime();
            assertEquals(
                    504,
                    assertThrows(RemoteException.class, () -> quick.fetch(URI.create(peer.base() + "/slow"), null))
                            .status());
            assertTrue(System.nanoTime() - started < 2_500_000_000L, "the deadline did not hold");
        } finally {
            quick.stop();
        }
    }
}
