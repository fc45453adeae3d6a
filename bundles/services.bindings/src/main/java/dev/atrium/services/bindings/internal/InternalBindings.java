package dev.atrium.services.bindings.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.HostRouter;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.Keepsakes;
import dev.atrium.resource.api.KvFacet;
import dev.atrium.resource.api.QueueFacet;
import dev.atrium.resource.api.ResourceDirectory;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.SqlFacet;
import dev.atrium.services.api.ServiceRoutes;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The internal binding endpoint deployed code reaches its resources through:
 * {@code /internal/bindings/<runtime deployment id>/<binding name>/…}. Only from loopback, never through a proxy
 * ({@code X-Forwarded-For}/{@code Forwarded} present is refused), and only with the deployment's secret
 * ({@value ServiceRoutes#SECRET_HEADER}, an HMAC of the runtime id that the provider hands its runtime and the code never
 * sees). A wrong secret, another deployment's binding, a binding that no longer holds, a deployment that no longer
 * runs: all the same 404. The resource is then called through the resources core
 * ({@link ResourceDirectory#open}) with the access the binding holds.
 *
 * <p>Protocol: what workerd's native bindings send, as deploy.api's {@code Binding} documents it: {@code kv} (get, bulk
 * get, put with {@code expiration_ttl}/{@code expiration}, delete, list), {@code d1} ({@code /query} and
 * {@code /execute}, one statement or a batch, {@code ROWS_AND_COLUMNS} or row objects) and {@code queue}
 * ({@code /message}, {@code /batch}), {@code r2} ({@link R2Bindings}). Not yet: kv metadata (accepted, not kept: {@code KvFacet} has
 * none), d1 batches in one transaction ({@code SqlFacet} runs one statement per call).
 *
 * <p>Why one class of about 610 lines: the kv, d1 and queue wire formats share its access checks, body limits and
 * error answers; r2, the largest, is a class of its own ({@link R2Bindings}).
 */
@Component(service = HostRouter.class)
public class InternalBindings implements HostRouter {

    private static final Logger LOG = LoggerFactory.getLogger(InternalBindings.class);
    static final ObjectMapper JSON = JsonMappers.create();
    private static final String PREFIX = ServiceRoutes.BINDINGS_PATH;
    private static final Claims CLAIMS = new Claims(Set.of(), Set.of(), Set.of(PREFIX), Set.of());
    static final long MAX_VALUE = 25L << 20;
    static final int MAX_KEY = 512;

    private final ServiceRoutes services;
    private final ResourceDirectory directory;
    private final WorkflowBindings workflows;
    private final R2Bindings r2;

    @Activate
    public InternalBindings(
            @Reference ServiceRoutes services,
            @Reference ResourceDirectory directory,
            @Reference WorkflowPacing pacing,
            BundleContext context) {
        Keepsakes.loadClassesNow(context.getBundle(), "dev/atrium/services/bindings");
        this.services = services;
        this.directory = directory;
        this.workflows = new WorkflowBindings(directory, pacing);
        this.r2 = new R2Bindings(directory);
    }

    @Override
    public Claims claims() {
        return CLAIMS;
    }

    @Override
    public boolean route(HttpServletRequest request, HttpServletResponse response) throws IOException {
        // after a start (of this bundle or of services) the routing table comes a moment later: until it does, every
        // deployment would look gone and its binding calls would be answered "not found"
        if (closed) {
            return false;
        }
        if (!services.awaitRoutes(FIRST_ROUTES_WAIT_MILLIS)) {
            response.setHeader("Retry-After", "5");
            error(response, 503, "SERVICE_UNAVAILABLE", "the services' routing table is not loaded yet; try again");
            return true;
        }
        try {
            handle(request, response);
        } catch (IllegalStateException stopping) {
            // a service this call used went away under it (resources updating closed its EntityManager) before anything
            // was answered: handed back, the kernel holds the call until this router's next instance takes it
            if (!response.isCommitted() && closedWithin(2_000)) {
                response.reset();
                return false;
            }
            LOG.warn("services: a binding call failed: {}", stopping.toString());
            if (!response.isCommitted()) {
                response.setHeader("Retry-After", "1");
                error(response, 503, "SERVICE_UNAVAILABLE", "the binding's resources are being restarted; try again");
            }
        }
        return true;
    }

    /** How long a binding call waits, after a start, for the first routing table. */
    private static final long FIRST_ROUTES_WAIT_MILLIS = 10_000;

    private void handle(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String raw = request.getRequestURI().substring(PREFIX.length());
        String[] parts = raw.split("/", 3);
        if (parts.length < 2
                || !loopback(request)
                || request.getHeader("X-Forwarded-For") != null
                || request.getHeader("Forwarded") != null) {
            notFound(response);
            return;
        }
        String runtimeId = parts[0];
        String bindingName = parts[1];
        String rest = parts.length == 3 ? parts[2] : "";
        ServiceRoutes.Target target = services.routes().byRuntimeId().get(runtimeId);
        String secret = request.getHeader(ServiceRoutes.SECRET_HEADER);
        if (target == null
                || secret == null
                || !MessageDigest.isEqual(
                        secret.getBytes(StandardCharsets.UTF_8),
                        services.bindingSecret(runtimeId).getBytes(StandardCharsets.UTF_8))) {
            notFound(response);
            return;
        }
        Optional<ResourceDirectory.Bound> bound = directory.bindings(target.serviceId(), target.spaceId()).stream()
                .filter(b -> b.bindingName().equals(bindingName))
                .findFirst();
        if (bound.isEmpty()) {
            notFound(response);
            return;
        }
        try {
            switch (bound.get().type()) {
                case "kv" -> kv(target, bindingName, rest, request, response);
                case "d1" -> d1(target, bindingName, rest, request, response);
                case "queue" -> queue(target, bindingName, rest, request, response);
                case "workflow" -> workflows.handle(target, bindingName, rest, request, response);
                case "r2" -> r2.handle(target, bindingName, request, response);
                default ->
                    error(
                            response,
                            501,
                            "NOT_IMPLEMENTED",
                            "bindings of type " + bound.get().type() + " are not served yet");
            }
        } catch (ResourceException e) {
            int status = switch (e.kind()) {
                case BAD_INPUT -> 400;
                case FORBIDDEN -> 403;
                case NOT_FOUND -> 404;
                case CONFLICT -> 409;
                case TOO_LARGE -> 413;
                case UNAVAILABLE -> 503;
            };
            error(response, status, e.kind().name(), e.getMessage() == null ? "the resource failed" : e.getMessage());
        } catch (IllegalStateException stopping) {
            throw stopping; // see route
        } catch (RuntimeException e) {
            LOG.warn("services: the binding {} of {} failed: {}", bindingName, target.serviceId(), e.toString());
            error(response, 500, "INTERNAL_ERROR", "the binding failed");
        }
    }

    /** Set once this component is deactivated, after the kernel stopped handing it requests. */
    private volatile boolean closed;

    @Deactivate
    void deactivate() {
        closed = true;
    }

    /** Whether this component is deactivated within {@code millis}: it is when a service it uses is going away. */
    private boolean closedWithin(long millis) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(millis);
        while (!closed && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return closed;
    }

    private static boolean loopback(HttpServletRequest request) {
        try {
            return InetAddress.getByName(request.getRemoteAddr()).isLoopbackAddress();
        } catch (IOException e) {
            return false;
        }
    }

    private <F> Optional<ResourceDirectory.Opened<F>> open(ServiceRoutes.Target target, String name, Class<F> facet) {
        return directory.open(target.serviceId(), target.spaceId(), name, facet);
    }

    private void kv(
            ServiceRoutes.Target target,
            String name,
            String rest,
            HttpServletRequest request,
            HttpServletResponse response)
            throws IOException, ResourceException {
        Optional<ResourceDirectory.Opened<KvFacet>> opened = open(target, name, KvFacet.class);
        if (opened.isEmpty()) {
            error(response, 503, "SERVICE_UNAVAILABLE", "the kv provider of this binding is not running");
            return;
        }
        KvFacet kv = opened.get().facet();
        var ctx = opened.get().context();
        String method = request.getMethod();
        if (rest.isEmpty()) {
            if (!method.equals("GET")) {
                error(response, 405, "METHOD_NOT_ALLOWED", "only GET lists keys");
                return;
            }
            String prefix = Optional.ofNullable(request.getParameter("prefix")).orElse("");
            String cursor = request.getParameter("cursor");
            String limitParam = request.getParameter("key_count_limit") != null
                    ? request.getParameter("key_count_limit")
                    : request.getParameter("limit");
            int limit = 1000;
            if (limitParam != null) {
                try {
                    limit = Math.max(1, Math.min(1000, Integer.parseInt(limitParam)));
                } catch (NumberFormatException e) {
                    error(response, 400, "BAD_REQUEST", "key_count_limit must be a number");
                    return;
                }
            }
            KvFacet.KvPage page = kv.list(ctx, prefix, cursor == null || cursor.isEmpty() ? null : cursor, limit);
            List<Map<String, Object>> keys = new ArrayList<>();
            for (KvFacet.KvKey k : page.keys()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("name", k.name());
                if (k.expiresAt() != null) {
                    m.put("expiration", k.expiresAt().getEpochSecond());
                }
                keys.add(m);
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("keys", keys);
            body.put("list_complete", page.cursor() == null);
            if (page.cursor() != null) {
                body.put("cursor", page.cursor());
            }
            json(response, 200, body);
            return;
        }
        if (rest.equals("bulk/get") && method.equals("POST")) {
            kvBulkGet(kv, ctx, request, response);
            return;
        }
        // the runtime sends the key as encodeURIComponent made it (so '/' is %2F); a '+' stays a '+'
        String key = URLDecoder.decode(rest.replace("+", "%2B"), StandardCharsets.UTF_8);
        if (key.isEmpty() || key.length() > MAX_KEY || key.indexOf('\0') >= 0) {
            error(response, 400, "BAD_REQUEST", "a key must be 1 to " + MAX_KEY + " characters");
            return;
        }
        switch (method) {
            case "GET" -> {
                Optional<KvFacet.KvEntry> e = kv.get(ctx, key);
                if (e.isEmpty()) {
                    error(response, 404, "NOT_FOUND", "key not found");
                    return;
                }
                response.setStatus(200);
                response.setContentType("application/octet-stream");
                if (e.get().expiresAt() != null) {
                    response.setHeader(
                            "Expiration", Long.toString(e.get().expiresAt().getEpochSecond()));
                }
                response.setContentLength(e.get().value().length);
                response.getOutputStream().write(e.get().value());
            }
            case "PUT", "POST" -> {
                Duration ttl;
                try {
                    ttl = ttl(request.getParameter("expiration_ttl"), request.getParameter("expiration"));
                } catch (NumberFormatException e) {
                    error(
                            response,
                            400,
                            "BAD_REQUEST",
                            "expiration_ttl and expiration must be whole numbers of seconds in the future");
                    return;
                }
                byte[] value = read(request.getInputStream(), MAX_VALUE);
                if (value == null) {
                    error(response, 413, "PAYLOAD_TOO_LARGE", "a value must be at most " + MAX_VALUE + " bytes");
                    return;
                }
                kv.put(ctx, key, value, ttl);
                json(response, 200, Map.of("success", true));
            }
            case "DELETE" -> {
                kv.delete(ctx, key);
                json(response, 200, Map.of("success", true));
            }
            default -> error(response, 405, "METHOD_NOT_ALLOWED", "kv takes GET, PUT and DELETE");
        }
    }

    /** {@code expiration_ttl} (seconds from now) or {@code expiration} (epoch seconds), the earlier when both; null for none. */
    static Duration ttl(String ttl, String expiration) {
        Duration out = null;
        if (ttl != null && !ttl.isBlank()) {
            long s = Long.parseLong(ttl.trim());
            if (s < 1) {
                throw new NumberFormatException();
            }
            out = Duration.ofSeconds(s);
        }
        if (expiration != null && !expiration.isBlank()) {
            long s = Long.parseLong(expiration.trim()) - java.time.Instant.now().getEpochSecond();
            if (s < 1) {
                throw new NumberFormatException();
            }
            if (out == null || s < out.toSeconds()) {
                out = Duration.ofSeconds(s);
            }
        }
        return out;
    }

    private void kvBulkGet(
            KvFacet kv,
            dev.atrium.resource.api.ResourceContext ctx,
            HttpServletRequest request,
            HttpServletResponse response)
            throws IOException, ResourceException {
        JsonNode q = jsonBody(request, response);
        if (q == null) {
            return;
        }
        if (!q.path("keys").isArray() || q.path("keys").size() > 100) {
            error(response, 400, "BAD_REQUEST", "keys must be an array of at most 100 keys");
            return;
        }
        boolean asJson = "json".equals(q.path("type").asText("text"));
        boolean withMetadata = q.path("withMetadata").asBoolean(false);
        Map<String, Object> out = new LinkedHashMap<>();
        for (JsonNode k : q.get("keys")) {
            String key = k.asText();
            Optional<KvFacet.KvEntry> e = key.isEmpty() || key.length() > MAX_KEY ? Optional.empty() : kv.get(ctx, key);
            Object value = null;
            if (e.isPresent()) {
                String text = new String(e.get().value(), StandardCharsets.UTF_8);
                if (asJson) {
                    try {
                        value = JSON.readTree(text);
                    } catch (IOException bad) {
                        error(response, 400, "BAD_REQUEST", "the value of " + key + " is not JSON");
                        return;
                    }
                } else {
                    value = text;
                }
            }
            if (withMetadata) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("value", value);
                m.put("metadata", null);
                out.put(key, m);
            } else {
                out.put(key, value);
            }
        }
        json(response, 200, out);
    }

    private void d1(
            ServiceRoutes.Target target,
            String name,
            String rest,
            HttpServletRequest request,
            HttpServletResponse response)
            throws IOException, ResourceException {
        Optional<ResourceDirectory.Opened<SqlFacet>> opened = open(target, name, SqlFacet.class);
        if (opened.isEmpty()) {
            error(response, 503, "SERVICE_UNAVAILABLE", "the d1 provider of this binding is not running");
            return;
        }
        if (!request.getMethod().equals("POST") || !(rest.equals("query") || rest.equals("execute"))) {
            error(response, 404, "NOT_FOUND", "d1 takes POST <endpoint>/query and /execute");
            return;
        }
        JsonNode q = jsonBody(request, response);
        if (q == null) {
            return;
        }
        String format = Optional.ofNullable(request.getParameter("resultsFormat"))
                .orElse(rest.equals("query") ? "ROWS_AND_COLUMNS" : "NONE");
        if (q.isArray()) {
            // a batch (or exec): in order; the SqlFacet has no transaction across calls, so a later failure does not
            // undo earlier ones
            List<Object> results = new ArrayList<>();
            boolean failed = false;
            for (JsonNode statement : q) {
                Map<String, Object> r = failed
                        ? Map.of("success", false, "error", "not run: an earlier statement failed")
                        : statement(opened.get(), statement, format);
                failed |= Boolean.FALSE.equals(r.get("success"));
                results.add(r);
            }
            json(response, 200, results);
        } else {
            json(response, 200, statement(opened.get(), q, format));
        }
    }

    private static Map<String, Object> statement(ResourceDirectory.Opened<SqlFacet> opened, JsonNode q, String format) {
        long started = System.nanoTime();
        if (q == null || !q.path("sql").isTextual()) {
            return Map.of("success", false, "error", "sql is required");
        }
        List<Object> params = new ArrayList<>();
        for (JsonNode p : q.path("params")) {
            params.add(
                    p.isNull()
                            ? null
                            : p.isIntegralNumber()
                                    ? (Object) p.longValue()
                                    : p.isNumber()
                                            ? (Object) p.doubleValue()
                                            : p.isBoolean()
                                                    ? (Object) (p.booleanValue() ? 1L : 0L)
                                                    : p.isTextual() ? p.textValue() : p.toString());
        }
        SqlFacet.SqlResult r;
        try {
            r = opened.facet().query(opened.context(), q.get("sql").textValue(), params);
        } catch (ResourceException e) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("success", false);
            m.put("error", e.getMessage() == null ? "the statement failed" : e.getMessage());
            return m;
        }
        Object results;
        if ("ROWS_AND_COLUMNS".equals(format)) {
            List<List<Object>> rows = new ArrayList<>();
            for (List<Object> row : r.rows()) {
                rows.add(row.stream().map(InternalBindings::sqlValue).toList());
            }
            results = Map.of("columns", r.columns(), "rows", rows);
        } else {
            List<Map<String, Object>> rows = new ArrayList<>();
            for (List<Object> row : r.rows()) {
                Map<String, Object> m = new LinkedHashMap<>();
                for (int i = 0; i < r.columns().size() && i < row.size(); i++) {
                    m.put(r.columns().get(i), sqlValue(row.get(i)));
                }
                rows.add(m);
            }
            results = rows;
        }
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("duration", (System.nanoTime() - started) / 1_000_000.0);
        meta.put("changes", r.rowsChanged());
        meta.put("last_row_id", 0);
        meta.put("changed_db", r.rowsChanged() > 0);
        meta.put("size_after", 0);
        meta.put("rows_read", r.rows().size());
        meta.put("rows_written", r.rowsChanged());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("success", true);
        out.put("results", results);
        out.put("meta", meta);
        return out;
    }

    private static Object sqlValue(Object v) {
        if (v instanceof byte[] b) {
            List<Integer> out = new ArrayList<>(b.length);
            for (byte x : b) {
                out.add(x & 0xff);
            }
            return out;
        }
        return v;
    }

    private void queue(
            ServiceRoutes.Target target,
            String name,
            String rest,
            HttpServletRequest request,
            HttpServletResponse response)
            throws IOException, ResourceException {
        Optional<ResourceDirectory.Opened<QueueFacet>> opened = open(target, name, QueueFacet.class);
        if (opened.isEmpty()) {
            error(response, 503, "SERVICE_UNAVAILABLE", "the queue provider of this binding is not running");
            return;
        }
        if (!request.getMethod().equals("POST") || !(rest.equals("message") || rest.equals("batch"))) {
            error(response, 404, "NOT_FOUND", "queue takes POST <endpoint>/message and /batch");
            return;
        }
        Duration delay = null;
        String d = request.getHeader("X-Msg-Delay-Secs");
        if (d != null && !d.isBlank()) {
            try {
                long s = Long.parseLong(d.trim());
                delay = s > 0 ? Duration.ofSeconds(s) : null;
            } catch (NumberFormatException e) {
                error(response, 400, "BAD_REQUEST", "X-Msg-Delay-Secs must be a number");
                return;
            }
        }
        QueueFacet q = opened.get().facet();
        if (rest.equals("message")) {
            byte[] body = read(request.getInputStream(), 128 * 1024);
            if (body == null) {
                error(response, 413, "PAYLOAD_TOO_LARGE", "a message must be at most 128 KiB");
                return;
            }
            q.send(opened.get().context(), body, delay);
        } else {
            JsonNode batch = jsonBody(request, response);
            if (batch == null) {
                return;
            }
            if (!batch.path("messages").isArray() || batch.get("messages").size() > 100) {
                error(response, 400, "BAD_REQUEST", "messages must be an array of at most 100 messages");
                return;
            }
            for (JsonNode m : batch.get("messages")) {
                byte[] body;
                try {
                    body = java.util.Base64.getDecoder().decode(m.path("body").asText(""));
                } catch (IllegalArgumentException e) {
                    error(response, 400, "BAD_REQUEST", "a message body must be base64");
                    return;
                }
                long secs = m.path("delaySecs").asLong(0);
                q.send(opened.get().context(), body, secs > 0 ? Duration.ofSeconds(secs) : delay);
            }
        }
        json(
                response,
                200,
                Map.of(
                        "metadata",
                        Map.of("metrics", Map.of("backlogCount", 0, "backlogBytes", 0, "oldestMessageTimestamp", 0))));
    }

    private static JsonNode jsonBody(HttpServletRequest request, HttpServletResponse response) throws IOException {
        byte[] body = read(request.getInputStream(), 1 << 20);
        if (body == null) {
            error(response, 413, "PAYLOAD_TOO_LARGE", "a body must be at most 1 MiB");
            return null;
        }
        try {
            JsonNode n = JSON.readTree(body);
            if (n == null) {
                throw new IOException("empty");
            }
            return n;
        } catch (IOException e) {
            error(response, 400, "BAD_REQUEST", "the body must be JSON");
            return null;
        }
    }

    /** At most {@code max} bytes, or null when there are more. */
    private static byte[] read(InputStream in, long max) throws IOException {
        byte[] bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 16, max + 1));
        return bytes.length > max ? null : bytes;
    }

    static void json(HttpServletResponse response, int status, Object body) throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(body);
        response.setStatus(status);
        response.setContentType("application/json");
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }

    private static void notFound(HttpServletResponse response) throws IOException {
        error(response, 404, "NOT_FOUND", "not found");
    }

    static void error(HttpServletResponse response, int status, String code, String message) throws IOException {
        if (status >= 500) {
            LOG.info("services: a binding call answered {} {}: {}", status, code, message);
        }
        json(response, status, ApiException.body(code, message));
    }
}
