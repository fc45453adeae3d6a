package dev.atrium.streams.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Authenticator;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.DatabaseChannels;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.streams.api.EventStreamReader;
import dev.atrium.streams.api.EventStreams;
import dev.atrium.streams.api.Feed;
import dev.atrium.streams.api.HubOptions;
import dev.atrium.streams.api.StreamHub;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

/**
 * The streaming stack. Hubs are the capabilities', opened and closed by their components; one a capability left open
 * is closed here when this bundle stops, so that no lane or heartbeat thread outlives it.
 */
@Component(service = {EventStreams.class, io.micrometer.core.instrument.binder.MeterBinder.class})
public class EventStreamsService implements EventStreams, io.micrometer.core.instrument.binder.MeterBinder {

    private final ObjectMapper json = JsonMappers.create();
    private final DatabaseChannels databaseChannels;
    private final Authenticator authenticator;
    private final Set<Hub<?>> hubs = ConcurrentHashMap.newKeySet();

    @Activate
    public EventStreamsService(@Reference DatabaseChannels databaseChannels, @Reference Authenticator authenticator) {
        this.databaseChannels = databaseChannels;
        this.authenticator = authenticator;
    }

    @Deactivate
    void deactivate() {
        hubs.forEach(Hub::close);
        hubs.clear();
    }

    /** Subscribers of every stream (SSE and WebSocket alike) for the metrics capability. */
    @Override
    public void bindTo(io.micrometer.core.instrument.MeterRegistry registry) {
        io.micrometer.core.instrument.Gauge.builder(
                        "atrium.stream.subscribers",
                        hubs,
                        all -> all.stream().mapToInt(Hub::subscribers).sum())
                .description("Clients subscribed to event streams (SSE and WebSocket) now")
                .register(registry);
    }

    @Override
    public <E> StreamHub<E> open(Feed<E> feed, HubOptions options) {
        Hub<E> hub = new Hub<>(feed, options, databaseChannels, hubs::remove);
        hubs.add(hub);
        return hub;
    }

    @Override
    public OptionalLong lastEventId(HttpServletRequest request) {
        String header = request.getHeader("Last-Event-ID");
        String value = header != null && !header.isBlank() ? header : request.getParameter("last_event_id");
        if (value == null || value.isBlank()) {
            return OptionalLong.empty();
        }
        try {
            long v = Long.parseLong(value.trim());
            if (v >= 0) {
                return OptionalLong.of(v);
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw ApiException.badRequest("Last-Event-ID must be a non-negative integer");
    }

    @Override
    public Caller caller(HttpServletRequest request, String scope) {
        Caller caller =
                authenticator.authenticateReading(request.getHeader("Authorization"), request.getHeader("Cookie"));
        if (caller == null) {
            throw ApiException.unauthorized("authentication required: send Authorization: Bearer <token>");
        }
        if (request.getHeader("Authorization") == null && !sameOrigin(request)) {
            throw ApiException.forbidden("a cookie-authenticated stream must come from this server's own pages");
        }
        if (!caller.hasScope(scope)) {
            throw ApiException.forbidden("this token lacks the scope " + scope);
        }
        return caller;
    }

    /** No {@code Origin} (not a browser script), or one naming the host the request was sent to. */
    static boolean sameOrigin(HttpServletRequest request) {
        String origin = request.getHeader("Origin");
        if (origin == null) {
            return true;
        }
        String host = request.getHeader("Host");
        try {
            String authority = java.net.URI.create(origin).getRawAuthority();
            return host != null && authority != null && authority.equalsIgnoreCase(host);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    @Override
    public EventStreamReader reader(java.io.InputStream in, int maxEventBytes) {
        return new SseEventReader(in, maxEventBytes);
    }

    @Override
    public void refuse(HttpServletResponse response, ApiException e) throws IOException {
        if (response.isCommitted()) {
            return;
        }
        byte[] body = json.writeValueAsString(ApiException.body(e.code(), e.getMessage()))
                .getBytes(StandardCharsets.UTF_8);
        response.setStatus(e.status());
        if (e.status() == 401) {
            response.setHeader("WWW-Authenticate", "Bearer realm=\"atrium\"");
        }
        response.setContentType("application/json");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
