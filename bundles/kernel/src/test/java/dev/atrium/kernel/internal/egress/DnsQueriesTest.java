package dev.atrium.kernel.internal.egress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The one DNS client against a DNS server on loopback speaking RFC 1035 over UDP. */
class DnsQueriesTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private final DnsQueries dns = new DnsQueries();
    private DatagramSocket server;
    private final AtomicBoolean silent = new AtomicBoolean();
    private final AtomicBoolean refusing = new AtomicBoolean();

    @BeforeEach
    void start() throws Exception {
        server = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread t = new Thread(
                () -> {
                    while (!server.isClosed()) {
                        try {
                            byte[] buf = new byte[512];
                            DatagramPacket p = new DatagramPacket(buf, buf.length);
                            server.receive(p);
                            if (!silent.get()) {
                                byte[] reply = answer(p.getData(), p.getLength());
                                server.send(new DatagramPacket(reply, reply.length, p.getSocketAddress()));
                            }
                        } catch (IOException e) {
                            // closed
                        }
                    }
                },
                "test-dns");
        t.setDaemon(true);
        t.start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private String address() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    @Test
    void txtRecordsAreReadWithTheirStringsJoinedAndAMissingNameHasNone() throws Exception {
        assertEquals(
                List.of("atrium-verification=abc"), dns.txt(address(), "_atrium-challenge.shop.example.test", TIMEOUT));
        assertEquals(List.of("split across two strings"), dns.txt(address(), "split.example.test", TIMEOUT));
        assertEquals(List.of(), dns.txt(address(), "missing.example.test", TIMEOUT));
    }

    @Test
    void addressesAreTheAAndAaaaRecords() throws Exception {
        List<InetAddress> found = dns.addresses(address(), "shop.example.test", TIMEOUT);
        assertEquals(
                List.of("127.0.0.1", "0:0:0:0:0:0:0:1"),
                found.stream().map(InetAddress::getHostAddress).toList());
        assertEquals(List.of(), dns.addresses(address(), "missing.example.test", TIMEOUT));
    }

    @Test
    void aServerThatDoesNotAnswerOrAnswersAnErrorIsAnIoExceptionNamingIt() {
        silent.set(true);
        long started = System.nanoTime();
        IOException e =
                assertThrows(IOException.class, () -> dns.txt(address(), "shop.example.test", Duration.ofMillis(500)));
        assertTrue(e.getMessage().contains(String.valueOf(server.getLocalPort())), e.getMessage());
        assertTrue(System.nanoTime() - started < 5_000_000_000L, "within its timeout");
        silent.set(false);
        refusing.set(true);
        IOException refused =
                assertThrows(IOException.class, () -> dns.addresses(address(), "shop.example.test", TIMEOUT));
        assertTrue(refused.getMessage().contains("REFUSED"), refused.getMessage());
    }

    @Test
    void serverSettingsAreHostPortOrBracketedV6AndAnythingElseIsRefused() {
        assertEquals(new InetSocketAddress("127.0.0.1", 53), DnsQueries.server("127.0.0.1"));
        assertEquals(new InetSocketAddress("127.0.0.1", 5353), DnsQueries.server(" 127.0.0.1:5353 "));
        assertEquals(new InetSocketAddress("::1", 53), DnsQueries.server("::1"));
        assertEquals(new InetSocketAddress("::1", 5353), DnsQueries.server("[::1]:5353"));
        for (String bad : List.of("127.0.0.1:0", "127.0.0.1:x", "[::1", "[::1]x", ":53")) {
            assertThrows(IllegalArgumentException.class, () -> DnsQueries.server(bad), bad);
        }
        assertThrows(IllegalArgumentException.class, () -> dns.txt(address(), "a..b", TIMEOUT), "not a host name");
    }

    /**
     * TXT "atrium-verification=abc" for _atrium-challenge.*, two strings for split.*, A 127.0.0.1 and AAAA ::1 for
     * anything, NXDOMAIN for missing.*, REFUSED for everything while {@link #refusing}.
     */
    private byte[] answer(byte[] q, int length) {
        int i = 12;
        StringBuilder name = new StringBuilder();
        while (q[i] != 0) {
            int n = q[i];
            name.append(name.length() == 0 ? "" : ".").append(new String(q, i + 1, n, StandardCharsets.US_ASCII));
            i += n + 1;
        }
        int type = ((q[i + 1] & 0xff) << 8) | (q[i + 2] & 0xff);
        int questionEnd = i + 5;
        boolean missing = name.toString().startsWith("missing.");
        int rcode = refusing.get() ? 5 : missing ? 3 : 0;
        boolean answered = rcode == 0 && (type == 1 || type == 28 || type == 16);
        ByteBuffer out = ByteBuffer.allocate(512);
        out.putShort(ByteBuffer.wrap(q, 0, length).getShort(0));
        out.putShort((short) (0x8180 | rcode));
        out.putShort((short) 1)
                .putShort((short) (answered ? 1 : 0))
                .putShort((short) 0)
                .putShort((short) 0);
        out.put(q, 12, questionEnd - 12);
        if (answered) {
            out.putShort((short) 0xc00c)
                    .putShort((short) type)
                    .putShort((short) 1)
                    .putInt(60);
            if (type == 16 && name.toString().startsWith("split.")) {
                byte[] a = "split across ".getBytes(StandardCharsets.US_ASCII);
                byte[] b = "two strings".getBytes(StandardCharsets.US_ASCII);
                out.putShort((short) (a.length + b.length + 2))
                        .put((byte) a.length)
                        .put(a)
                        .put((byte) b.length)
                        .put(b);
            } else if (type == 16) {
                byte[] txt = "atrium-verification=abc".getBytes(StandardCharsets.US_ASCII);
                out.putShort((short) (txt.length + 1)).put((byte) txt.length).put(txt);
            } else if (type == 28) {
                byte[] v6 = new byte[16];
                v6[15] = 1;
                out.putShort((short) 16).put(v6);
            } else {
                out.putShort((short) 4).put(new byte[] {127, 0, 0, 1});
            }
        }
        byte[] reply = new byte[out.position()];
        out.flip();
        out.get(reply);
        return reply;
    }
}
