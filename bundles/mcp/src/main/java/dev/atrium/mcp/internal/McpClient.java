package dev.atrium.mcp.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.streams.api.EventStreamReader;
import dev.atrium.streams.api.EventStreams;
import dev.atrium.streams.api.ServerSentEvent;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.stream.Collectors;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * A Model Context Protocol client for remote servers, speaking the protocol directly (JSON-RPC 2.0) over Jetty's HTTP
 * client: the Streamable HTTP transport (each message a POST answered with JSON or an event stream, the session in
 * {@code Mcp-Session-Id}) and the older HTTP+SSE transport (a GET event stream whose {@code endpoint} event names where
 * messages are POSTed; answers arrive on the stream). Each operation opens a session ({@code initialize}, then
 * {@code notifications/initialized}), does its requests and ends it, all within one wall-clock deadline.
 * <p>
 * Every connection passes the kernel's {@link EgressGuard}, which is also the client's name resolver (a connection
 * goes only to the addresses approved for it), except to the hosts the operator lists in {@code allowedHosts}.
 * Redirects are not followed.
 *
 * <p>Why one class of about 770 lines: both transports share one session's deadline, the egress checks and the JSON-RPC
 * exchange; reading event streams is the platform's ({@link EventStreams#reader}), the OAuth dance {@link McpOAuth}'s.
 */
@Component(
        service = McpClient.class,
        configurationPid = "dev.atrium.mcp",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = McpClient.Config.class)
public class McpClient {

