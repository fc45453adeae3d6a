package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A running step's output reaches the run's WebSocket and its Server-Sent Events within a second of being written
 * (issue 36): the step waits for a file the test makes in the job's workspace, then prints; the time from the file to
 * the line on each stream is measured.
 */
@SharedServer
class ActionsLiveLogTest {

    static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path tmp;

    record Received(long nanos, JsonNode event) {}

    static final String WORKFLOW = """
            on: workflow_dispatch
            jobs:
              live:
                runs-on: busybox
                steps:
                  - run: |
                      echo waiting-for-go
                      while [ ! -f go ]; do sleep 0.02; done
                      echo after-go
                      sleep 1
                      echo done
            """;

    @Test
    void aRunningStepsLinesReachTheWebSocketAndSseWithinASecond(AtriumServer server) throws Exception {
        User owner = server.newUser();
        Http.Reply made = owner.http()
                .post(
                        "/api/spaces/" + owner.defaultSpaceId() + "/repos",
                        Map.of("name", "live", "visibility", "private"));
        String repo = made.get("repository").get("id").asText();
        GitClient git = new GitClient(tmp.resolve("home"), owner.http().token());
        Path work = git.newWorkingCopy(tmp.resolve("work"), ".github/workflows/live.yml", WORKFLOW);
        git.ok(work, "push", "-q", made.get("repository").get("clone_url").asText(), "main");
        Http.Reply started = owner.http().post("/api/repos/" + repo + "/actions/runs", Map.of("workflow", "live.yml"));
        assertEquals(201, started.status(), started.body());
        String runId = started.get("workflow_run").get("id").asText();
        String streamUrl = owner.http().base() + "/api/repos/" + repo + "/actions/runs/" + runId + "/ws";

        List<Received> ws = new CopyOnWriteArrayList<>();
        CompletableFuture<Integer> wsClosed = new CompletableFuture<>();
        StringBuilder partial = new StringBuilder();
        WebSocket socket = HttpClient.newHttpClient()
                .newWebSocketBuilder()
                .header("Authorization", "Bearer " + owner.http().token())
                .buildAsync(URI.create(streamUrl.replace("http://", "ws://")), new WebSocket.Listener() {
                    @Override
                    public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
                        partial.append(data);
                        if (last) {
                            try {
                                ws.add(new Received(System.nanoTime(), Http.JSON.readTree(partial.toString())));
                            } catch (java.io.IOException e) {
                                wsClosed.completeExceptionally(e);
                            }
                            partial.setLength(0);
                        }
                        w.request(1);
                        return null;
                    }

                    @Override
                    public CompletionStage<?> onClose(WebSocket w, int status, String reason) {
                        wsClosed.complete(status);
                        return null;
                    }
                })
                .join();

        List<Received> sse = new CopyOnWriteArrayList<>();
        HttpResponse<InputStream> sseResponse = CLIENT.send(
                HttpRequest.newBuilder(URI.create(streamUrl))
                        .header("Authorization", "Bearer " + owner.http().token())
                        .header("Accept", "text/event-stream")
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, sseResponse.statusCode(), () -> {
            try {
                return new String(sseResponse.body().readAllBytes(), StandardCharsets.UTF_8)
                        + sseResponse.headers().map();
            } catch (java.io.IOException e) {
                return e.toString();
            }
        });
        assertTrue(sseResponse.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream"));
        Thread sseReader = new Thread(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(sseResponse.body(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    if (line.startsWith("data:")) {
                        sse.add(new Received(
                                System.nanoTime(),
                                Http.JSON.readTree(line.substring(5).strip())));
                    }
                }
            } catch (java.io.IOException e) {
                // the stream ended
            }
        });
        sseReader.start();

        awaitText(ws, "waiting-for-go", Duration.ofSeconds(60));
        awaitText(sse, "waiting-for-go", Duration.ofSeconds(5));
        String jobId = null;
        for (Received r : ws) {
            if (r.event().path("type").asText().equals("log")) {
                jobId = r.event().get("data").get("job_id").asText();
            }
        }
        Path workspace = server.data.resolve("actions").resolve("work").resolve(jobId);
        long go = System.nanoTime();
        Files.writeString(workspace.resolve("go"), "");
        long wsMs = (awaitText(ws, "after-go", Duration.ofSeconds(10)) - go) / 1_000_000;
        long sseMs = (awaitText(sse, "after-go", Duration.ofSeconds(10)) - go) / 1_000_000;
        System.out.println("live log: WebSocket " + wsMs + " ms, SSE " + sseMs + " ms after the output");
        assertTrue(wsMs < 1_000, "the WebSocket had the line " + wsMs + " ms after it was written");
        assertTrue(sseMs < 1_000, "the SSE stream had the line " + sseMs + " ms after it was written");

        // both streams end after the run's end, the last event saying how it ended
        assertEquals(1000, wsClosed.get(30, java.util.concurrent.TimeUnit.SECONDS));
        sseReader.join(30_000);
        for (List<Received> stream : List.of(ws, sse)) {
            JsonNode last = stream.get(stream.size() - 1).event();
            assertEquals("run.completed", last.get("type").asText(), last.toString());
            assertEquals("success", last.get("data").get("conclusion").asText());
            assertTrue(
                    stream.stream().anyMatch(r -> r.event().get("type").asText().equals("step.completed")));
        }
        socket.abort();

        // the stream of someone else's run, or of no run, is 404 with the spec's body, on both transports
        User stranger = server.newUser();
        for (String url : List.of(streamUrl, streamUrl.replace(runId, "run_NoSuchRun000000000"))) {
            HttpResponse<String> refused = CLIENT.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .header(
                                    "Authorization",
                                    "Bearer "
                                            + (url.equals(streamUrl) ? stranger : owner)
                                                    .http()
                                                    .token())
                            .header("Accept", "text/event-stream")
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(404, refused.statusCode(), refused.body());
            assertEquals(
                    "NOT_FOUND",
                    Http.JSON
                            .readTree(refused.body())
                            .path("error")
                            .path("code")
                            .asText());
        }
        HttpResponse<String> post = CLIENT.send(
                HttpRequest.newBuilder(URI.create(streamUrl))
                        .header("Authorization", "Bearer " + owner.http().token())
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(405, post.statusCode(), post.body());
    }

    /** When a log event with {@code text} arrived. */
    static long awaitText(List<Received> events, String text, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            for (Received r : events) {
                if (r.event().path("type").asText().equals("log")
                        && r.event().get("data").get("text").asText().contains(text)) {
                    return r.nanos();
                }
            }
            Thread.sleep(5);
        }
        throw new AssertionError("no log event with " + text + " within " + within + ": " + events);
    }
}
