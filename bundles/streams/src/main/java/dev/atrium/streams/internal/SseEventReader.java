package dev.atrium.streams.internal;

import dev.atrium.streams.api.EventStreamReader;
import dev.atrium.streams.api.ServerSentEvent;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads server-sent events (the WHATWG event stream format) from a byte stream: {@code event}, {@code data} (lines
 * joined by a newline) and {@code id} fields, comments skipped, an event dispatched at a blank line. Lines may end in
 * LF, CRLF or CR. An event larger than {@code maxEventBytes} is an error rather than memory spent.
 */
final class SseEventReader implements EventStreamReader {

    private final InputStream in;
    private final int maxEventBytes;
    private boolean afterCr;

    SseEventReader(InputStream in, int maxEventBytes) {
        // one byte at a time from a buffer: the body streams of HTTP clients are slow to read a byte at a time
        this.in = in instanceof BufferedInputStream ? in : new BufferedInputStream(in);
        this.maxEventBytes = maxEventBytes;
    }

    @Override
    public ServerSentEvent next() throws IOException {
        String name = null;
        String id = null;
        StringBuilder data = null;
        int size = 0;
        while (true) {
            String line = line();
            if (line == null) {
                return null;
            }
            size += line.length();
            if (size > maxEventBytes) {
                throw new IOException("the server sent an event larger than " + maxEventBytes + " bytes");
            }
            if (line.isEmpty()) {
                if (data != null) {
                    return new ServerSentEvent(name == null ? "message" : name, data.toString(), id);
                }
                name = null;
                continue;
            }
            if (line.startsWith(":")) {
                continue;
            }
            int colon = line.indexOf(':');
            String field = colon < 0 ? line : line.substring(0, colon);
            String value = colon < 0 ? "" : line.substring(colon + 1);
            if (value.startsWith(" ")) {
                value = value.substring(1);
            }
            switch (field) {
                case "event" -> name = value;
                case "data" -> {
                    if (data == null) {
                        data = new StringBuilder(value);
                    } else {
                        data.append('\n').append(value);
                    }
                }
                case "id" -> id = value;
                default -> {}
            }
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                return buf.size() == 0 ? null : buf.toString(StandardCharsets.UTF_8);
            }
            if (b == '\n' && afterCr) {
                afterCr = false;
                continue; // the LF of a CRLF
            }
            afterCr = b == '\r';
            if (b == '\n' || b == '\r') {
                return buf.toString(StandardCharsets.UTF_8);
            }
            if (buf.size() >= maxEventBytes) {
                throw new IOException("the server sent an event larger than " + maxEventBytes + " bytes");
            }
            buf.write(b);
        }
    }
}
