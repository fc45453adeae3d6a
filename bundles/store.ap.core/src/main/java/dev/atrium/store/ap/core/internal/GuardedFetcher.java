package dev.atrium.store.ap.core.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.store.ap.api.ActivityMedia;
import dev.atrium.store.ap.api.RemoteDocuments;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * {@link RemoteDocuments} on Jetty's client, whose name resolver is the kernel's egress guard: the addresses checked
 * are the addresses connected to, for the first request and for every redirect (each URL is checked whole first). One
 * wall-clock deadline covers all hops and the body; a body over {@link #MAX_BYTES} is refused, not truncated.
 */
@Component(
        service = {RemoteDocuments.class, GuardedFetcher.class},
        configurationPid = "dev.atrium.store.ap.core")
@Designate(ocd = GuardedFetcher.Config.class)
public class GuardedFetcher implements RemoteDocuments {

    @ObjectClassDefinition(name = "Atrium federation core")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "Longest a fetch of a remote document (all redirects and the body) or a delivery may take, in seconds")
        int fetchTimeoutSeconds() default 10;
    }

    static final int MAX_REDIRECTS = 5;
    static final Set<Integer> REDIRECTS = Set.of(301, 302, 303, 307, 308);
    private static final String THREADS = "atrium-ap-fetch";
    private static final ObjectMapper JSON = JsonMappers.create();

    private final EgressGuard guard;
    private final ActorKeyStore keys;
    private final long timeoutNanos;
    private final HttpClient client;

    @Activate
    public GuardedFetcher(@Reference EgressGuard guard, @Reference ActorKeyStore keys, Config config) throws Exception {
        this.guard = guard;
        this.keys = keys;
        this.timeoutNanos = TimeUnit.SECONDS.toNanos(Math.max(1, config.fetchTimeoutSeconds()));
        QueuedThreadPool threads = new QueuedThreadPool(16, 1);
        threads.setName(THREADS);
        threads.setDaemon(true);
        client = new HttpClient();
        client.setExecutor(threads);
        client.setScheduler(new ScheduledExecutorScheduler(THREADS + "-timer", true));
        client.setSocketAddressResolver(
                (host, port, promise) -> promise.completeWith(guard.resolve(host, port, client.getExecutor())));
        client.setFollowRedirects(false);
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.setConnectTimeout(TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
        client.setUserAgentField(new HttpField(HttpHeader.USER_AGENT, "Atrium federation"));
        client.start();
    }

    @Deactivate
    void stop() throws Exception {
        client.stop();
    }

    /** The guarded client, for deliveries (their POSTs connect only where the guard allows, too). */
    HttpClient client() {
        return client;
    }

    EgressGuard guard() {
        return guard;
    }

    long timeoutNanos() {
        return timeoutNanos;
    }

    @Override
    public JsonNode fetch(URI uri, String signAs) throws RemoteException {
        return get(uri, signAs, ActivityMedia.ACCEPT, true);
    }

    @Override
    public JsonNode fetchJrd(URI uri) throws RemoteException {
        return get(uri, null, "application/jrd+json, application/json", false);
    }

    private JsonNode get(URI first, String signAs, String accept, boolean activityPub) throws RemoteException {
        long deadline = System.nanoTime() + timeoutNanos;
        URI uri = first;
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            checkAllowed(uri);
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                throw tooLong(first);
            }
            Request request = client.newRequest(uri)
                    .timeout(left, TimeUnit.MILLISECONDS)
                    .headers(h -> h.put(HttpHeader.ACCEPT, accept));
            if (signAs != null) {
                var pair = keys.pair(signAs);
                Map<String, String> signed =
                        SigningString.sign(pair.key().keyId(), pair.privateKey(), "GET", uri, null);
                request.headers(h -> signed.forEach((name, value) -> {
                    if (!name.equals("Host")) {
                        h.put(name, value);
                    }
                }));
            }
            try (InputStreamResponseListener listener = new InputStreamResponseListener()) {
                request.send(listener);
                Response response = listener.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                int status = response.getStatus();
                String location = response.getHeaders().get(HttpHeader.LOCATION);
                if (REDIRECTS.contains(status) && location != null) {
                    uri = redirect(uri, location);
                    continue;
                }
                if (status != 200) {
                    throw new RemoteException(502, uri + " answered " + status, null);
                }
                String type = response.getHeaders().get(HttpHeader.CONTENT_TYPE);
                boolean json = type != null
                        && (ActivityMedia.isActivityPub(type)
                                || type.toLowerCase(Locale.ROOT).startsWith("application/jrd+json")
                                || (!activityPub
                                        && type.toLowerCase(Locale.ROOT).startsWith("application/json")));
                if (!json) {
                    throw new RemoteException(
                            502,
                            uri + " answered " + (type == null ? "no content type" : type) + ", not an "
                                    + (activityPub ? "ActivityPub" : "WebFinger") + " document",
                            null);
                }
                byte[] body;
                try (InputStream in = listener.getInputStream()) {
                    body = in.readNBytes(MAX_BYTES + 1);
                }
                if (body.length > MAX_BYTES) {
                    throw new RemoteException(502, uri + " sent a document larger than " + MAX_BYTES + " bytes", null);
                }
                JsonNode tree;
                try {
                    tree = JSON.readTree(body);
                } catch (JsonProcessingException e) {
                    throw new RemoteException(502, uri + " sent malformed JSON", e);
                }
                if (tree == null || !tree.isObject()) {
                    throw new RemoteException(502, uri + " sent JSON that is not an object", null);
                }
                return tree;
            } catch (TimeoutException e) {
                throw tooLong(first);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RemoteException(502, "the fetch of " + uri + " was interrupted", e);
            } catch (ExecutionException | IOException e) {
                EgressGuard.Refused refused = EgressGuard.Refused.in(e);
                if (refused != null) {
                    throw new RemoteException(400, "refused: " + refused.getMessage(), e);
                }
                if (e.getCause() instanceof TimeoutException || e instanceof java.net.SocketTimeoutException) {
                    throw tooLong(first);
                }
                throw new RemoteException(
                        502,
                        uri + " could not be fetched: " + (e.getCause() == null ? e : e.getCause()).getMessage(),
                        e);
            } finally {
                var unused = request.abort(new IOException("the fetch ended"));
            }
        }
        throw new RemoteException(502, first + " redirects more than " + MAX_REDIRECTS + " times", null);
    }

    /** The guard's verdict on a whole URL (scheme, credentials, name, addresses); its resolver checks again at connect. */
    void checkAllowed(URI uri) throws RemoteException {
        try {
            guard.check(uri);
        } catch (ApiException e) {
            throw new RemoteException(400, "refused: " + e.getMessage(), null);
        }
        if (uri.getPort() > 65_535) {
            throw new RemoteException(400, "refused: the port " + uri.getPort() + " is not valid", null);
        }
    }

    private RemoteException tooLong(URI uri) {
        return new RemoteException(
                504,
                "fetching " + uri + " took longer than " + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos) + " s",
                null);
    }

    private static URI redirect(URI from, String location) throws RemoteException {
        try {
            return from.resolve(new URI(location.trim()));
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw new RemoteException(502, from + " redirected to an invalid URL", e);
        }
    }
}
