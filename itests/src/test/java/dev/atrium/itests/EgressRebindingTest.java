package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.atrium.itests.AtriumServer.User;
import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * DNS rebinding against the egress guard: a server of its own resolves outbound names with a DNS server the test
 * controls ({@code ATRIUM_EGRESS_DNS_SERVER}). A name that first resolves to an allowed address and then to a private
 * one is refused and nothing connects to either; the same name answering the allowed address every time is fetched.
 * (Loopback is the allowed address here only because the test server allows it.)
 */
class EgressRebindingTest {

    /** A DNS server on loopback answering A queries for every name with {@code answers.get()} in turn. */
    private static final class StubDns implements AutoCloseable {
        final DatagramSocket socket;
        final AtomicInteger aQueries = new AtomicInteger();
        final AtomicReference<byte[][]> answers = new AtomicReference<>();
        private final Thread thread;

        StubDns() throws Exception {
            socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            thread = new Thread(this::serve, "stub-dns");
            thread.setDaemon(true);
            thread.start();
        }

        private void serve() {
            byte[] buf = new byte[512];
            while (!socket.isClosed()) {
                try {
                    DatagramPacket p = new DatagramPacket(buf, buf.length);
                    socket.receive(p);
                    ByteBuffer q = ByteBuffer.wrap(buf, 0, p.getLength());
                    int pos = 12;
                    while (buf[pos] != 0) {
                        pos += (buf[pos] & 0xff) + 1;
                    }
                    int qtype = q.getShort(pos + 1) & 0xffff;
                    int questionEnd = pos + 5;
                    byte[] address = null;
                    if (qtype == 1) {
                        byte[][] seq = answers.get();
                        int n = aQueries.getAndIncrement();
                        address = seq[Math.min(n, seq.length - 1)];
                    }
                    ByteBuffer r = ByteBuffer.allocate(512);
                    r.putShort(q.getShort(0))
                            .putShort((short) 0x8180)
                            .putShort((short) 1)
                            .putShort((short) (address == null ? 0 : 1))
                            .putShort((short) 0)
                            .putShort((short) 0);
                    r.put(buf, 12, questionEnd - 12);
                    if (address != null) {
                        r.putShort((short) 0xc00c)
                                .putShort((short) 1)
                                .putShort((short) 1)
                                .putInt(0)
                                .putShort((short) 4)
                                .put(address);
                    }
                    socket.send(new DatagramPacket(r.array(), r.position(), p.getSocketAddress()));
                } catch (Exception e) {
                    if (socket.isClosed()) {
                        return;
                    }
                }
            }
        }

        @Override
        public void close() {
            socket.close();
        }
    }

    @Test
    void aNameThatRebindsToAPrivateAddressBetweenCheckAndConnectIsRefused() throws Throwable {
        byte[] loopback = {127, 0, 0, 1};
        byte[] privateAddress = {10, 0, 0, 1};
        HttpServer store = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        AtomicInteger hits = new AtomicInteger();
        int port = store.getAddress().getPort();
        String actor = "http://rebind.example.com:" + port + "/a";
        store.createContext("/", ex -> {
            hits.incrementAndGet();
            byte[] body = ("{\"id\":\"" + actor
                            + "\",\"type\":[\"Service\",\"Store\"],\"name\":\"rebinding\",\"outbox\":\"" + actor
                            + "/outbox\",\"inventory\":\"" + actor + "/inventory\"}")
                    .getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/activity+json");
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
        store.start();
        StubDns dns = new StubDns();
        AtriumServer server = null;
        try {
            server = AtriumServer.launch(
                    Files.createTempDirectory("atrium-rebind-"),
                    TestDatabase.create(),
                    Map.of("ATRIUM_EGRESS_DNS_SERVER", "127.0.0.1:" + dns.socket.getLocalPort()));
            User u = server.newUser();
            String registry = "/api/spaces/" + u.defaultSpaceId() + "/store-registry";

            // first answer allowed, every later one private: whichever lookup is the connection's, it is checked
            dns.answers.set(new byte[][] {loopback, privateAddress});
            BadInputTest.assertSpecError(u.http().post(registry, Map.of("identifier", actor)), 400, "BAD_REQUEST");
            assertTrue(
                    dns.aQueries.get() >= 2, "the name was looked up again for the connection: " + dns.aQueries.get());
            assertEquals(0, hits.get(), "nothing was fetched");

            // the same name keeping its allowed answer is fetched, from the address the guard approved
            dns.aQueries.set(0);
            dns.answers.set(new byte[][] {loopback});
            Http.Reply ok = u.http().post(registry, Map.of("identifier", actor));
            assertEquals(201, ok.status(), ok.body());
            assertTrue(hits.get() >= 1);

            // a name whose first answer is private is refused at the check
            dns.aQueries.set(0);
            hits.set(0);
            dns.answers.set(new byte[][] {privateAddress});
            BadInputTest.assertSpecError(
                    u.http().post(registry, Map.of("identifier", "http://private.example.com:" + port + "/a")),
                    400,
                    "BAD_REQUEST");
            assertEquals(0, hits.get());
        } finally {
            store.stop(0);
            dns.close();
            if (server != null) {
                server.close();
            }
        }
    }
}
