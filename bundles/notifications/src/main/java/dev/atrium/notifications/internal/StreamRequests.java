package dev.atrium.notifications.internal;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Authenticator;
import dev.atrium.kernel.api.Caller;

/**
 * What the notification streams served beside JAX-RS (SSE, WebSocket) ask of a request before they open, as the
 * run streams do: the kernel's caller (bearer token or browser session; a cookie only from this server's own pages)
 * and where to resume. Reading one's notifications needs the scope {@code account:read}, as the list does.
 */
final class StreamRequests {

    private StreamRequests() {
    }

    static Caller authorize(Authenticator authenticator, HttpServletRequest request) {
        Caller caller = authenticator.authenticateReading(request.getHeader("Authorization"), request.getHeader("Cookie"));
        if (caller == null) {
            throw ApiException.unauthorized("authentication required: send Authorization: Bearer <token>");
        }
        if (!caller.hasScope("account:read")) {
            throw ApiException.forbidden("this token lacks the scope account:read");
        }
        if (request.getHeader("Authorization") == null && !sameOrigin(request)) {
            throw ApiException.forbidden("a cookie-authenticated stream must come from this server's own pages");
        }
        return caller;
    }

    static boolean sameOrigin(HttpServletRequest request) {
        String origin = request.getHeader("Origin");
        if (origin == null) {
            return true;
        }
        String host = request.getHeader("Host");
        try {
            String authority = URI.create(origin).getRawAuthority();
            return host != null && authority != null && authority.equalsIgnoreCase(host);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * The stream position to resume after: {@code Last-Event-ID}, else {@code ?last_event_id}, else the Principal's
     * current position (a new stream carries what is posted from now on; the list has the rest).
     */
    static long resumeAfter(HttpServletRequest request, NotificationStore store, String principalId) {
        String header = request.getHeader("Last-Event-ID");
        String value = header != null && !header.isBlank() ? header : request.getParameter("last_event_id");
        if (value == null || value.isBlank()) {
            return store.lastSeq(principalId);
        }
        try {
            long v = Long.parseLong(value.trim());
            if (v >= 0) {
                // past the Principal's last position (an id of another server's database): resume from the present,
                // or the stream would stay silent until the positions caught up with it
                return Math.min(v, store.lastSeq(principalId));
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw ApiException.badRequest("Last-Event-ID must be a non-negative integer");
    }

    static javax.servlet.ServletRequest unwrap(javax.servlet.ServletRequest req) {
        javax.servlet.ServletRequest r = req;
        while (r instanceof javax.servlet.ServletRequestWrapper w) {
            r = w.getRequest();
        }
        return r;
    }

    static javax.servlet.ServletResponse unwrap(javax.servlet.ServletResponse res) {
        javax.servlet.ServletResponse r = res;
        while (r instanceof javax.servlet.ServletResponseWrapper w) {
            r = w.getResponse();
        }
        return r;
    }

    static void writeError(HttpServletResponse response, ApiException e) throws IOException {
        if (response.isCommitted()) {
            return;
        }
        byte[] body = NotificationStore.JSON.writeValueAsString(Map.of("error", Map.of("code", e.code(), "message", e.getMessage())))
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
