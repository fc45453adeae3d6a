package dev.atrium.notifications.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.notifications.internal.NotificationStore.Notification;
import dev.atrium.streams.api.EventStreams;
import dev.atrium.streams.api.Feed;
import dev.atrium.streams.api.HubOptions;
import dev.atrium.streams.api.StreamHub;
import java.io.IOException;
import java.util.List;
import java.util.function.Consumer;
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
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterAsyncSupported;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterPattern;

/**
 * {@code GET /api/notifications/sse} and {@code GET /api/notifications/ws}: the caller's notifications as they are
 * posted, on any instance. SSE: {@code id} the stream position, {@code event: notification}, {@code data} the
 * notification as JSON; comments as heartbeats. WebSocket: one text message (the notification JSON, whose
 * {@code seq} is the stream position) per notification, pings as heartbeats, 1012 when this bundle stops. Both resume
 * after {@code Last-Event-ID} (or {@code ?last_event_id}); without one they start at the present.
 * <p>
 * A Principal's notifications are one stream of the platform's {@link EventStreams}: a notification's transaction
 * announces {@code principal:seq} on {@link NotificationStore#CHANNEL}, and those posted here reach local subscribers
 * from memory once committed.
 */
@Component(service = Filter.class, property = "service.ranking:Integer=-1000")
@HttpWhiteboardFilterPattern("/api/notifications/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
public class NotificationStreams implements Filter {

    private final NotificationStore store;
    private final EventStreams eventStreams;
    private final StreamHub<Notification> hub;
    private final Consumer<Notification> committedHere;

    @Activate
    public NotificationStreams(@Reference NotificationStore store, @Reference EventStreams eventStreams) {
        this.store = store;
        this.eventStreams = eventStreams;
        this.hub = eventStreams.open(
                new NotificationFeed(store), HubOptions.of("notifications", NotificationStore.CHANNEL));
        this.committedHere = hub::committed;
        store.onCommitted(committedHere);
    }

    @Deactivate
    void deactivate() {
        store.removeCommitted(committedHere);
        hub.close();
    }

    /** A Principal's notifications, by their position in its stream. */
    record NotificationFeed(NotificationStore store) implements Feed<Notification> {
        @Override
        public List<Notification> after(String principalId, long seq, int limit) {
            return store.after(principalId, seq, limit);
        }

        @Override
        public String key(Notification n) {
            return n.principalId();
        }

        @Override
        public long position(Notification n) {
            return n.seq();
        }

        @Override
        public String type(Notification n) {
            return "notification";
        }

        @Override
        public String json(Notification n) {
            return n.json();
        }
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
        String uri = request.getRequestURI();
        boolean sse = uri.equals("/api/notifications/sse") || uri.equals("/api/notifications/sse/");
        boolean ws = uri.equals("/api/notifications/ws") || uri.equals("/api/notifications/ws/");
        if (!sse && !ws) {
            chain.doFilter(req, res);
            return;
        }
        HttpServletResponse response = (HttpServletResponse) res;
        try {
            if (!"GET".equals(request.getMethod())) {
                response.setHeader("Allow", "GET");
                throw new ApiException(
                        405, "METHOD_NOT_ALLOWED", "method not allowed: " + request.getMethod() + " " + uri);
            }
            String principalId = eventStreams.caller(request, "account:read").principalId(); // as the list needs
            long after = resumeAfter(request, principalId);
            if (sse) {
                hub.serveSse(request, response, principalId, after);
            } else {
                hub.serveWebSocket(request, response, principalId, after);
            }
        } catch (ApiException e) {
            eventStreams.refuse(response, e);
        }
    }

    /**
     * The stream position to resume after: the client's, else the Principal's current position (a new stream carries
     * what is posted from now on; the list has the rest). One past the Principal's last position (an id of another
     * server's database) resumes from the present, or the stream would stay silent until the positions caught up.
     */
    private long resumeAfter(HttpServletRequest request, String principalId) {
        var asked = eventStreams.lastEventId(request);
        long last = store.lastSeq(principalId);
        return asked.isPresent() ? Math.min(asked.getAsLong(), last) : last;
    }
}
