package dev.atrium.actions.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.repos.api.RepositoryRegistry;
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
 * {@code GET /api/repos/:repoId/actions/runs/:runId/ws}: a run's events (jobs and steps starting and ending, log
 * output in chunks, the run's end) over a WebSocket, or as Server-Sent Events when the request asks for
 * {@code text/event-stream}; resuming after {@code Last-Event-ID} (or {@code ?last_event_id}), ended after the run's
 * end. A servlet filter behind the kernel's envelope, like the agent runs' streams; who may read the repository is
 * the repositories capability's answer.
 */
@Component(service = Filter.class, property = "service.ranking:Integer=-1000")
@HttpWhiteboardFilterPattern("/api/repos/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
public class RunStreams implements Filter {

    private static final Pattern ROUTE = Pattern.compile("/api/repos/([^/]+)/actions/runs/([^/]+)/ws/?");

    private final RepositoryRegistry repositories;
    private final ActionStore store;
    private final RunEvents events;
    private final EventStreams eventStreams;

    @Activate
    public RunStreams(
            @Reference RepositoryRegistry repositories,
            @Reference ActionStore store,
            @Reference RunEvents events,
            @Reference EventStreams eventStreams) {
        this.repositories = repositories;
        this.store = store;
        this.events = events;
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
        if (!m.matches()) {
            chain.doFilter(req, res);
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
            Caller caller = eventStreams.caller(request, "repos:read");
            repositories.readable(caller, m.group(1));
            String runId = store.run(m.group(1), m.group(2))
                    .orElseThrow(() -> ApiException.notFound("run not found"))
                    .id();
            long after = eventStreams.lastEventId(request).orElse(0);
            String accept = request.getHeader("Accept");
            String upgrade = request.getHeader("Upgrade");
            boolean websocket = upgrade != null
                    && upgrade.toLowerCase(java.util.Locale.ROOT).contains("websocket");
            boolean sse = !websocket && accept != null && accept.contains("text/event-stream");
            if (sse) {
                events.hub.serveSse(request, response, runId, after);
            } else {
                events.hub.serveWebSocket(request, response, runId, after);
            }
        } catch (ApiException e) {
            eventStreams.refuse(response, e);
        }
    }
}
