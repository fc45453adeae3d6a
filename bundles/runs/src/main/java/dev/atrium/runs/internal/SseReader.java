package dev.atrium.runs.internal;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/** Reads a text/event-stream body: calls back with each event's name (or null) and its joined data lines. */
final class SseReader {

    interface Handler {
        /** @return false to stop reading */
        boolean event(String name, String data) throws IOException;
    }

    static void read(InputStream in, Handler handler) throws IOException {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String name = null;
            StringBuilder data = null;
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isEmpty()) {
                    if (data != null && !handler.event(name, data.toString())) {
                        return;
                    }
                    name = null;
                    data = null;
                } else if (line.startsWith(":")) {
                    continue;
                } else {
                    int colon = line.indexOf(':');
                    String field = colon < 0 ? line : line.substring(0, colon);
                    String value = colon < 0 ? "" : line.substring(colon + 1);
                    if (value.startsWith(" ")) {
                        value = value.substring(1);
                    }
                    if (field.equals("event")) {
                        name = value;
                    } else if (field.equals("data")) {
                        data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
                    }
                }
            }
            if (data != null) {
                handler.event(name, data.toString());
            }
        }
    }

    private SseReader() {
    }
}
