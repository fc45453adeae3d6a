package dev.atrium.runs.internal;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;

import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Authenticator;
import dev.atrium.kernel.api.Caller;
import dev.atrium.runs.internal.RunStore.Run;

/**
 * What the run streams served beside JAX-RS (Server-Sent Events, WebSocket) ask of a request before they open: the
 * kernel's caller (bearer token or browser session), the scope {@code runs:read}, the run's workspace proved through
 * the kernel, and where to resume.
 */
final class StreamRequests {

    private StreamRequests() {
    }

    static Run authorize(Authenticator authenticator, RunAccess access, HttpServletRequest request, String runId) {
        Caller caller = authenticator.authenticateReading(request.getHeader("Authorization"), request.getHeader("Cookie"));
        if (caller == null) {
            throw ApiException.unauthorized("authentication required: send Authorization: Bearer <token>");
        }
        if (request.getHeader("Authorization") == null && !sameOrigin(request)) {
            // a page of another site can open a WebSocket with the browser's cookie; it must not read a run with it
            throw ApiException.forbidden("a cookie-authenticated stream must come from this server's own pages");
        }
        if (!caller.hasScope("runs:read")) {
            throw ApiException.forbidden("this token lacks the scope runs:read");
        }
        return access.owned(caller, runId);
    }

    /** No {@code Origin} (not a browser script) or one naming the host the request was sent to. */
    static boolean sameOrigin(HttpServletRequest request) {
        String origin = request.getHeader("Origin");
        if (origin == null) {
            return true;
        }
        String host = request.getHeader("Host");
        try {
            URI o = URI.create(origin);
            String authority = o.getRawAuthority();
            return host != null && authority != null && authority.equalsIgnoreCase(host);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** The event id to resume after: {@code Last-Event-ID}, else {@code ?last_event_id}, else 0. */
    static long resumeAfter(HttpServletRequest request) {
        String header = request.getHeader("Last-Event-ID");
        return RunAccess.nonNegative("Last-Event-ID", header != null && !header.isBlank() ? header : request.getParameter("last_event_id"));
    }

    /** The request under the kernel's javax wrappers: Felix's wrapper of the container's jakarta request. */
    static javax.servlet.ServletRequest unwrap(javax.servlet.ServletRequest req) {
        javax.servlet.ServletRequest r = req;
        while (r instanceof javax.servlet.ServletRequestWrapper w) {
            r = w.getRequest();
        }
        return r;
    }

    /** The response under the kernel's javax wrappers (its error capture): Felix's wrapper of the jakarta response. */
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
        byte[] body = RunStore.JSON.writeValueAsString(java.util.Map.of("error", java.util.Map.of("code", e.code(), "message", e.getMessage())))
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
