package dev.atrium.actions.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A job's log as it is written: its containers' output and the runner's own lines, masked line by line (a secret
 * split across two writes of the same line is still caught) into a file on this machine, and handed out in chunks
 * for the run's live stream. A line that stays unfinished longer than {@link #PARTIAL_AFTER_NANOS} goes out as it is,
 * so a prompt without a newline is seen live. Past the limit, output is dropped with one line saying so.
 */
final class JobLog implements AutoCloseable {

    static final long PARTIAL_AFTER_NANOS = 250_000_000L;
    private static final int MAX_LINE = 64 * 1024;

    private final Path file;
    private final OutputStream out;
    private final SecretMask mask;
    private final long maxBytes;
    private final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();
    private final StringBuilder pending = new StringBuilder();
    private long lineStartedNanos;
    private long size;
    private boolean truncated;

    JobLog(Path file, SecretMask mask, long maxBytes) throws IOException {
        this.file = file;
        Files.createDirectories(file.getParent());
        this.out = Files.newOutputStream(
                file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
        this.mask = mask;
        this.maxBytes = maxBytes;
    }

    /** {@code text} with the job's secrets masked, for what is said of the job elsewhere (its reason). */
    String masked(String text) {
        return mask.apply(text);
    }

    Path file() {
        return file;
    }

    synchronized long size() {
        return size;
    }

    /** Output of a command, as it arrives. */
    synchronized void write(byte[] b, int off, int len) {
        for (int i = off; i < off + len; i++) {
            if (line.size() == 0) {
                lineStartedNanos = System.nanoTime();
            }
            line.write(b[i]);
            if (b[i] == '\n') {
                endLine();
            } else if (line.size() >= MAX_LINE + 4 * mask.longest()) {
                partial(); // what stays after it is shorter than a secret's longest form: below this again
            }
        }
    }

    /** A line of the runner's own (a step's header, a note). */
    synchronized void note(String text) {
        if (line.size() > 0) {
            endLine();
        }
        append(mask.apply(text) + "\n");
    }

    /** Ends a line left unfinished for a while, and returns what is new since the last call ("" when nothing is). */
    synchronized String drain(boolean all) {
        if (line.size() > 0 && all) {
            endLine();
        } else if (line.size() > 0 && System.nanoTime() - lineStartedNanos > PARTIAL_AFTER_NANOS) {
            partial();
        }
        String chunk = pending.toString();
        pending.setLength(0);
        return chunk;
    }

    /**
     * Writes out an unfinished line, but for its end where a secret may have begun that the rest of the line would
     * complete: that part waits for more (a secret is masked whole, never shown by halves).
     */
    private void partial() {
        byte[] bytes = line.toByteArray();
        int complete = bytes.length;
        // an unfinished UTF-8 sequence at the end stays for the next bytes
        for (int back = 1; back <= 3 && back <= bytes.length; back++) {
            int b = bytes[bytes.length - back] & 0xff;
            if (b >= 0xc0) {
                int need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
                if (need > back) {
                    complete = bytes.length - back;
                }
                break;
            }
            if (b < 0x80) {
                break;
            }
        }
        String text = new String(bytes, 0, complete, StandardCharsets.UTF_8);
        int cut = mask.safeCut(text);
        if (cut <= 0) {
            return;
        }
        String rest = text.substring(cut);
        line.reset();
        line.write(rest.getBytes(StandardCharsets.UTF_8), 0, rest.getBytes(StandardCharsets.UTF_8).length);
        line.write(bytes, complete, bytes.length - complete);
        lineStartedNanos = System.nanoTime();
        append(mask.apply(text.substring(0, cut)));
    }

    private void endLine() {
        String text = line.toString(StandardCharsets.UTF_8);
        line.reset();
        append(mask.apply(text));
    }

    private void append(String text) {
        if (truncated) {
            return;
        }
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (size + bytes.length > maxBytes) {
            truncated = true;
            text = "(the log reached its limit of " + maxBytes + " bytes; later output is not kept)\n";
            bytes = text.getBytes(StandardCharsets.UTF_8);
        }
        try {
            out.write(bytes);
        } catch (IOException e) {
            truncated = true; // the disk refused: the job goes on, its log stops
            return;
        }
        size += bytes.length;
        pending.append(text);
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }
}
