package dev.atrium.runs.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.runs.internal.RunStore.Run;
import dev.atrium.streams.api.EventStreams;
import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterAsyncSupported;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterPattern;

/**
 * {@code GET /api/runs/:id/sse} and {@code GET /api/runs/:id/ws}: a run's events as Server-Sent Events ({@code id} the
 * event id, {@code event} its type, {@code data} the event as JSON; comments as heartbeats) or over a WebSocket (one
 * text message per event, pings as heartbeats; 1000 after the terminal event, 1012 when this bundle stops), resuming
 * after {@code Last-Event-ID} (or {@code ?last_event_id}), ended after the run's terminal event.
 * <p>
 * A servlet filter behind the kernel's envelope (request id, error bodies, update gate) and in front of JAX-RS: the
 * platform's event streams write each event's bytes once and to every subscriber's connection without blocking
 * ({@link EventStreams}), which JAX-RS's {@code SseEventSink} could not. The kernel still decides who the caller is
 * ({@link EventStreams#caller}) and whose run it is ({@link RunAccess}).
 */
@Component(service = Filter.class, property = "service.ranking:Integer=-1000")
@HttpWhiteboardFilterPattern("/api/runs/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
public class RunStreams implements Filter {

    private static final Pattern ROUTE = Pattern.compile("/api/runs/([^/]+)/(sse|ws)/?");

    private final RunAccess access;
    private final EventHub hub;
    private final EventStreams eventStreams;

    @Activate
    public RunStreams(@Reference RunAccess access, @Reference EventHub hub, @Reference EventStreams eventStreams) {
        this.access = access;
        this.hub = hub;
        this.eventStreams = eventStreams;
    }

    @Override
    public void init(FilterConfig config) {
        // configured by the component
    }

    @Override
    public void destroy() {
        // the hub ends the streams
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        Matcher m = ROUTE.matcher(request.getRequestURI());
        boolean sse = m.matches() && m.group(2).equals("sse");
        if (!m.matches() || (!sse && !"GET".equals(request.getMethod()))) {
            chain.doFilter(req, res); // another route, or a WebSocket route's other methods: JAX-RS answers them
            return;
        }
        HttpServletResponse response = (HttpServletResponse) res;
        try {
            if (!"GET".equals(request.getMethod())) {
                response.setHeader("Allow", "GET");
                throw new ApiException(
                        405,
                        "METHOD_NOT_ALLOWED",
                        "method not allowed: " + request.getMethod() + " " + request.getRequestURI());
            }
            Run run = authorize(request, m.group(1));
            long after = eventStreams.lastEventId(request).orElse(0);
            if (sse) {
                hub.streams.serveSse(request, response, run.id(), after);
            } else {
                hub.streams.serveWebSocket(request, response, run.id(), after);
            }
        } catch (ApiException e) {
            eventStreams.refuse(response, e);
        }
    }

    /** The kernel's caller with the scope {@code runs:read}, and the run's workspace proved through the kernel. */
    private Run authorize(HttpServletRequest request, String runId) {
        Caller caller = eventStreams.caller(request, "runs:read");
        return access.owned(caller, runId);
    }
}
