package dev.atrium.runs.internal;

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

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
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
    private final HttpClient client = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10)).build();

    @Activate
    public HttpFetchTool(@Reference EgressGuard guard) {
        this.guard = guard;
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
        for (int hop = 0; hop <= 5; hop++) {
            try {
                guard.check(uri);
            } catch (ApiException e) {
                throw new IOException("refused: " + e.getMessage());
            }
            HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20)).GET().build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            int status = r.statusCode();
            if (status >= 300 && status < 400 && r.headers().firstValue("Location").isPresent()) {
                r.body().close();
                uri = uri.resolve(r.headers().firstValue("Location").get());
                continue;
            }
            try (InputStream in = r.body()) {
                byte[] body = in.readNBytes(MAX_BYTES);
                return "status: " + status + "\ncontent-type: " + r.headers().firstValue("Content-Type").orElse("") + "\n\n"
                        + new String(body, StandardCharsets.UTF_8);
            }
        }
        throw new IOException("too many redirects");
    }
}
