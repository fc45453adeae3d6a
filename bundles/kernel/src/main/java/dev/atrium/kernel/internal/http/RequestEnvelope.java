package dev.atrium.kernel.internal.http;

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
 * Runs in front of every servlet, JAX-RS included. It gives each request an id ({@code X-Request-Id}), refuses
 * JSON bodies over the limit with 413, and makes every error answer under {@code /api}, {@code /admin} and
 * {@code /healthz} the spec's error body, whoever produced it (CXF's own 404 and 405 included).
 */
@Component(service = Filter.class, configurationPid = "dev.atrium.kernel.http", configurationPolicy = ConfigurationPolicy.OPTIONAL)
@HttpWhiteboardFilterPattern("/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
@Designate(ocd = RequestEnvelope.Config.class)
public class RequestEnvelope implements Filter {

    @ObjectClassDefinition(name = "Atrium HTTP envelope")
    public @interface Config {
        @AttributeDefinition(description = "Largest JSON request body in bytes")
        long maxJsonBodyBytes() default 1024 * 1024;
    }

    public static final String REQUEST_ID = "atrium.requestId";

    private static final Logger LOG = LoggerFactory.getLogger(RequestEnvelope.class);
    private static final Pattern CLIENT_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private final long maxJsonBody;
    private final UpdateGate gate;

    @Activate
    public RequestEnvelope(Config config, @Reference UpdateGate gate) {
        this.maxJsonBody = config.maxJsonBodyBytes();
        this.gate = gate;
    }

    @Override
    public void init(javax.servlet.FilterConfig config) {
        // nothing to set up: configuration comes from the component
    }

    @Override
    public void destroy() {
        // nothing held
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        String id = request.getHeader("X-Request-Id");
        if (id == null || !CLIENT_ID.matcher(id).matches()) {
            id = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
        }
        request.setAttribute(REQUEST_ID, id);
        response.setHeader("X-Request-Id", id);

        String path = request.getRequestURI();
        if (!covered(path)) {
            chain.doFilter(request, response);
            return;
        }
        if (isJson(request) && request.getContentLengthLong() > maxJsonBody) {
            response.setHeader("Connection", "close");
            writeError(response, 413, "request body is larger than " + maxJsonBody + " bytes");
            response.flushBuffer();
            discardModestBody(request);
            return;
        }
        ErrorCapture capture = new ErrorCapture(response);
        HttpServletRequest wrapped = isJson(request) ? new LimitedBody(request, maxJsonBody) : request;
        boolean api = path.startsWith("/api/");
        if (api) {
            try {
                long held = gate.enter();
                if (held > 0) {
                    response.setHeader("X-Atrium-Held-Ms", Long.toString(held));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                writeError(response, 503, "the server is shutting down");
                return;
            }
        }
        try {
            chain.doFilter(wrapped, capture);
        } finally {
            if (api) {
                gate.exit();
            }
            capture.finish(request, id);
        }
    }

    static boolean covered(String path) {
        return path.equals("/healthz") || path.startsWith("/api/") || path.equals("/api") || path.startsWith("/admin/")
                || path.equals("/admin");
    }

    private static boolean isJson(HttpServletRequest request) {
        String type = request.getContentType();
        return type == null || type.toLowerCase().contains("json");
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
            if (status >= 500 && status != 503) {
                LOG.error("request {} {} {} answered {}", requestId, request.getMethod(), request.getRequestURI(), status);
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
                default -> errorMessage != null && status < 500 ? errorMessage
                        : status >= 500 ? "internal error (request " + request.getAttribute(REQUEST_ID) + ")" : "request refused";
            };
        }
    }

    /** Refuses to read more than the limit from a chunked JSON body. */
    private static final class LimitedBody extends HttpServletRequestWrapper {

        private final long limit;
        private ServletInputStream stream;

        LimitedBody(HttpServletRequest request, long limit) {
            super(request);
            this.limit = limit;
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

        BodyTooLargeException(long limit) {
            super("request body is larger than " + limit + " bytes");
        }
    }
}
