package dev.atrium.itests;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A Server-Sent Events client over java.net.http: reads events until the server ends the stream or {@code max} arrived. */
final class SseClient {

    record Event(long id, String type, JsonNode data) {}

    record Result(int status, List<Event> events, int comments, String contentType) {}

    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static Result read(String url, String token, Long lastEventId, int max, Duration timeout) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
                .timeout(timeout)
                .header("Accept", "text/event-stream")
                .header("Authorization", "Bearer " + token);
        if (lastEventId != null) {
            b.header("Last-Event-ID", Long.toString(lastEventId));
        }
        HttpResponse<InputStream> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        List<Event> events = new ArrayList<>();
        int comments = 0;
        try (InputStream in = r.body();
                BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            if (r.statusCode() != 200) {
                return new Result(
                        r.statusCode(),
                        events,
                        0,
                        r.headers().firstValue("Content-Type").orElse(""));
            }
            String line;
            Long id = null;
            String type = null;
            StringBuilder data = null;
            while (events.size() < max && (line = reader.readLine()) != null) {
                if (line.isEmpty()) {
                    if (data != null) {
                        events.add(new Event(id, type, Http.JSON.readTree(data.toString())));
                    }
                    id = null;
                    type = null;
                    data = null;
                } else if (line.startsWith(":")) {
                    comments++;
                } else if (line.startsWith("id:")) {
                    id = Long.parseLong(line.substring(3).trim());
                } else if (line.startsWith("event:")) {
                    type = line.substring(6).trim();
                } else if (line.startsWith("data:")) {
                    String v = line.substring(5).startsWith(" ") ? line.substring(6) : line.substring(5);
                    data = data == null
                            ? new StringBuilder(v)
                            : data.append('\n').append(v);
                }
            }
        }
        return new Result(
                r.statusCode(),
                events,
                comments,
                r.headers().firstValue("Content-Type").orElse(""));
    }

    private SseClient() {}
}
