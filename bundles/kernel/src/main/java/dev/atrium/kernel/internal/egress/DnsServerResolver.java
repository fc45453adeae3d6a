package dev.atrium.kernel.internal.egress;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

/**
 * Resolves a host's A and AAAA records by asking one DNS server over UDP (RFC 1035), for an operator who names the
 * resolver outbound fetches must use. One query per record type, each answer read once: the guard checks and the
 * caller connects to exactly these addresses, so a second, different answer (DNS rebinding) is never asked for.
 */
final class DnsServerResolver {

    private static final int TYPE_A = 1;
    private static final int TYPE_AAAA = 28;
    private static final int TIMEOUT_MS = 3000;
    private final SecureRandom random = new SecureRandom();
    private final InetSocketAddress server;

    DnsServerResolver(InetSocketAddress server) {
        this.server = server;
    }

    /**
     * {@code host:port} or {@code host} (port 53); null when none is configured.
     *
     * @throws IllegalArgumentException when the setting is not of that form
     */
    static DnsServerResolver parse(String setting) {
        if (setting == null || setting.isBlank()) {
            return null;
        }
        String s = setting.trim();
        int colon = s.lastIndexOf(':');
        String host = s;
        int port = 53;
        if (colon > 0 && s.indexOf(':') == colon) {
            host = s.substring(0, colon);
            port = Integer.parseInt(s.substring(colon + 1));
        }
        if (port < 1 || port > 65535 || host.isEmpty()) {
            throw new IllegalArgumentException("not host:port: " + setting);
        }
        return new DnsServerResolver(new InetSocketAddress(host, port));
    }

    InetAddress[] resolve(String host) throws UnknownHostException {
        List<InetAddress> out = new ArrayList<>();
        try (DatagramSocket socket = new DatagramSocket()) {
            socket.setSoTimeout(TIMEOUT_MS);
            for (int type : new int[] { TYPE_A, TYPE_AAAA }) {
                out.addAll(query(socket, host, type));
            }
        } catch (IOException e) {
            throw new UnknownHostException(host + ": the DNS server " + server + " did not answer (" + e.getMessage() + ")");
        }
        if (out.isEmpty()) {
            throw new UnknownHostException(host);
        }
        return out.toArray(InetAddress[]::new);
    }

    private List<InetAddress> query(DatagramSocket socket, String host, int type) throws IOException {
        int id = random.nextInt(0x10000);
        ByteBuffer q = ByteBuffer.allocate(512);
        q.putShort((short) id).putShort((short) 0x0100).putShort((short) 1).putShort((short) 0).putShort((short) 0).putShort((short) 0);
        for (String label : host.split("\\.")) {
            byte[] b = label.getBytes(StandardCharsets.US_ASCII);
            if (b.length == 0 || b.length > 63) {
                throw new UnknownHostException(host + " is not a valid host name");
            }
            q.put((byte) b.length).put(b);
        }
        q.put((byte) 0).putShort((short) type).putShort((short) 1);
        socket.send(new DatagramPacket(q.array(), q.position(), server));
        byte[] buf = new byte[1500];
        while (true) {
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            try {
                socket.receive(p);
            } catch (SocketTimeoutException e) {
                throw new IOException("no answer in " + TIMEOUT_MS + " ms", e);
            }
            ByteBuffer r = ByteBuffer.wrap(buf, 0, p.getLength());
            if (!p.getSocketAddress().equals(server) || p.getLength() < 12 || (r.getShort(0) & 0xffff) != id) {
                continue; // not the answer to this query: spoofed or late
            }
            try {
                return answers(r, type);
            } catch (RuntimeException malformed) {
                throw new IOException("the DNS server's answer is malformed", malformed);
            }
        }
    }

    private static List<InetAddress> answers(ByteBuffer r, int type) throws IOException {
        int flags = r.getShort(2) & 0xffff;
        int rcode = flags & 0xf;
        if (rcode == 3) {
            return List.of(); // NXDOMAIN
        }
        if (rcode != 0) {
            throw new IOException("the DNS server answered rcode " + rcode);
        }
        int questions = r.getShort(4) & 0xffff;
        int answers = r.getShort(6) & 0xffff;
        r.position(12);
        for (int i = 0; i < questions; i++) {
            skipName(r);
            r.position(r.position() + 4);
        }
        List<InetAddress> out = new ArrayList<>();
        for (int i = 0; i < answers; i++) {
            skipName(r);
            int rtype = r.getShort() & 0xffff;
            r.getShort(); // class
            r.getInt(); // ttl
            int length = r.getShort() & 0xffff;
            byte[] data = new byte[length];
            r.get(data);
            if (rtype == type && (length == 4 || length == 16)) {
                out.add(InetAddress.getByAddress(data));
            }
        }
        return out;
    }

    private static void skipName(ByteBuffer r) {
        while (true) {
            int len = r.get() & 0xff;
            if (len == 0) {
                return;
            }
            if ((len & 0xc0) == 0xc0) {
                r.get(); // a pointer ends the name
                return;
            }
            r.position(r.position() + len);
        }
    }
}
