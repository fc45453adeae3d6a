package dev.atrium.database.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The client connections an embedded PostgreSQL still serves, read from the operating system rather than through a
 * connection (which would itself be one): the postmaster's child processes whose title names a client,
 * {@code postgres: <user> <database> <host>(<port>) <state>}. Linux only, as the embedded binaries are.
 */
final class ClientConnections {

    /** A client process's title: its peer as {@code host(port)}, or {@code [local]} for a Unix socket. */
    private static final Pattern CLIENT = Pattern.compile("\\S\\(\\d+\\)|\\[local\\]");

    private ClientConnections() {}

    /** The titles of the server's client processes; empty when the server in {@code pgData} is not running. */
    static List<String> of(Path pgData) {
        Optional<ProcessHandle> postmaster = postmaster(pgData);
        if (postmaster.isEmpty()) {
            return List.of();
        }
        return postmaster
                .get()
                .children()
                .map(ClientConnections::title)
                .filter(t -> CLIENT.matcher(t).find())
                .toList();
    }

    /**
     * Waits until the server in {@code pgData} serves no client, at most {@code millis}; returns the titles of those
     * left (empty when none is).
     */
    static List<String> awaitNone(Path pgData, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000;
        List<String> left = of(pgData);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
            left = of(pgData);
        }
        return left;
    }

    private static Optional<ProcessHandle> postmaster(Path pgData) {
        try {
            List<String> lines = Files.readAllLines(pgData.resolve("postmaster.pid"), StandardCharsets.US_ASCII);
            return lines.isEmpty()
                    ? Optional.empty()
                    : ProcessHandle.of(Long.parseLong(lines.get(0).trim()));
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** The title PostgreSQL gives the process in place of its arguments; empty once the process has gone. */
    private static String title(ProcessHandle process) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(process.pid()), "cmdline"));
            return new String(raw, StandardCharsets.UTF_8).replace('\0', ' ').trim();
        } catch (IOException e) {
            return "";
        }
    }
}
