package dev.atrium.services.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Enumeration;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamRequestContent;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterAsyncSupported;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.atrium.deploy.api.DeploymentProvider;
import dev.atrium.services.internal.Deployer.Route;

/**
 * Host routing, in front of everything else (a whiteboard filter on {@code /*} ranked above the kernel's envelope): a
 * request whose Host is {@code <slug>.<apps domain>} or a verified custom domain is proxied to the service's running
 * deployment ({@link DeploymentProvider#endpoint}), the canary chosen per request by its share; bodies stream both ways
 * (a blocking pass-through over Jetty's pooled HTTP client). An unknown name under the apps domain is 404 with the spec
 * body; every other Host goes on to the API as before. {@code /internal/bindings/…} is the binding endpoint deployed code
 * calls ({@link InternalBindings}).
 */
@Component(service = Filter.class, property = "service.ranking:Integer=1000")
@HttpWhiteboardFilterPattern("/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
public class HostRouter implements Filter {

    private static final Logger LOG = LoggerFactory.getLogger(HostRouter.class);
    /** Hop-by-hop headers (RFC 9110 7.6.1) and those the proxy sets itself. */
    private static final Set<String> HOP = Set.of("connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
            "te", "trailer", "transfer-encoding", "upgrade", "content-length");

    private final Deployer deployer;
    private final InternalBindings bindings;
    private final HttpClient client;

    @Activate
    public HostRouter(@Reference Deployer deployer, @Reference InternalBindings bindings) throws Exception {
        this.deployer = deployer;
        this.bindings = bindings;
        QueuedThreadPool threads = new QueuedThreadPool(64, 2);
        threads.setName("atrium-services-proxy");
        threads.setDaemon(true);
        client = new HttpClient();
        client.setExecutor(threads);
        client.setScheduler(new ScheduledExecutorScheduler("atrium-services-proxy-timer", true));
        client.setFollowRedirects(false);
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.setMaxConnectionsPerDestination(512);
        client.setIdleTimeout(60_000);
        client.setConnectTimeout(5_000);
        client.setUserAgentField(null);
        // bodies pass through as the worker sent them: no decoding of gzip, no Accept-Encoding added
        client.getContentDecoderFactories().clear();
        client.start();
    }

    @Deactivate
    void deactivate() throws Exception {
        client.stop();
    }

    @Override
    public void init(javax.servlet.FilterConfig config) {
        // configured by the component
    }

    @Override
    public void destroy() {
        // the client stops with the component
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        String uri = request.getRequestURI();
        if (uri.startsWith(InternalBindings.PREFIX)) {
            bindings.handle(request, response);
            return;
        }
        String host = host(request.getHeader("Host"));
        if (host == null) {
            chain.doFilter(req, res);
            return;
        }
        Deployer.Routes routes = deployer.routes();
        String apps = deployer.config().appsDomain().toLowerCase(Locale.ROOT);
        Route route;
        if (host.endsWith("." + apps)) {
            String slug = host.substring(0, host.length() - apps.length() - 1);
            route = slug.contains(".") ? null : routes.bySlug().get(slug);
            if (route == null) {
                error(response, 404, "NOT_FOUND", "no service answers at " + host);
                return;
            }
        } else if (host.equals(apps)) {
            error(response, 404, "NOT_FOUND", "no service answers at " + host + "; services answer at <slug>." + apps);
            return;
        } else {
            route = routes.byDomain().get(host);
            if (route == null) {
                chain.doFilter(req, res);
                return;
            }
        }
        proxy(route, request, response);
    }

    static String host(String header) {
        if (header == null || header.isBlank()) {
            return null;
        }
        String h = header.trim().toLowerCase(Locale.ROOT);
        if (h.startsWith("[")) {
            return null; // an IPv6 literal is never a service name
        }
        int colon = h.indexOf(':');
        if (colon >= 0) {
            h = h.substring(0, colon);
        }
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        return h;
    }

    private void proxy(Route route, HttpServletRequest request, HttpServletResponse response) throws IOException {
        boolean canary = route.canaryRuntimeId() != null && Canary.pick(route.canaryPercent(), ThreadLocalRandom.current());
        String runtimeId = canary ? route.canaryRuntimeId() : route.runtimeId();
        String providerName = canary ? route.canaryProvider() : route.provider();
        Optional<URI> endpoint = deployer.provider(providerName).flatMap(p -> p.provider().endpoint(runtimeId));
        if (endpoint.isEmpty()) {
            error(response, 503, "SERVICE_UNAVAILABLE", "the service's deployment is not running now; try again");
            return;
        }
        String target = endpoint.get().toString().replaceAll("/+$", "") + request.getRequestURI()
                + (request.getQueryString() == null ? "" : "?" + request.getQueryString());
        Request out = client.newRequest(target).method(request.getMethod()).timeout(300, TimeUnit.SECONDS).idleTimeout(120, TimeUnit.SECONDS);
        out.headers(h -> {
            h.remove(HttpHeader.ACCEPT_ENCODING);
            for (Enumeration<String> names = request.getHeaderNames(); names.hasMoreElements();) {
                String name = names.nextElement();
                if (HOP.contains(name.toLowerCase(Locale.ROOT))) {
                    continue;
                }
                for (Enumeration<String> values = request.getHeaders(name); values.hasMoreElements();) {
                    h.add(name, values.nextElement());
                }
            }
            String forwarded = request.getHeader("X-Forwarded-For");
            h.put("X-Forwarded-For", (forwarded == null ? "" : forwarded + ", ") + request.getRemoteAddr());
            h.put("X-Forwarded-Proto", request.isSecure() ? "https" : "http");
            h.put("X-Forwarded-Host", request.getHeader("Host"));
            h.remove(Deployer.SECRET_HEADER);
        });
        long length = request.getContentLengthLong();
        if (length > 0 || request.getHeader("Transfer-Encoding") != null) {
            String type = request.getContentType();
            out.body(new InputStreamRequestContent(type, request.getInputStream(), 16 * 1024));
        }
        InputStreamResponseListener listener = new InputStreamResponseListener();
        out.send(listener);
        Response upstream;
        try {
            upstream = listener.get(300, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.debug("services: proxying to {} failed: {}", target, e.toString());
            if (!response.isCommitted()) {
                error(response, 502, "BAD_GATEWAY", "the service's deployment did not answer");
            }
            return;
        }
        response.setStatus(upstream.getStatus());
        for (HttpField f : upstream.getHeaders()) {
            if (!HOP.contains(f.getLowerCaseName())) {
                response.addHeader(f.getName(), f.getValue());
            }
        }
        long upstreamLength = upstream.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH);
        if (upstreamLength >= 0) {
            response.setContentLengthLong(upstreamLength);
        }
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = listener.getInputStream()) {
            OutputStream os = response.getOutputStream();
            int n;
            while ((n = in.read(buffer)) >= 0) {
                os.write(buffer, 0, n);
                if (in.available() == 0) {
                    os.flush(); // stream as the worker writes (SSE, long responses): nothing waits for a full buffer
                }
            }
        } catch (IOException e) {
            // the client went away, or the worker broke off: nothing more can be said on this response
            LOG.debug("services: a proxied response of {} ended early: {}", route.serviceId(), e.toString());
            out.abort(e);
        }
    }

    static void error(HttpServletResponse response, int status, String code, String message) throws IOException {
        response.setStatus(status);
        response.setContentType("application/json");
        response.setCharacterEncoding("UTF-8");
        String body = "{\"error\":{\"code\":\"" + code + "\",\"message\":" + Deployer.JSON.writeValueAsString(message) + "}}";
        response.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
    }
}