    @ObjectClassDefinition(name = "Atrium MCP client")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "Host names (comma-separated) the operator allows past the egress guard, e.g. an MCP server"
                                + " on the private network. By default ATRIUM_MCP_ALLOWED_HOSTS.")
        String allowedHosts() default "";

        @AttributeDefinition(
                description = "Wall-clock limit of one MCP operation (a listing, a tool call), in seconds."
                        + " By default ATRIUM_MCP_TIMEOUT_S.")
        int timeoutSeconds() default 30;

        @AttributeDefinition(
                description =
                        "Base64 of the 32-byte AES key the MCP OAuth tokens are encrypted with (the same on every"
                                + " instance). By default ATRIUM_MCP_TOKEN_KEY; when unset, a key made at first start in <data>/mcp/token.key.")
        String tokenKey() default "";

        @AttributeDefinition(description = "The data directory. By default ATRIUM_DATA.")
        String dataDirectory() default "data";
    }

    static final String PROTOCOL_VERSION = "2025-06-18";
    static final int MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
    static final int MAX_TOOLS = 500;
    static final String THREADS = "atrium-mcp";
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** The server refused for want of authorization (HTTP 401); {@code challenge} is its WWW-Authenticate header. */
    static final class AuthorizationRequired extends IOException {
        private static final long serialVersionUID = 1L;
        final String challenge;

        AuthorizationRequired(String challenge) {
            super("the MCP server requires authorization");
            this.challenge = challenge;
        }
    }

    private final EgressGuard guard;
    private final Set<String> allowedHosts;
    private final long timeoutNanos;
    private final HttpClient client;
    /** Event streams' readers, bounded to a message's size. */
    private final BiFunction<InputStream, Integer, EventStreamReader> readers;

    private final AtomicLong ids = new AtomicLong();

    @Activate
    public McpClient(@Reference EgressGuard guard, @Reference EventStreams eventStreams, Config config)
            throws Exception {
        this(
                guard,
                config.allowedHosts(),
                TimeUnit.SECONDS.toNanos(Math.max(1, config.timeoutSeconds())),
                eventStreams::reader);
    }

    McpClient(
            EgressGuard guard,
            String allowedHosts,
            long timeoutNanos,
            BiFunction<InputStream, Integer, EventStreamReader> readers)
            throws Exception {
        this.guard = guard;
        this.readers = readers;
        this.allowedHosts = Arrays.stream(allowedHosts == null ? new String[0] : allowedHosts.split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .map(s -> s.toLowerCase(Locale.ROOT))
                .collect(Collectors.toUnmodifiableSet());
        this.timeoutNanos = timeoutNanos;
        QueuedThreadPool threads = new QueuedThreadPool(32, 1);
        threads.setName(THREADS);
        threads.setDaemon(true);
        client = new HttpClient();
        client.setExecutor(threads);
        client.setScheduler(new ScheduledExecutorScheduler(THREADS + "-timer", true));
        client.setSocketAddressResolver((host, port, promise) -> {
            if (allowed(host)) {
                client.getExecutor().execute(() -> {
                    try {
                        promise.succeeded(Arrays.stream(InetAddress.getAllByName(host))
                                .map(a -> new InetSocketAddress(a, port))
                                .toList());
                    } catch (UnknownHostException e) {
                        promise.failed(e);
                    }
                });
            } else {
                promise.completeWith(guard.resolve(host, port, client.getExecutor()));
            }
        });
        client.setFollowRedirects(false);
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.setConnectTimeout(10_000);
        client.setUserAgentField(new HttpField(HttpHeader.USER_AGENT, "Atrium MCP client"));
        client.start();
    }

    @Deactivate
    void deactivate() throws Exception {
        client.stop();
    }

    private boolean allowed(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        return allowedHosts.contains(h);
    }

    /**
     * Checks a server URL before it is stored or used: absolute http(s), no user information or fragment, and (unless
     * the operator allows its host) a target the egress guard allows.
     *
     * @throws ApiException 400 saying what is wrong
     */
    URI check(String url) {
        URI uri;
        try {
            uri = new URI(url);
        } catch (java.net.URISyntaxException e) {
            throw ApiException.badRequest("url is not a valid URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!uri.isAbsolute() || !(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null) {
            throw ApiException.badRequest("url must be an absolute http or https URL");
        }
        if (uri.getRawUserInfo() != null) {
            throw ApiException.badRequest("url must not hold credentials");
        }
        if (uri.getRawFragment() != null) {
            throw ApiException.badRequest("url must not have a fragment");
        }
        if (uri.getPort() > 65_535) {
            throw ApiException.badRequest("the port " + uri.getPort() + " is not valid");
        }
        if (!allowed(uri.getHost())) {
            guard.check(uri);
        }
        return uri;
    }

    /** Lists the server's tools (every page, at most {@link #MAX_TOOLS}). */
    ArrayNode listTools(String url, String transport, String bearer) throws IOException, InterruptedException {
        return listTools(url, transport, bearer, timeoutNanos);
    }

    ArrayNode listTools(String url, String transport, String bearer, long limitNanos)
            throws IOException, InterruptedException {
        try (Session session = open(url, transport, bearer, System.nanoTime() + Math.min(limitNanos, timeoutNanos))) {
            ArrayNode all = NODES.arrayNode();
            String cursor = null;
            for (int page = 0; page < 20; page++) {
                ObjectNode params = NODES.objectNode();
                if (cursor != null) {
                    params.put("cursor", cursor);
                }
                JsonNode result = session.request("tools/list", params);
                for (JsonNode t : result.path("tools")) {
                    if (t.path("name").isTextual() && all.size() < MAX_TOOLS) {
                        ObjectNode tool = NODES.objectNode();
                        tool.put("name", t.path("name").asText());
                        if (t.path("title").isTextual()) {
                            tool.put("title", t.path("title").asText());
                        }
                        tool.put("description", t.path("description").asText(""));
                        tool.set(
                                "input_schema",
                                t.path("inputSchema").isObject()
                                        ? t.path("inputSchema")
                                        : NODES.objectNode().put("type", "object"));
                        all.add(tool);
                    }
                }
                cursor = result.path("nextCursor").isTextual()
                        ? result.path("nextCursor").asText()
                        : null;
                if (cursor == null || cursor.isEmpty() || all.size() >= MAX_TOOLS) {
                    break;
                }
            }
            return all;
        }
    }

    /** Calls a tool; the result's content as text. A result the server marks {@code isError} is thrown with its text. */
    String callTool(String url, String transport, String bearer, String tool, JsonNode arguments)
            throws IOException, InterruptedException {
        try (Session session = open(url, transport, bearer, System.nanoTime() + timeoutNanos)) {
            ObjectNode params = NODES.objectNode();
            params.put("name", tool);
            params.set("arguments", arguments);
            JsonNode result = session.request("tools/call", params);
            StringBuilder text = new StringBuilder();
            for (JsonNode c : result.path("content")) {
                if (text.length() > 0) {
                    text.append('\n');
                }
                switch (c.path("type").asText()) {
                    case "text" -> text.append(c.path("text").asText());
                    case "resource" ->
                        text.append(c.path("resource")
                                .path("text")
                                .asText("[resource "
                                        + c.path("resource").path("uri").asText() + "]"));
                    case "resource_link" ->
                        text.append("[resource link ")
                                .append(c.path("uri").asText())
                                .append(']');
                    default ->
                        text.append('[')
                                .append(c.path("type").asText("unknown"))
                                .append(" content")
                                .append(
                                        c.path("mimeType").isTextual()
                                                ? ", " + c.path("mimeType").asText()
                                                : "")
                                .append(']');
                }
            }
            if (text.length() == 0 && result.has("structuredContent")) {
                text.append(result.get("structuredContent").toString());
            }
            if (result.path("isError").asBoolean(false)) {
                throw new IOException("the tool failed: " + text);
            }
            return text.toString();
        }
    }

    // ------------------------------------------------------------------ sessions

    private Session open(String url, String transport, String bearer, long deadline)
            throws IOException, InterruptedException {
        URI uri;
        try {
            uri = check(url);
        } catch (ApiException e) {
            throw new IOException("refused: " + e.getMessage());
        }
        Session session = "sse".equals(transport)
                ? new SseSession(uri, bearer, deadline)
                : new StreamableSession(uri, bearer, deadline);
        boolean ok = false;
        try {
            session.start();
            ObjectNode params = NODES.objectNode();
            params.put("protocolVersion", PROTOCOL_VERSION);
            params.set("capabilities", NODES.objectNode());
            params.set("clientInfo", NODES.objectNode().put("name", "atrium").put("version", "0.1.0"));
            JsonNode init = session.request("initialize", params);
            session.protocolVersion = init.path("protocolVersion").asText(PROTOCOL_VERSION);
            session.notify("notifications/initialized");
            ok = true;
            return session;
        } finally {
            if (!ok) {
                session.close();
            }
        }
    }

    private abstract class Session implements AutoCloseable {
        final URI uri;
        final String bearer;
        final long deadline;
        String protocolVersion;

        Session(URI uri, String bearer, long deadline) {
            this.uri = uri;
            this.bearer = bearer;
            this.deadline = deadline;
        }

        void start() throws IOException, InterruptedException {}

        abstract JsonNode request(String method, JsonNode params) throws IOException, InterruptedException;

        abstract void notify(String method) throws IOException, InterruptedException;

        @Override
        public abstract void close();

        ObjectNode message(String method, JsonNode params, Long id) {
            ObjectNode m = NODES.objectNode();
            m.put("jsonrpc", "2.0");
            if (id != null) {
                m.put("id", id);
            }
            m.put("method", method);
            if (params != null) {
                m.set("params", params);
            }
            return m;
        }

        long leftMillis() throws IOException {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                throw tookTooLong();
            }
            return left;
        }

        Request newRequest(URI target, HttpMethod method) throws IOException {
            if (!allowed(target.getHost())) {
                try {
                    guard.check(target);
                } catch (ApiException e) {
                    throw new IOException("refused: " + e.getMessage());
                }
            }
            Request r = client.newRequest(target).method(method).timeout(leftMillis(), TimeUnit.MILLISECONDS);
            if (bearer != null) {
                r.headers(h -> h.put(HttpHeader.AUTHORIZATION, "Bearer " + bearer));
            }
            return r;
        }

        /** Sends and waits for the response head; the body stays in the listener. */
        Response send(Request request, InputStreamResponseListener listener) throws IOException, InterruptedException {
            request.send(listener);
            try {
                Response response = listener.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (response.getStatus() == 401) {
                    throw new AuthorizationRequired(response.getHeaders().get(HttpHeader.WWW_AUTHENTICATE));
                }
                return response;
            } catch (TimeoutException e) {
                throw tookTooLong();
            } catch (ExecutionException e) {
                throw failure(e);
            }
        }

        /** The answer to request {@code id} among the messages of an event stream. */
        JsonNode answerFrom(EventStreamReader events, long id) throws IOException {
            while (true) {
                ServerSentEvent e;
                try {
                    e = events.next();
                } catch (InterruptedIOException | java.io.UncheckedIOException x) {
                    throw tookTooLong();
                } catch (IOException x) {
                    if (System.nanoTime() - deadline > 0) {
                        throw tookTooLong();
                    }
                    throw x;
                }
                if (e == null) {
                    if (System.nanoTime() - deadline > 0) {
                        throw tookTooLong();
                    }
                    throw new IOException("the MCP server ended the stream without answering");
                }
                if (!e.name().equals("message")) {
                    continue;
                }
                JsonNode answer = matching(parse(e.data()), id);
                if (answer != null) {
                    return answer;
                }
            }
        }
    }

    /** The Streamable HTTP transport (MCP 2025-03-26 and later). */
    private final class StreamableSession extends Session {
        private String sessionId;

        StreamableSession(URI uri, String bearer, long deadline) {
            super(uri, bearer, deadline);
        }

        private Request post(ObjectNode message) throws IOException {
            Request r = newRequest(uri, HttpMethod.POST);
            r.headers(h -> {
                h.put(HttpHeader.ACCEPT, "application/json, text/event-stream");
                if (sessionId != null) {
                    h.put("Mcp-Session-Id", sessionId);
                }
                if (protocolVersion != null) {
                    h.put("MCP-Protocol-Version", protocolVersion);
                }
            });
            return r.body(new StringRequestContent("application/json", message.toString(), StandardCharsets.UTF_8));
        }

        @Override
        JsonNode request(String method, JsonNode params) throws IOException, InterruptedException {
            long id = ids.incrementAndGet();
            Request request = post(message(method, params, id));
            try (InputStreamResponseListener listener = new InputStreamResponseListener()) {
                Response response = send(request, listener);
                int status = response.getStatus();
                if (status == 404 && sessionId != null) {
                    throw new IOException("the MCP server ended the session");
                }
                if (status / 100 != 2) {
                    throw new IOException("the MCP server answered HTTP " + status + excerpt(listener));
                }
                if ("initialize".equals(method)) {
                    sessionId = response.getHeaders().get("Mcp-Session-Id");
                }
                String type = String.valueOf(response.getHeaders().get(HttpHeader.CONTENT_TYPE))
                        .toLowerCase(Locale.ROOT);
                try (InputStream in = new BufferedInputStream(listener.getInputStream())) {
                    if (type.startsWith("text/event-stream")) {
                        return answerFrom(readers.apply(in, MAX_MESSAGE_BYTES), id);
                    }
                    if (type.startsWith("application/json")) {
                        byte[] body = in.readNBytes(MAX_MESSAGE_BYTES + 1);
                        if (body.length > MAX_MESSAGE_BYTES) {
                            throw new IOException(
                                    "the MCP server's answer is larger than " + MAX_MESSAGE_BYTES + " bytes");
                        }
                        JsonNode answer = matching(parse(new String(body, StandardCharsets.UTF_8)), id);
                        if (answer == null) {
                            throw new IOException("the MCP server's answer is not the answer to the request");
                        }
                        return answer;
                    }
                    throw new IOException("the MCP server answered with content type " + type);
                }
            } finally {
                var unused = request.abort(new IOException("the MCP request ended"));
            }
        }

        @Override
        void notify(String method) throws IOException, InterruptedException {
            Request request = post(message(method, null, null));
            try (InputStreamResponseListener listener = new InputStreamResponseListener()) {
                Response response = send(request, listener);
                if (response.getStatus() / 100 != 2) {
                    throw new IOException("the MCP server answered HTTP " + response.getStatus() + " to " + method);
                }
            } finally {
                var unused = request.abort(new IOException("the MCP request ended"));
            }
        }

        @Override
        public void close() {
            if (sessionId == null) {
                return;
            }
            try {
                Request r = newRequest(uri, HttpMethod.DELETE)
                        .timeout(Math.min(2000, Math.max(1, leftMillis())), TimeUnit.MILLISECONDS);
                r.headers(h -> h.put("Mcp-Session-Id", sessionId));
                r.send(result -> {}); // best effort: a server that does not end sessions on DELETE answers 405
            } catch (IOException | RuntimeException ignored) {
                // past the deadline: the server expires the session by itself
            }
        }
    }

    /** The HTTP+SSE transport (MCP 2024-11-05). */
    private final class SseSession extends Session {
        private Request stream;
        private InputStreamResponseListener listener;
        private EventStreamReader events;
        private URI endpoint;

        SseSession(URI uri, String bearer, long deadline) {
            super(uri, bearer, deadline);
        }

        @Override
        void start() throws IOException, InterruptedException {
            stream = newRequest(uri, HttpMethod.GET);
            stream.headers(h -> h.put(HttpHeader.ACCEPT, "text/event-stream"));
            listener = new InputStreamResponseListener();
            Response response = send(stream, listener);
            if (response.getStatus() != 200) {
                throw new IOException("the MCP server answered HTTP " + response.getStatus() + excerpt(listener));
            }
            events = readers.apply(listener.getInputStream(), MAX_MESSAGE_BYTES);
            while (endpoint == null) {
                ServerSentEvent e = events.next();
                if (e == null) {
                    throw new IOException("the MCP server ended the stream before naming its message endpoint");
                }
                if (e.name().equals("endpoint")) {
                    URI target;
                    try {
                        target = uri.resolve(e.data().trim());
                    } catch (IllegalArgumentException bad) {
                        throw new IOException("the MCP server's message endpoint is not a valid URL");
                    }
                    if (!same(target.getScheme(), uri.getScheme())
                            || !same(target.getHost(), uri.getHost())
                            || target.getPort() != uri.getPort()) {
                        throw new IOException("the MCP server's message endpoint is on another origin");
                    }
                    endpoint = target;
                }
            }
        }

        private static boolean same(String a, String b) {
            return a != null && a.equalsIgnoreCase(b);
        }

        private void post(ObjectNode message) throws IOException, InterruptedException {
            Request r = newRequest(endpoint, HttpMethod.POST)
                    .body(new StringRequestContent("application/json", message.toString(), StandardCharsets.UTF_8));
            try (InputStreamResponseListener l = new InputStreamResponseListener()) {
                Response response = send(r, l);
                if (response.getStatus() / 100 != 2) {
                    throw new IOException("the MCP server answered HTTP " + response.getStatus() + excerpt(l));
                }
            } finally {
                var unused = r.abort(new IOException("the MCP request ended"));
            }
        }

        @Override
        JsonNode request(String method, JsonNode params) throws IOException, InterruptedException {
            long id = ids.incrementAndGet();
            post(message(method, params, id));
            return answerFrom(events, id);
        }

        @Override
        void notify(String method) throws IOException, InterruptedException {
            post(message(method, null, null));
        }

        @Override
        public void close() {
            if (listener != null) {
                try {
                    listener.close();
                } catch (IOException ignored) {
                    // the stream is being dropped
                }
            }
            if (stream != null) {
                var unused = stream.abort(new IOException("the MCP session ended"));
            }
        }
    }

    // ------------------------------------------------------------------ plain HTTP for the OAuth flow

    /** An HTTP answer of the OAuth flow: status, the WWW-Authenticate header, and the body parsed as JSON (null when not). */
    record Answer(int status, String challenge, JsonNode json) {}

    /**
     * One guarded HTTP exchange (GET when {@code body} is null, else POST of {@code contentType}), no redirects, the body
     * read up to {@link #MAX_MESSAGE_BYTES}.
     */
    Answer exchange(URI target, String body, String contentType, String accept)
            throws IOException, InterruptedException {
        if (!allowed(target.getHost())) {
            try {
                guard.check(target);
            } catch (ApiException e) {
                throw new IOException("refused: " + e.getMessage());
            }
        }
        long deadline = System.nanoTime() + timeoutNanos;
        Request r = client.newRequest(target)
                .method(body == null ? HttpMethod.GET : HttpMethod.POST)
                .timeout(TimeUnit.NANOSECONDS.toMillis(timeoutNanos), TimeUnit.MILLISECONDS);
        r.headers(h -> h.put(HttpHeader.ACCEPT, accept));
        if (body != null) {
            r.body(new StringRequestContent(contentType, body, StandardCharsets.UTF_8));
        }
        try (InputStreamResponseListener listener = new InputStreamResponseListener()) {
            r.send(listener);
            Response response;
            try {
                response = listener.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw tookTooLong();
            } catch (ExecutionException e) {
                throw failure(e);
            }
            String type = String.valueOf(response.getHeaders().get(HttpHeader.CONTENT_TYPE))
                    .toLowerCase(Locale.ROOT);
            JsonNode json = null;
            if (type.contains("json")) {
                try (InputStream in = listener.getInputStream()) {
                    byte[] bytes = in.readNBytes(MAX_MESSAGE_BYTES + 1);
                    if (bytes.length > MAX_MESSAGE_BYTES) {
                        throw new IOException("the answer of " + target.getHost() + " is larger than "
                                + MAX_MESSAGE_BYTES + " bytes");
                    }
                    try {
                        json = McpServerStore.JSON.readTree(bytes);
                    } catch (IOException notJson) {
                        json = null;
                    }
                }
            }
            return new Answer(response.getStatus(), response.getHeaders().get(HttpHeader.WWW_AUTHENTICATE), json);
        } finally {
            var unused = r.abort(new IOException("the exchange ended"));
        }
    }

    /** Whether an MCP server demands authorization: its answer to an {@code initialize} without a token; null when it does not. */
    String challenge(String url, String transport) throws IOException, InterruptedException {
        ObjectNode init = NODES.objectNode();
        init.put("jsonrpc", "2.0");
        init.put("id", ids.incrementAndGet());
        init.put("method", "initialize");
        ObjectNode params = init.putObject("params");
        params.put("protocolVersion", PROTOCOL_VERSION);
        params.putObject("capabilities");
        params.putObject("clientInfo").put("name", "atrium").put("version", "0.1.0");
        URI uri;
        try {
            uri = check(url);
        } catch (ApiException e) {
            throw new IOException("refused: " + e.getMessage());
        }
        Answer a = "sse".equals(transport)
                ? exchange(uri, null, null, "text/event-stream")
                : exchange(uri, init.toString(), "application/json", "application/json, text/event-stream");
        return a.status() == 401 ? (a.challenge() == null ? "" : a.challenge()) : null;
    }

    // ------------------------------------------------------------------ messages

    private static JsonNode parse(String text) throws IOException {
        try {
            return McpServerStore.JSON.readTree(text);
        } catch (IOException e) {
            throw new IOException("the MCP server sent a message that is not JSON");
        }
    }

    /** The result of the answer to {@code id} in a message or batch; null when there is none; a JSON-RPC error is thrown. */
    private static JsonNode matching(JsonNode message, long id) throws IOException {
        if (message == null) {
            return null;
        }
        if (message.isArray()) {
            for (JsonNode m : message) {
                JsonNode r = matching(m, id);
                if (r != null) {
                    return r;
                }
            }
            return null;
        }
        if (!message.isObject()
                || !message.has("id")
                || message.has("method")
                || message.path("id").asLong(-1) != id) {
            return null; // a notification or a request of the server's: this client offers no capabilities, so none is
            // answered
        }
        if (message.has("error")) {
            JsonNode error = message.path("error");
            throw new IOException("the MCP server answered error "
                    + error.path("code").asText() + ": " + error.path("message").asText());
        }
        JsonNode result = message.path("result");
        if (!result.isObject()) {
            throw new IOException("the MCP server's answer has no result");
        }
        return result;
    }

    private static String excerpt(InputStreamResponseListener listener) {
        try (InputStream in = listener.getInputStream()) {
            String body = new String(in.readNBytes(300), StandardCharsets.UTF_8).strip();
            return body.isEmpty() ? "" : ": " + body.replaceAll("[\\p{Cntrl}]", " ");
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    private IOException tookTooLong() {
        return new IOException(
                "the MCP server did not answer within " + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos) + " seconds");
    }

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
        return new IOException("the MCP server cannot be reached: "
                + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage()));
    }
}
