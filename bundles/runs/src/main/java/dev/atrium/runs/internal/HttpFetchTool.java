package dev.atrium.runs.internal;

import dev.atrium.kernel.api.NulText;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.runs.api.AgentTool;

/**
 * {@code http_fetch}: GET a URL for the model. Needs the {@code egress.http} grant; every URL, and every redirect
 * target (followed by hand, at most five), passes the kernel's {@link EgressGuard} first.
 */
@Component(service = AgentTool.class)
public class HttpFetchTool implements AgentTool {

    static final int MAX_BYTES = 64 * 1024;
    private final EgressGuard guard;
    private final long deadlineSeconds;
    private final ExecutorService fetches = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "atrium-http-fetch");
        t.setDaemon(true);
        return t;
    });
    private final HttpClient client = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10)).build();

    @Activate
    public HttpFetchTool(@Reference EgressGuard guard, @Reference RunsSettings settings) {
        this.guard = guard;
        this.deadlineSeconds = Math.max(1, settings.fetchTimeoutSeconds);
    }

    @Deactivate
    void deactivate() {
        fetches.shutdownNow();
    }

    @Override
    public String name() {
        return "http_fetch";
    }

    @Override
    public String description() {
        return "Fetch a public http(s) URL with GET and return its status, content type and the start of its body.";
    }

    @Override
    public String parametersSchema() {
        return "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"}},\"required\":[\"url\"]}";
    }

    @Override
    public Set<String> requiredGrants() {
        return Set.of("egress.http");
    }

    @Override
    public String execute(Context context, String arguments) throws Exception {
        if (!context.grants().contains("egress.http")) {
            throw new IOException("this run may not reach the network");
        }
        URI uri;
        try {
            uri = new URI(ToolArgs.text(ToolArgs.parse(arguments), "url"));
        } catch (URISyntaxException e) {
            throw new IOException("url is not a valid URL");
        }
        URI start = uri;
        AtomicReference<InputStream> open = new AtomicReference<>();
        // a wall-clock deadline over everything, body included (HttpRequest.timeout covers only the headers)
        Future<String> fetch = fetches.submit(() -> fetch(start, open));
        try {
            return fetch.get(deadlineSeconds, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IOException("the fetch took longer than " + deadlineSeconds + " seconds");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception ex) {
                throw ex;
            }
            throw new IOException(String.valueOf(e.getCause()));
        } finally {
            fetch.cancel(true);
            InputStream in = open.get();
            if (in != null) {
                try {
                    in.close();
                } catch (IOException ignored) {
                    // the fetch is abandoned anyway
                }
            }
        }
    }

    private String fetch(URI start, AtomicReference<InputStream> open) throws IOException, InterruptedException {
        URI uri = start;
        for (int hop = 0; hop <= 5; hop++) {
            try {
                guard.check(uri);
            } catch (ApiException e) {
                throw new IOException("refused: " + e.getMessage());
            }
            HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20)).GET().build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            open.set(r.body());
            int status = r.statusCode();
            if (status >= 300 && status < 400 && r.headers().firstValue("Location").isPresent()) {
                r.body().close();
                uri = uri.resolve(r.headers().firstValue("Location").get());
                continue;
            }
            try (InputStream in = r.body()) {
                byte[] body = in.readNBytes(MAX_BYTES);
                return "status: " + status + "\ncontent-type: " + r.headers().firstValue("Content-Type").orElse("") + "\n\n"
                        + NulText.clean(new String(body, StandardCharsets.UTF_8));
            }
        }
        throw new IOException("too many redirects");
    }
}
