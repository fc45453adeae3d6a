package dev.atrium.services.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal DNS client (RFC 1035 over UDP) for custom-domain checks: TXT and A records from one configured server, so
 * an operator (or a test) chooses the resolver, and no JNDI or library is needed. No recursion of its own: the server
 * must be a recursive resolver (or the authority for the names asked).
 */
final class DnsClient {

    static final int A = 1;
    static final int TXT = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final InetSocketAddress server;
    private final int timeoutMillis;

    DnsClient(InetSocketAddress server, int timeoutMillis) {
        this.server = server;
        this.timeoutMillis = timeoutMillis;
    }

    /** {@code host} or {@code host:port} (port 53 by default); blank: the first nameserver of /etc/resolv.conf. */
    static InetSocketAddress server(String setting) throws IOException {
        String s = setting == null ? "" : setting.trim();
        if (s.isEmpty()) {
            for (String line : Files.readAllLines(Path.of("/etc/resolv.conf"))) {
                String[] parts = line.trim().split("\\s+");
                if (parts.length >= 2 && parts[0].equals("nameserver")) {
                    return new InetSocketAddress(InetAddress.getByName(parts[1]), 53);
                }
            }
            throw new IOException("no nameserver in /etc/resolv.conf; set the services dnsResolver");
        }
        int colon = s.lastIndexOf(':');
        if (colon > 0 && s.indexOf(':') == colon) {
            return new InetSocketAddress(InetAddress.getByName(s.substring(0, colon)), Integer.parseInt(s.substring(colon + 1)));
        }
        return new InetSocketAddress(InetAddress.getByName(s.replaceAll("^\\[|\\]$", "")), 53);
    }

    List<String> txt(String name) throws IOException {
        List<String> out = new ArrayList<>();
        for (byte[] rdata : query(name, TXT)) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < rdata.length;) {
                int len = rdata[i] & 0xff;
                sb.append(new String(rdata, i + 1, Math.min(len, rdata.length - i - 1), StandardCharsets.UTF_8));
                i += len + 1;
            }
            out.add(sb.toString());
        }
        return out;
    }

    List<InetAddress> a(String name) throws IOException {
        List<InetAddress> out = new ArrayList<>();
        for (byte[] rdata : query(name, A)) {
            if (rdata.length == 4) {
                out.add(InetAddress.getByAddress(name, rdata));
            }
        }
        return out;
    }

    /** The RDATA of every answer of {@code type} for {@code name}. */
    List<byte[]> query(String name, int type) throws IOException {
        int id = RANDOM.nextInt(0x10000);
        byte[] request = request(id, name, type);
        try (DatagramSocket socket = new DatagramSocket()) {
            socket.setSoTimeout(timeoutMillis);
            socket.send(new DatagramPacket(request, request.length, server));
            byte[] buffer = new byte[4096];
            long deadline = System.currentTimeMillis() + timeoutMillis;
            while (true) {
                DatagramPacket reply = new DatagramPacket(buffer, buffer.length);
                try {
                    socket.receive(reply);
                } catch (SocketTimeoutException e) {
                    throw new IOException("the DNS server " + server + " did not answer in " + timeoutMillis + " ms");
                }
                ByteBuffer b = ByteBuffer.wrap(reply.getData(), 0, reply.getLength());
                if (reply.getLength() >= 12 && (b.getShort(0) & 0xffff) == id && reply.getAddress().equals(server.getAddress())) {
                    return answers(b, type);
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IOException("the DNS server " + server + " did not answer in " + timeoutMillis + " ms");
                }
            }
        }
    }

    static byte[] request(int id, String name, int type) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(id >> 8);
        out.write(id);
        out.write(0x01); // RD
        out.write(0x00);
        out.writeBytes(new byte[] { 0, 1, 0, 0, 0, 0, 0, 0 }); // one question
        writeName(out, name);
        out.write(type >> 8);
        out.write(type);
        out.write(0);
        out.write(1); // IN
        return out.toByteArray();
    }

    static void writeName(ByteArrayOutputStream out, String name) {
        for (String label : name.split("\\.")) {
            if (label.isEmpty()) {
                continue;
            }
            byte[] l = label.getBytes(StandardCharsets.US_ASCII);
            out.write(l.length);
            out.writeBytes(l);
        }
        out.write(0);
    }

    static List<byte[]> answers(ByteBuffer b, int type) throws IOException {
        try {
            int flags = b.getShort(2) & 0xffff;
            int rcode = flags & 0xf;
            if (rcode == 3) {
                return List.of(); // NXDOMAIN
            }
            if (rcode != 0) {
                throw new IOException("the DNS server answered with error code " + rcode);
            }
            int questions = b.getShort(4) & 0xffff;
            int answers = b.getShort(6) & 0xffff;
            b.position(12);
            for (int i = 0; i < questions; i++) {
                skipName(b);
                b.position(b.position() + 4);
            }
            List<byte[]> out = new ArrayList<>();
            for (int i = 0; i < answers; i++) {
                skipName(b);
                int t = b.getShort() & 0xffff;
                b.getShort(); // class
                b.getInt(); // ttl
                int len = b.getShort() & 0xffff;
                byte[] rdata = new byte[len];
                b.get(rdata);
                if (t == type) {
                    out.add(rdata);
                }
            }
            return out;
        } catch (RuntimeException e) {
            throw new IOException("the DNS answer is malformed", e);
        }
    }

    private static void skipName(ByteBuffer b) {
        while (true) {
            int len = b.get() & 0xff;
            if (len == 0) {
                return;
            }
            if ((len & 0xc0) == 0xc0) {
                b.get();
                return;
            }
            b.position(b.position() + len);
        }
    }
}
