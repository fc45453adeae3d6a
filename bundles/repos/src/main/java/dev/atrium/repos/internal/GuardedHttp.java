package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.ProtocolException;
import java.net.Proxy;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URL;
import java.security.KeyManagementException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.HostnameVerifier;
import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.OutputStreamRequestContent;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jgit.transport.http.HttpConnection;
import org.eclipse.jgit.transport.http.HttpConnectionFactory;

/**
 * The HTTP client of one remote import: Jetty's client, whose name resolver is the kernel's {@link EgressGuard}, so
 * every connection (the probe's and JGit's) goes only to addresses the guard approved while resolving that very
 * connection. JGit's own connections (java.net.HttpURLConnection) resolve names themselves, after and apart from any
 * check, so a name that answered a public address to the check and a private one to the connect (DNS rebinding)
 * would get through. Closing it stops the client and its threads.
 */
final class GuardedHttp implements HttpConnectionFactory, AutoCloseable {

    private static final String THREADS = "atrium-git-import";

    private final HttpClient client;

    GuardedHttp(EgressGuard guard) {

        QueuedThreadPool threads = new QueuedThreadPool(8, 1);
        threads.setName(THREADS);
        threads.setDaemon(true);
        client = new HttpClient();
        client.setExecutor(threads);
        client.setScheduler(new ScheduledExecutorScheduler(THREADS + "-timer", true));
        // the guard's answer for this connection, or the connection fails; on the client's threads, as Jetty resolves
        client.setSocketAddressResolver(
                (host, port, promise) -> promise.completeWith(guard.resolve(host, port, client.getExecutor())));
        client.setFollowRedirects(false); // the probe follows redirects by hand, checking each; JGit must follow none
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.setConnectTimeout(10_000);
        client.setUserAgentField(new HttpField(HttpHeader.USER_AGENT, "Atrium git-import"));
        try {
            client.start();
        } catch (Exception e) {
            close();
            throw new ApiException(
                    503, "SERVICE_UNAVAILABLE", "the import's HTTP client did not start: " + e.getMessage());
        }
        // JGit asks for gzip where it wants it and decodes it itself; the client adds its gzip decoder on start
        client.getContentDecoderFactories().clear();
    }

    HttpClient client() {
        return client;
    }

    @Override
    public void close() {
        try {
            client.stop();
        } catch (Exception e) {
            // stopping aborts what is still open; nothing else to release
        }
    }

    @Override
    public HttpConnection create(URL url) throws IOException {
        return new Connection(url);
    }

    /** No proxy: a proxy would do its own resolving, past the guard. */
    @Override
    public HttpConnection create(URL url, Proxy proxy) throws IOException {
        return new Connection(url);
    }

    /**
     * One exchange, in the shape of {@link java.net.HttpURLConnection} that JGit drives: headers are set, the body
     * (if any) is written, and the request goes out when the response is first asked for (or, for a chunked body, as
     * soon as the body is opened).
     */
    private final class Connection implements HttpConnection {
        private final URL url;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private String method = "GET";
        private long readTimeoutMillis;
        private int fixedLength = -1;
        private boolean chunked;
        private ByteArrayOutputStream buffered;
        private Request request;
        private InputStreamResponseListener listener;
        private Response response;

        Connection(URL url) {
            this.url = url;
        }

        @Override
        public URL getURL() {
            return url;
        }

        @Override
        public void setRequestProperty(String key, String value) {
            headers.put(key, value);
        }

        @Override
        public void setRequestMethod(String method) throws ProtocolException {
            if (request != null) {
                throw new ProtocolException("the request was already sent");
            }
            this.method = method;
        }

        @Override
        public String getRequestMethod() {
            return method;
        }

        @Override
        public void setUseCaches(boolean usecaches) {}

        @Override
        public void setConnectTimeout(int timeout) {
            // the client's connect timeout (10 s) holds for every connection
        }

        @Override
        public void setReadTimeout(int timeout) {
            readTimeoutMillis = timeout;
        }

        @Override
        public void setInstanceFollowRedirects(boolean followRedirects) {
            // never: a redirect target must pass the guard's checks of the whole URL, which only the probe makes
        }

        @Override
        public void setDoOutput(boolean dooutput) {}

        @Override
        public void setFixedLengthStreamingMode(int contentLength) {
            fixedLength = contentLength;
        }

        @Override
        public void setChunkedStreamingMode(int chunklen) {
            chunked = true;
        }

