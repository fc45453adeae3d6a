package dev.atrium.kernel.internal.http;

import dev.atrium.kernel.api.JsonMappers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.ReadListener;
import javax.servlet.ServletException;
import javax.servlet.ServletInputStream;
import javax.servlet.ServletOutputStream;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.WriteListener;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletRequestWrapper;
import javax.servlet.http.HttpServletResponse;
import javax.servlet.http.HttpServletResponseWrapper;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterAsyncSupported;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterPattern;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs in front of every servlet, JAX-RS included. It gives each request an id ({@code X-Request-Id}) and refuses
 * ambiguous request targets (encoded separators, dot segments, control characters, bad UTF-8) on every path. Under
 * {@code /api}, {@code /admin}, {@code /healthz}, {@code /oauth} and {@code /auth} it refuses bodies over the limit
 * with 413 whatever their type, charsets other than UTF-8 with 415, and text bodies with bad UTF-8, NUL or lone
 * surrogates with 400. Every error answer under {@code /api}, {@code /admin} and {@code /healthz} is made the spec's
 * error body, whoever produced it (CXF's own 404 and 405 included); an exception nobody handled is a JSON 500.
 *
 * <p>Why one class of about 740 lines: it is the one filter in front of everything, and the order of its checks is the
 * contract (target, gate, body limits, encoding, error rewriting); its helpers are already apart (the update gate,
 * {@code DiskFull}). The edge issue (34) moves it into Atrium's own server.
 */
@Component(
        service = Filter.class,
        configurationPid = "dev.atrium.kernel.http",
        configurationPolicy = ConfigurationPolicy.OPTIONAL,
        // before every other filter, by construction: no ranking is higher, and of two equal rankings the whiteboard
        // runs the older service first, and the kernel starts before every bundle that could register one
        property = "service.ranking:Integer=" + Integer.MAX_VALUE)
@HttpWhiteboardFilterPattern("/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
@Designate(ocd = RequestEnvelope.Config.class)
public class RequestEnvelope implements Filter {

    @ObjectClassDefinition(name = "Atrium HTTP envelope")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "Largest request body in bytes, of any type, unless a route declares more with @BodyLimit")
        long maxJsonBodyBytes() default 1024 * 1024;

        @AttributeDefinition(
                description = "The URL clients reach this server at, e.g. https://atrium.example.com (by default "
                        + "ATRIUM_PUBLIC_URL, or the framework property atrium.publicBaseUrl). Unset: each request's Host header decides the OAuth issuer "
                        + "and the URLs the server publishes")
        String publicBaseUrl() default "";
    }

    public static final String REQUEST_ID = "atrium.requestId";

    private static final Logger LOG = LoggerFactory.getLogger(RequestEnvelope.class);
    private static final Pattern CLIENT_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private final long maxJsonBody;
    private final UpdateGate gate;
    private final HostRouting routing;

    @Activate
    public RequestEnvelope(
            Config config,
            @Reference UpdateGate gate,
            @Reference HostRouting routing,
            @Reference ApplicationRebuilds rebuilds) {
        this.maxJsonBody = config.maxJsonBodyBytes();
        this.gate = gate;
        this.routing = routing;
        this.rebuilds = rebuilds;
    }

    private final ApplicationRebuilds rebuilds;

    @Override
    public void init(javax.servlet.FilterConfig config) {
        // nothing to set up: configuration comes from the component
    }

    @Override
    public void destroy() {
        // nothing held
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        // a deployed service's traffic is its own (its paths, its errors, its headers): routed before the API's rules
        HostRouting.Outcome routed = routing.route(request, response);
        if (routed == HostRouting.Outcome.ROUTED) {
            return;
        }
        if (routed == HostRouting.Outcome.UNAVAILABLE) {
            response.setHeader("Retry-After", "5");
            writeError(
                    response,
                    503,
                    "this host is not served right now: " + request.getAttribute(HostRouting.UNAVAILABLE_BECAUSE));
            return;
        }
        String id = request.getHeader("X-Request-Id");
        if (id == null || !CLIENT_ID.matcher(id).matches()) {
            id = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
        }
        request.setAttribute(REQUEST_ID, id);
        response.setHeader("X-Request-Id", id);

        // every path, not only the covered ones: Jetty resolves /static/../api/x and /ap%69/x to /api/x after
        // this filter has looked at the raw target
        String rawPath = request.getRequestURI();
        String refused = UriCheck.pathProblem(rawPath);
        Area area = Area.of(refused == null ? UriCheck.decodedPath(rawPath) : rawPath);
        if (refused == null) {
            refused = UriCheck.queryProblem(request.getQueryString());
        }
        if (refused != null) {
            refuseUnread(request, response, area, 400, refused);
            return;
        }
        // a charset nobody here reads is refused everywhere: past the API's prefixes (a page, an unknown path) the
        // servlet that would read the body failed on it with a 500
        String contentType = request.getContentType();
        refused = BodyCheck.charsetProblem(contentType);
        if (refused != null) {
            refuseUnread(request, response, area, 415, refused);
            return;
        }
        if (area == Area.OTHER) {
            // pages, Git and /metrics: they wait for a rebuild of the JAX-RS application too (some of them are in it),
            // but a rebuild does not wait for them (a Git push is long)
            try {
                rebuilds.enter(false);
                guarded(request, response, area, id, () -> chain.doFilter(request, response));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                refuse(response, area, 503, "the server is shutting down");
            }
            return;
        }
        BodyCheck.Kind kind = BodyCheck.Kind.of(contentType);
        boolean hasBody = request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null;
        HttpServletRequest wrapped;
        if (kind != BodyCheck.Kind.OTHER && hasBody) {
            // text bodies (JSON, forms, plain text) are read here whole, at most the limit, and checked once for all
            // routes; a route may raise the limit for binary uploads only (see BodyLimit)
            if (request.getContentLengthLong() > maxJsonBody) {
                tooLarge(request, response, area, maxJsonBody);
                return;
            }
            byte[] body;
            try {
                body = readAtMost(request.getInputStream(), maxJsonBody);
            } catch (BodyTooLargeException e) {
                tooLarge(request, response, area, maxJsonBody);
                return;
            } catch (IOException e) {
                malformedBody(response, area, e);
                return;
            }
            refused = BodyCheck.problem(body, kind);
            if (refused != null) {
                refuse(response, area, 400, refused);
                return;
            }
            wrapped = new BufferedBody(request, body);
        } else {
            if (area != Area.API && request.getContentLengthLong() > maxJsonBody) {
                // no route under /oauth or /auth declares a larger limit: refuse before any is chosen
                tooLarge(request, response, area, maxJsonBody);
                return;
            }
            BodyAllowance allowance = new BodyAllowance(maxJsonBody);
            request.setAttribute(BODY_ALLOWANCE, allowance);
            wrapped = new LimitedBody(request, allowance);
        }
        // the update gate's own probe of the rebuilt application must pass the gate it is about to open
        boolean api = (rawPath.startsWith("/api/") || rawPath.equals("/api"))
                && !gate.isProbe(request.getHeader(WhiteboardProbe.HEADER));
        ErrorCapture capture = area == Area.API ? new ErrorCapture(response) : null;
        if (api) {
            try {
                long held = gate.enter();
                if (held == UpdateGate.STILL_CLOSED) {
                    response.setHeader("Retry-After", "2");
                    refuse(response, area, 503, "the server is still applying a change to its capabilities; try again");
                    return;
                }
                if (held > 0) {
                    response.setHeader("X-Atrium-Held-Ms", Long.toString(held));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                refuse(response, area, 503, "the server is shutting down");
                return;
            }
        }
        HttpServletResponse out = capture == null ? response : capture;
        boolean failed = true;
        // while Aries rebuilds the JAX-RS application every route of it answers "no route": a request waits for the
        // rebuilt one, and a rebuild waits (briefly) for the API requests already inside (not the operator's, which
        // may be waiting for the change itself). Not the update gate's own probes nor /healthz: they are how the end
        // of a change is seen.
        boolean counted = !rawPath.equals("/healthz") && !gate.isProbe(request.getHeader(WhiteboardProbe.HEADER));
        try {
            if (counted) {
                long held = rebuilds.enter(!rawPath.startsWith("/admin/"));
                if (held > 0) {
                    response.setHeader("X-Atrium-Held-Ms", Long.toString(held));
                }
            }
            failed = !guarded(wrapped, response, area, id, () -> chain.doFilter(wrapped, out));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failed = true;
            refuse(response, area, 503, "the server is shutting down");
        } finally {
            if (counted) {
                rebuilds.exit();
            }
            if (api) {
                gate.exit();
            }
            if (capture != null && !failed) {
                capture.finish(request, id);
            }
        }
    }

    /** Which answers a path gets: the API's error body, OAuth's, or neither (the envelope only numbers them). */
    enum Area {
        /** {@code /api}, {@code /admin}, {@code /healthz}, and federation's {@code /ap}, {@code /ns}, {@code /.well-known}: every error is the spec's body. */
        API,
        /** {@code /oauth}: OAuth's {@code {"error","error_description"}}. */
        OAUTH,
        /** {@code /auth}: sign-in pages; the envelope's own refusals are the spec's body. */
        AUTH,
        OTHER;

        static Area of(String path) {
            if (covered(path)) {
                return API;
            }
            if (path.equals("/oauth") || path.startsWith("/oauth/")) {
                return OAUTH;
            }
            if (path.equals("/auth") || path.startsWith("/auth/")) {
                return AUTH;
            }
            return OTHER;
        }
    }

    private interface Step {
        void run() throws IOException, ServletException;
    }

    /**
     * Runs the rest of the chain so that an exception nobody handled still ends as a JSON 500 (or 413 for a body
     * over the limit), never Jetty's HTML page with a stack trace. Returns whether the chain ended normally.
     */
    private static boolean guarded(
            HttpServletRequest request, HttpServletResponse response, Area area, String id, Step step)
            throws IOException {
        try {
            step.run();
            return true;
        } catch (IOException | ServletException | RuntimeException e) {
            BodyTooLargeException tooLarge = find(e, BodyTooLargeException.class);
            IOException diskFull = tooLarge == null ? DiskFull.find(e) : null;
            if (diskFull != null) {
                LOG.warn(
                        "request {} {} {} refused: the disk is full ({})",
                        id,
                        request.getMethod(),
                        request.getRequestURI(),
                        diskFull.toString());
            } else if (tooLarge == null && e instanceof IOException && response.isCommitted()) {
                // mostly a client that went away mid-answer: nothing to answer, nothing of ours broken
                LOG.debug("request {} {} {}: {}", id, request.getMethod(), request.getRequestURI(), e.toString());
            } else if (tooLarge == null) {
                LOG.error("request {} {} {} failed", id, request.getMethod(), request.getRequestURI(), e);
            }
            if (response.isCommitted()) {
                return false;
            }
            response.reset();
            response.setHeader("X-Request-Id", id);
            if (tooLarge != null) {
                response.setHeader("Connection", "close");
                refuse(response, area, 413, tooLarge.getMessage());
            } else if (diskFull != null) {
                refuse(response, area, DiskFull.STATUS, DiskFull.MESSAGE);
            } else {
                refuse(response, area, 500, "internal error (request " + id + ")");
            }
            return false;
        }
    }

    private static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (int depth = 0; t != null && depth < 10; depth++) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
            t = t.getCause() == null && t instanceof ServletException se ? se.getRootCause() : t.getCause();
        }
        return null;
    }

    private static void tooLarge(HttpServletRequest request, HttpServletResponse response, Area area, long limit)
            throws IOException {
        refuseUnread(request, response, area, 413, "request body is larger than " + limit + " bytes");
    }

    /**
     * A refusal before the body was read: Jetty closes a connection whose request body is left unread, so say so
     * ({@code Connection: close}) rather than let the client send its next request into a closed connection; a modest
     * body is drained first.
     */
    private static void refuseUnread(
            HttpServletRequest request, HttpServletResponse response, Area area, int status, String message)
            throws IOException {
        boolean hasBody = request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null;
        if (hasBody) {
            response.setHeader("Connection", "close");
        }
        refuse(response, area, status, message);
        if (hasBody) {
            response.flushBuffer();
            discardModestBody(request);
        }
    }

    /** The envelope's own refusal, in the error format of the path's area. */
    static void refuse(HttpServletResponse response, Area area, int status, String message) throws IOException {
        if (area == Area.OAUTH) {
            java.util.Map<String, String> m = new java.util.LinkedHashMap<>();
            m.put(
                    "error",
                    status >= 500 ? (status == 503 ? "temporarily_unavailable" : "server_error") : "invalid_request");
            m.put("error_description", message);
            byte[] body = OAUTH_JSON.writeValueAsBytes(m);
            response.setStatus(status);
            response.setContentType("application/json");
            response.setHeader("Cache-Control", "no-store");
            response.setContentLength(body.length);
            response.getOutputStream().write(body);
            return;
        }
        writeError(response, status, message);
    }

    /**
     * A body Jetty's parser refused while the envelope read it (a bad chunk, a body shorter than its length): the
     * client's mistake, 400, not the 500 of an exception nobody handled. When the client is gone, nobody hears it.
     */
    private void malformedBody(HttpServletResponse response, Area area, IOException e) throws IOException {
        org.eclipse.jetty.http.HttpException http = null;
        for (Throwable t = e; t != null && http == null; t = t.getCause()) {
            if (t instanceof org.eclipse.jetty.http.HttpException h) {
                http = h;
            }
        }
        if (http == null || response.isCommitted()) {
            throw e;
        }
        response.setHeader("Connection", "close");
        try {
            refuse(response, area, http.getCode(), "the request body could not be read: " + http.getReason());
        } catch (IOException gone) {
            LOG.debug("the client went before its malformed body was answered: {}", gone.toString());
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper OAUTH_JSON = JsonMappers.create();

    /** At most {@code limit} bytes of the body; more is {@link BodyTooLargeException}. */
    static byte[] readAtMost(java.io.InputStream in, long limit) throws IOException {
        byte[] body = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, limit + 1));
        if (body.length > limit) {
            throw new BodyTooLargeException(limit);
        }
        return body;
    }

    static boolean covered(String path) {
        return path.equals("/healthz")
                || path.startsWith("/api/")
                || path.equals("/api")
                || path.startsWith("/admin/")
                || path.equals("/admin")
                || path.startsWith("/ap/")
                || path.startsWith("/ns/")
                || path.startsWith("/.well-known/");
    }

    static void writeError(HttpServletResponse response, int status, String message) throws IOException {
        byte[] body = ErrorBody.bytes(status, message);
        response.setStatus(status);
        response.setContentType("application/json");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    /** Passes successful answers straight through; buffers error answers so their body can be made the spec's. */
    private static final class ErrorCapture extends HttpServletResponseWrapper {

        private int status = 200;
        private String errorMessage;
        private ByteArrayOutputStream buffer;
        private ServletOutputStream bufferStream;
        private PrintWriter bufferWriter;

        ErrorCapture(HttpServletResponse response) {
            super(response);
        }

        private boolean capturing() {
            return buffer != null;
        }

        private void startCapture() {
            if (buffer == null && !getResponse().isCommitted()) {
                buffer = new ByteArrayOutputStream();
            }
        }

        @Override
        public void setStatus(int sc) {
            status = sc;
            if (sc >= 400) {
                startCapture();
            }
            super.setStatus(sc);
        }

        @Override
        @SuppressWarnings("deprecation")
        public void setStatus(int sc, String sm) {
            setStatus(sc);
        }

        @Override
        public void sendError(int sc, String msg) {
            status = sc;
            errorMessage = msg;
            startCapture();
            super.setStatus(sc);
        }

        @Override
        public void sendError(int sc) {
            sendError(sc, null);
        }

        @Override
        public int getStatus() {
            return status;
        }

        @Override
        public ServletOutputStream getOutputStream() throws IOException {
            if (!capturing()) {
                return super.getOutputStream();
            }
            if (bufferStream == null) {
                bufferStream = new ServletOutputStream() {
                    @Override
                    public void write(int b) {
                        buffer.write(b);
                    }

                    @Override
                    public void write(byte[] b, int off, int len) {
                        buffer.write(b, off, len);
                    }

                    @Override
                    public boolean isReady() {
                        return true;
                    }

                    @Override
                    public void setWriteListener(WriteListener listener) {
                        throw new UnsupportedOperationException();
                    }
                };
            }
            return bufferStream;
        }

        @Override
        public PrintWriter getWriter() throws IOException {
            if (!capturing()) {
                return super.getWriter();
            }
            if (bufferWriter == null) {
                bufferWriter = new PrintWriter(new OutputStreamWriter(getOutputStream(), StandardCharsets.UTF_8));
            }
            return bufferWriter;
        }

        @Override
        public void setContentLength(int len) {
            if (!capturing()) {
                super.setContentLength(len);
            }
        }

        @Override
        public void setContentLengthLong(long len) {
            if (!capturing()) {
                super.setContentLengthLong(len);
            }
        }

        @Override
        public void flushBuffer() throws IOException {
            if (!capturing()) {
                super.flushBuffer();
            }
        }

        @Override
        public boolean isCommitted() {
            return !capturing() && super.isCommitted();
        }

        @Override
        public void resetBuffer() {
            if (capturing()) {
                buffer.reset();
            } else {
                super.resetBuffer();
            }
        }

        void finish(HttpServletRequest request, String requestId) throws IOException {
            if (!capturing()) {
                return;
            }
            if (bufferWriter != null) {
                bufferWriter.flush();
            }
            byte[] body = buffer.toByteArray();
            HttpServletResponse response = (HttpServletResponse) getResponse();
            if (!ErrorBody.isErrorBody(body)) {
                body = ErrorBody.bytes(status, describe(request));
                response.setContentType("application/json");
            }
            // 503 is a retry, 507 a full disk the kernel has already warned of: neither is a failure of this server's
            // code
            if (status >= 500 && status != 503 && status != DiskFull.STATUS) {
                LOG.error(
                        "request {} {} {} answered {}",
                        requestId,
                        request.getMethod(),
                        request.getRequestURI(),
                        status);
            }
            response.setStatus(status);
            response.setContentLength(body.length);
            response.getOutputStream().write(body);
        }

        private String describe(HttpServletRequest request) {
            String route = request.getMethod() + " " + request.getRequestURI();
            return switch (status) {
                case 404 -> "no route for " + route;
                case 405 -> "method " + request.getMethod() + " is not allowed on " + request.getRequestURI();
                case 406 -> "no acceptable representation for " + route;
                case 415 -> "unsupported content type " + request.getContentType() + " for " + route;
                case 401 -> "authentication required";
                default ->
                    errorMessage != null && status < 500
                            ? errorMessage
                            : status >= 500
                                    ? "internal error (request " + request.getAttribute(REQUEST_ID) + ")"
                                    : "request refused";
            };
        }
    }

    /**
     * How many bytes of a binary body a route may read: the envelope's limit unless the route declares a larger one
     * with {@link dev.atrium.kernel.api.BodyLimit} (the kernel's JAX-RS filter raises it once the route is known).
     */
    public static final class BodyAllowance {
        private volatile long limit;

        BodyAllowance(long limit) {
            this.limit = limit;
        }

        public long limit() {
            return limit;
        }

        public void allow(long bytes) {
            limit = bytes;
        }
    }

    /** The request attribute holding the request's {@link BodyAllowance}. */
    public static final String BODY_ALLOWANCE = "atrium.bodyAllowance";

    /** A text body the envelope has read and checked, replayed to the route. */
    private static final class BufferedBody extends HttpServletRequestWrapper {

        private final byte[] body;
        private ServletInputStream stream;
        private java.io.BufferedReader reader;

        BufferedBody(HttpServletRequest request, byte[] body) {
            super(request);
            this.body = body;
        }

        @Override
        public int getContentLength() {
            return body.length;
        }

        @Override
        public long getContentLengthLong() {
            return body.length;
        }

        @Override
        public String getCharacterEncoding() {
            return "UTF-8";
        }

        @Override
        public ServletInputStream getInputStream() {
            if (stream == null) {
                java.io.ByteArrayInputStream in = new java.io.ByteArrayInputStream(body);
                stream = new ServletInputStream() {
                    @Override
                    public int read() {
                        return in.read();
                    }

                    @Override
                    public int read(byte[] b, int off, int len) {
                        return in.read(b, off, len);
                    }

                    @Override
                    public boolean isFinished() {
                        return in.available() == 0;
                    }

                    @Override
                    public boolean isReady() {
                        return true;
                    }

                    @Override
                    public void setReadListener(ReadListener listener) {
                        try {
                            listener.onDataAvailable();
                            listener.onAllDataRead();
                        } catch (IOException e) {
                            listener.onError(e);
                        }
                    }
                };
            }
            return stream;
        }

        @Override
        public java.io.BufferedReader getReader() {
            if (reader == null) {
                reader = new java.io.BufferedReader(
                        new java.io.InputStreamReader(getInputStream(), StandardCharsets.UTF_8));
            }
            return reader;
        }
    }

    /** Refuses to read more than the allowance from a binary (or chunked) body. */
    private static final class LimitedBody extends HttpServletRequestWrapper {

        private final BodyAllowance allowance;
        private ServletInputStream stream;

        LimitedBody(HttpServletRequest request, BodyAllowance allowance) {
            super(request);
            this.allowance = allowance;
        }

        @Override
        public ServletInputStream getInputStream() throws IOException {
            if (stream == null) {
                ServletInputStream in = super.getInputStream();
                stream = new ServletInputStream() {
                    private long read;

                    @Override
                    public int read() throws IOException {
                        int b = in.read();
                        if (b >= 0) {
                            count(1);
                        }
                        return b;
                    }

                    @Override
                    public int read(byte[] b, int off, int len) throws IOException {
                        int n = in.read(b, off, len);
                        if (n > 0) {
                            count(n);
                        }
                        return n;
                    }

                    private void count(int n) throws BodyTooLargeException {
                        read += n;
                        long limit = allowance.limit();
                        if (read > limit) {
                            throw new BodyTooLargeException(limit);
                        }
                    }

                    @Override
                    public boolean isFinished() {
                        return in.isFinished();
                    }

                    @Override
                    public boolean isReady() {
                        return in.isReady();
                    }

                    @Override
                    public void setReadListener(ReadListener listener) {
                        in.setReadListener(listener);
                    }
                };
            }
            return stream;
        }
    }

    /**
     * Reads and drops a refused body of up to {@link #DRAIN_LIMIT} bytes. Closing the connection while the client
     * is still sending makes TCP reset it, and the client may lose the 413 it was sent; a larger body is not
     * worth reading, so that client takes its chances.
     */
    private static void discardModestBody(HttpServletRequest request) {
        if (request.getContentLengthLong() > DRAIN_LIMIT) {
            return;
        }
        try (var in = request.getInputStream()) {
            in.skipNBytes(request.getContentLengthLong());
        } catch (IOException | RuntimeException gone) {
            // the client went away: nothing left to protect
        }
    }

    private static final long DRAIN_LIMIT = 16L << 20;

    /** Thrown while reading a body past the limit; the kernel's exception mapper answers it with 413. */
    public static final class BodyTooLargeException extends IOException {
        private static final long serialVersionUID = 1L;

        public BodyTooLargeException(long limit) {
            super("request body is larger than " + limit + " bytes");
        }
    }
}
