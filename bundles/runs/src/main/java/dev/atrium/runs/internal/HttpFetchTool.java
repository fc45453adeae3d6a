package dev.atrium.runs.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.kernel.api.NulText;
import dev.atrium.runs.api.AgentTool;
import dev.atrium.runs.api.ToolArguments;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code http_fetch}: GET a URL for the model. Needs the {@code egress.http} grant; every URL, and every redirect
 * target (followed by hand, at most five), passes the kernel's {@link EgressGuard} first.
 * <p>
 * The guard is also the client's name resolver: a connection goes only to the addresses the guard approved while
 * resolving that very connection. A client that resolved the name again after the check would connect wherever a
 * second DNS answer pointed (a name that answers a public address to the check and a private one to the connect).
 */
@Component(service = AgentTool.class)
public class HttpFetchTool implements AgentTool {

    static final int MAX_BYTES = 64 * 1024;
    static final int MAX_REDIRECTS = 5;
    static final String THREADS = "atrium-http-fetch";
    /** The redirects that name where the resource is (not 300's choices, 304 or 305). */
    static final Set<Integer> REDIRECTS = Set.of(301, 302, 303, 307, 308);

    private final EgressGuard guard;
    private final long deadlineNanos;
    private final HttpClient client;

    @Activate
    public HttpFetchTool(@Reference EgressGuard guard, @Reference RunsSettings settings) throws Exception {
        this(guard, TimeUnit.SECONDS.toNanos(Math.max(1, settings.fetchTimeoutSeconds)));
    }

    HttpFetchTool(EgressGuard guard, long deadlineNanos) throws Exception {
        this.guard = guard;
        this.deadlineNanos = deadlineNanos;
        QueuedThreadPool threads = new QueuedThreadPool(16, 1);
        threads.setName(THREADS);
        threads.setDaemon(true);
        client = new HttpClient();
        client.setExecutor(threads);
        client.setScheduler(new ScheduledExecutorScheduler(THREADS + "-timer", true));
        // Jetty's resolver: the guard's answer for this connection, or the connection fails
        client.setSocketAddressResolver(
                (host, port, promise) -> promise.completeWith(guard.resolve(host, port, client.getExecutor())));
        client.setFollowRedirects(false);
        client.setHttpCookieStore(
                new HttpCookieStore.Empty()); // one user's cookies must never go out on another's fetch
        client.setConnectTimeout(10_000);
        client.setUserAgentField(new HttpField(HttpHeader.USER_AGENT, "Atrium http_fetch"));
        client.start();
    }

    @Deactivate
    void deactivate() throws Exception {
        client.stop();
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
            uri = new URI(ToolArguments.text(ToolArguments.parse(arguments), "url"));
        } catch (URISyntaxException e) {
            throw new IOException("url is not a valid URL");
        }
        // one wall-clock deadline over every hop, bodies included
        long deadline = System.nanoTime() + deadlineNanos;
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            try {
                guard.check(uri); // the whole URL (scheme, credentials, name); the resolver checks the addresses again
            } catch (ApiException e) {
                throw new IOException("refused: " + e.getMessage());
            }
            if (uri.getPort() > 65_535) {
                throw new IOException("the port " + uri.getPort() + " is not valid");
            }
            // Jetty's timeout counts whole milliseconds, and 0 would mean none at all
            long leftMillis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (leftMillis <= 0) {
                throw tookTooLong();
            }
            Request request = client.newRequest(uri).timeout(leftMillis, TimeUnit.MILLISECONDS);
            try (InputStreamResponseListener listener =
                    new InputStreamResponseListener()) { // closing it drops what is left
                request.send(listener);
                Response response = listener.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                int status = response.getStatus();
                String location = response.getHeaders().get(HttpHeader.LOCATION);
                if (REDIRECTS.contains(status) && location != null) {
                    uri = redirect(uri, location);
                    continue;
                }
                try (InputStream in = listener.getInputStream()) {
                    byte[] body = in.readNBytes(MAX_BYTES);
                    String type = response.getHeaders().get(HttpHeader.CONTENT_TYPE);
                    return "status: " + status + "\ncontent-type: " + (type == null ? "" : type) + "\n\n"
                            + NulText.clean(new String(body, StandardCharsets.UTF_8));
                }
            } catch (TimeoutException e) {
                throw tookTooLong();
            } catch (InterruptedIOException e) {
                if (e instanceof SocketTimeoutException) {
                    throw failure(e);
                }
                // the worker was interrupted while reading (the run was cancelled, or this instance stops); the
                // exception is the signal, as from any blocking call (a flag left set would fail the run's next pool
                // checkout)
                throw new InterruptedException("the fetch was interrupted");
            } catch (ExecutionException | IOException e) {
                throw failure(e);
            } finally {
                var unused = request.abort(new IOException("the fetch ended")); // nothing once the exchange completed
            }
        }
        throw new IOException("too many redirects");
    }

    private IOException tookTooLong() {
        return new IOException(
                "the fetch took longer than " + TimeUnit.NANOSECONDS.toSeconds(deadlineNanos) + " seconds");
    }

    /**
     * Where a redirect leads (RFC 3986 §5.2). Characters a URL may not hold (spaces, non-ASCII) are percent-encoded
     * as UTF-8, as browsers do. java.net.URI resolves a query-only reference by RFC 2396, against the base's
     * directory; RFC 3986 keeps the base's path.
     */
    private static URI redirect(URI from, String location) throws IOException {
        try {
            URI ref = new URI(encodeIllegal(location.trim()));
            if (ref.getScheme() == null
                    && ref.getRawAuthority() == null
                    && ref.getRawPath().isEmpty()
                    && ref.getRawQuery() != null) {
                String path = from.getRawPath() == null || from.getRawPath().isEmpty() ? "/" : from.getRawPath();
                return new URI(from.getScheme() + "://" + from.getRawAuthority() + path + "?" + ref.getRawQuery()
                        + (ref.getRawFragment() == null ? "" : "#" + ref.getRawFragment()));
            }
            return from.resolve(ref);
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw new IOException("the redirect's Location is not a valid URL");
        }
    }

    private static String encodeIllegal(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c <= 0x20 || c >= 0x7f || "\"<>\\^`{|}".indexOf(c) >= 0) {
                out.append('%')
                        .append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            } else {
                out.append((char) c);
            }
        }
        return out.toString();
    }

    /** What the model is told: the guard's refusal, a deadline, or the transport's own reason. */
    private IOException failure(Exception e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof EgressGuard.Refused r) {
                return new IOException("refused: " + r.getMessage());
            }
            if (t instanceof TimeoutException) {
                return tookTooLong();
            }
        }
        Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        return new IOException("the fetch failed: "
                + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage()));
    }
}