        @Override
        public OutputStream getOutputStream() throws IOException {
            if (request != null) {
                throw new ProtocolException("the request was already sent");
            }
            if (chunked || fixedLength < 0) {
                OutputStreamRequestContent body = new OutputStreamRequestContent(
                        headers.getOrDefault("Content-Type", "application/octet-stream"));
                send(body);
                return body.getOutputStream();
            }
            buffered = new ByteArrayOutputStream(fixedLength);
            return buffered;
        }

        private void send(Request.Content body) {
            request = client.newRequest(URI.create(url.toString())).method(method);
            request.headers(h -> headers.forEach(h::put));
            if (readTimeoutMillis > 0) {
                request.idleTimeout(readTimeoutMillis, TimeUnit.MILLISECONDS);
            }
            if (body != null) {
                request.body(body);
            }
            listener = new InputStreamResponseListener();
            request.send(listener);
        }

        @Override
        public void connect() throws IOException {
            response();
        }

        private Response response() throws IOException {
            if (response != null) {
                return response;
            }
            if (request == null) {
                byte[] body = buffered == null ? null : buffered.toByteArray();
                send(
                        body == null
                                ? null
                                : new BytesRequestContent(
                                        headers.getOrDefault("Content-Type", "application/octet-stream"), body));
            }
            // the read timeout bounds the wait for the headers as it bounds every read
            long wait = readTimeoutMillis > 0 ? readTimeoutMillis : TimeUnit.MINUTES.toMillis(5);
            try {
                response = listener.get(wait, TimeUnit.MILLISECONDS);
                return response;
            } catch (InterruptedException e) {
                var unused = request.abort(e);
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting for " + url.getHost());
            } catch (TimeoutException e) {
                var unused = request.abort(e);
                // JGit reads a SocketTimeoutException as a timeout (and, say, does not take it for refused credentials)
                throw new SocketTimeoutException(url.getHost() + " did not answer within " + wait + " ms");
            } catch (ExecutionException e) {
                EgressGuard.Refused refused = EgressGuard.Refused.in(e);
                if (refused != null) {
                    throw refused;
                }
                Throwable cause = e.getCause() == null ? e : e.getCause();
                if (cause instanceof TimeoutException) {
                    throw new SocketTimeoutException(url.getHost() + " did not answer within " + wait + " ms");
                }
                if (cause instanceof IOException io) {
                    throw io; // its type tells JGit what happened (a refused connection, a reset, a timeout)
                }
                throw new IOException(
                        cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage(), cause);
            }
        }

        @Override
        public int getResponseCode() throws IOException {
            return response().getStatus();
        }

        @Override
        public String getResponseMessage() throws IOException {
            return response().getReason();
        }

        @Override
        public InputStream getInputStream() throws IOException {
            response();
            return listener.getInputStream();
        }

        /** Header names are case-insensitive (RFC 9110), as JGit expects of HttpURLConnection. */
        @Override
        public Map<String, List<String>> getHeaderFields() {
            Map<String, List<String>> out = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            Response r = answered();
            if (r != null) {
                for (HttpField f : r.getHeaders()) {
                    out.computeIfAbsent(f.getName(), k -> new ArrayList<>()).add(f.getValue());
                }
            }
            return out;
        }

        @Override
        public List<String> getHeaderFields(String name) {
            Response r = answered();
            return r == null ? List.of() : r.getHeaders().getValuesList(name);
        }

        @Override
        public String getHeaderField(String name) {
            Response r = answered();
            return r == null ? null : r.getHeaders().get(name);
        }

        @Override
        public String getContentType() {
            return getHeaderField("Content-Type");
        }

        @Override
        public int getContentLength() {
            Response r = answered();
            long length = r == null ? -1 : r.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH);
            return length > Integer.MAX_VALUE ? -1 : (int) length;
        }

        /** The response, fetched if need be; a header getter of HttpURLConnection answers null when the exchange failed. */
        private Response answered() {
            try {
                return response();
            } catch (IOException e) {
                return null;
            }
        }

        @Override
        public boolean usingProxy() {
            return false;
        }

        @Override
        public void configure(KeyManager[] km, TrustManager[] tm, SecureRandom random) throws KeyManagementException {
            throw new KeyManagementException("an import verifies the remote's certificate with the JVM's trust store");
        }

        @Override
        public void setHostnameVerifier(HostnameVerifier hostnameverifier) throws KeyManagementException {
            throw new KeyManagementException("an import verifies the remote's host name");
        }
    }
}
