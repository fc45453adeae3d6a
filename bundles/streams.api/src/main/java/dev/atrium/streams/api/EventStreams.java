package dev.atrium.streams.api;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import java.io.IOException;
import java.util.OptionalLong;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The streaming stack as a service: a capability opens one {@link StreamHub} per kind of stream when its component
 * activates and closes it when it deactivates, and serves its stream routes from a servlet filter behind the kernel's
 * envelope (the route, the caller and its scope stay the capability's; what the caller owns stays the kernel's).
 */
@ProviderType
public interface EventStreams {

    <E> StreamHub<E> open(Feed<E> feed, HubOptions options);

    /**
     * The position a client resumes after: {@code Last-Event-ID}, else {@code ?last_event_id}; empty when it sent
     * neither.
     *
     * @throws ApiException 400 when the value is not a non-negative integer
     */
    OptionalLong lastEventId(HttpServletRequest request);

    /**
     * The caller of a stream request, as the kernel authenticates it ({@code Authorization: Bearer}, or the browser
     * session's cookie only from this server's own pages: a page of another site can open a WebSocket with the
     * browser's cookie, and must not read a stream with it), holding {@code scope}.
     *
     * @throws ApiException 401 without a valid credential, 403 for a cookie from another origin or a missing scope
     */
    Caller caller(HttpServletRequest request, String scope);

    /**
     * A reader of another server's event stream on {@code in}, refusing an event (or a line) larger than
     * {@code maxEventBytes}. The caller closes {@code in}.
     */
    EventStreamReader reader(java.io.InputStream in, int maxEventBytes);

    /** Writes the spec's error body for {@code e}, unless the response is committed already. */
    void refuse(HttpServletResponse response, ApiException e) throws IOException;
}
