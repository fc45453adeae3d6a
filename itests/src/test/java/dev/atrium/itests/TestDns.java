package dev.atrium.itests;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A DNS server on loopback (UDP) for tests: A 127.0.0.1 for every name (but {@link #noAddress}), TXT records from {@link #txt} (NXDOMAIN when
 * unset), and an empty answer for any other type (AAAA, CAA…), so resolvers that ask for those too (pebble) go on.
 */
final class TestDns implements AutoCloseable {

    final Map<String, String> txt = new ConcurrentHashMap<>();
    /** Names with no address: an empty answer to A. */
    final Set<String> noAddress = ConcurrentHashMap.newKeySet();

    private final DatagramSocket socket;

    TestDns() throws SocketException {
        socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread t = new Thread(this::serve, "test-dns");
        t.setDaemon(true);
        t.start();
    }

    int port() {
        return socket.getLocalPort();
    }

    @Override
    public void close() {
        socket.close();
    }

    private void serve() {
        byte[] buf = new byte[512];
        while (!socket.isClosed()) {
            try {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                socket.receive(p);
                byte[] reply = answer(p.getData(), p.getLength());
                socket.send(new DatagramPacket(reply, reply.length, p.getSocketAddress()));
            } catch (Exception e) {
                // closed, or a malformed query: the next one
            }
        }
    }

    private byte[] answer(byte[] q, int length) {
        int i = 12;
        StringBuilder name = new StringBuilder();
        while (q[i] != 0) {
            int n = q[i];
            name.append(name.length() == 0 ? "" : ".").append(new String(q, i + 1, n, StandardCharsets.US_ASCII));
            i += n + 1;
        }
        int type = ((q[i + 1] & 0xff) << 8) | (q[i + 2] & 0xff);
        String record = txt.get(name.toString().toLowerCase());
        boolean missing = type == 16 && record == null;
        boolean answered =
                (type == 1 && !noAddress.contains(name.toString().toLowerCase())) || (type == 16 && record != null);
        ByteBuffer out = ByteBuffer.allocate(512);
        out.putShort(ByteBuffer.wrap(q, 0, length).getShort(0));
        out.putShort((short) (0x8180 | (missing ? 3 : 0)));
        out.putShort((short) 1)
                .putShort((short) (answered ? 1 : 0))
                .putShort((short) 0)
                .putShort((short) 0);
        out.put(q, 12, i + 5 - 12);
        if (answered) {
            out.putShort((short) 0xc00c)
                    .putShort((short) type)
                    .putShort((short) 1)
                    .putInt(60);
            if (type == 16) {
                byte[] t = record.getBytes(StandardCharsets.US_ASCII);
                out.putShort((short) (t.length + 1)).put((byte) t.length).put(t);
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
