package dev.atrium.database.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The port an embedded PostgreSQL listens on. Left to itself, zonky takes one from the kernel's ephemeral range (a
 * closed {@code ServerSocket(0)}) just before PostgreSQL binds it; on a busy machine an outgoing connection can take
 * that same port in between, PostgreSQL stops with "could not create any TCP/IP sockets", and the server ran without
 * its database. A start cannot simply be tried again: zonky keeps a file lock on the data directory that a failed
 * start never releases. So the port is chosen below the ephemeral range, where no outgoing connection is given one,
 * among the ports nothing listens on.
 */
final class EmbeddedStarts {

    /** Linux's default lower bound of {@code net.ipv4.ip_local_port_range}. */
    static final int EPHEMERAL_DEFAULT = 32768;
    /** How far below the ephemeral range ports are chosen. */
    static final int SPAN = 12_000;

    private EmbeddedStarts() {}

    /** A port below the ephemeral range that nothing listens on now; 0 (zonky's own choice) when none is found. */
    static int port() {
        int low = Math.max(1024, ephemeralLow() - SPAN);
        int high = ephemeralLow();
        if (high - low < 1000) {
            return 0;
        }
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(low, high);
            if (free(port)) {
                return port;
            }
        }
        return 0;
    }

    private static boolean free(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    /** The lower bound of the kernel's ephemeral port range. */
    static int ephemeralLow() {
        // read as a stream: /proc reports a size its content does not have, and a read by size is cut short
        try (java.io.BufferedReader r = Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
            String[] range = r.readLine().trim().split("\\s+");
            return Integer.parseInt(range[0]);
        } catch (IOException | RuntimeException e) {
            return EPHEMERAL_DEFAULT;
        }
    }
}
