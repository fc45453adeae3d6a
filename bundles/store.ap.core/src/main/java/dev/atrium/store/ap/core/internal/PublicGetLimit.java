package dev.atrium.store.ap.core.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.FilterConfig;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterAsyncSupported;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterPattern;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The rate limit on public federation GETs ({@code /ap/*}, {@code /ns/*}, {@code /.well-known/webfinger}), whichever store
 * model serves them: a token bucket per client address ({@code perMinute} tokens a minute, at most {@code burst} kept).
 * Past it: 429 {@code RATE_LIMITED} with {@code Retry-After} (whole seconds until a token is there). Other methods (the
 * signed inbox POSTs) are not counted here. {@code perMinute} 0 switches it off.
 */
@Component(
        service = Filter.class,
        configurationPid = "dev.atrium.store.ap.ratelimit",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@HttpWhiteboardFilterPattern({"/ap/*", "/ns/*", "/.well-known/webfinger"})
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
@Designate(ocd = PublicGetLimit.Config.class)
public class PublicGetLimit implements Filter {

    @ObjectClassDefinition(name = "Atrium federation public GET rate limit")
    public @interface Config {
        @AttributeDefinition(description = "Public federation GETs a client address may make a minute (0: no limit)")
        int perMinute() default 600;

        @AttributeDefinition(description = "Requests a client address may make at once after being idle")
        int burst() default 120;
    }

    /** Addresses tracked at most; past it the idle ones (full buckets) are forgotten. */
    private static final int MAX_CLIENTS = 100_000;

    private final double perNano;
    private final double burst;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();

    private static final class Bucket {
        double tokens;
        long at;

        Bucket(double tokens, long at) {
            this.tokens = tokens;
            this.at = at;
        }
    }

    @Activate
    public PublicGetLimit(Config config) {
        this.perNano = Math.max(0, config.perMinute()) / 60e9;
        this.burst = Math.max(1, config.burst());
    }

    /**
     * Takes a token for {@code client} at {@code now} (nanoseconds); returns 0 when there was one, else the whole seconds
     * until there will be.
     */
    long take(String client, long now) {
        if (perNano == 0) {
            return 0;
        }
        if (buckets.size() > MAX_CLIENTS) {
            buckets.values().removeIf(b -> {
                synchronized (b) {
                    return b.tokens + (now - b.at) * perNano >= burst;
                }
            });
        }
        Bucket b = buckets.computeIfAbsent(client, k -> new Bucket(burst, now));
        synchronized (b) {
            b.tokens = Math.min(burst, b.tokens + Math.max(0, now - b.at) * perNano);
            b.at = now;
            if (b.tokens >= 1) {
                b.tokens -= 1;
                return 0;
            }
            return Math.max(1, (long) Math.ceil((1 - b.tokens) / perNano / 1e9));
        }
    }

    @Override
    public void init(FilterConfig config) {
        // nothing to set up
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        String method = request.getMethod();
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            chain.doFilter(req, res);
            return;
        }
        long wait = take(request.getRemoteAddr(), System.nanoTime());
        if (wait == 0) {
            chain.doFilter(req, res);
            return;
        }
        byte[] body =
                ("{\"error\":{\"code\":\"RATE_LIMITED\",\"message\":\"too many requests to the public federation documents from this"
                                + " address; retry after " + wait + " s\"}}")
                        .getBytes(StandardCharsets.UTF_8);
        HttpServletResponse response = (HttpServletResponse) res;
        response.setStatus(429);
        response.setHeader("Retry-After", Long.toString(wait));
        response.setContentType("application/json");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    @Override
    public void destroy() {
        buckets.clear();
    }
}
