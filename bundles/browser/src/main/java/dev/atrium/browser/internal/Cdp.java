package dev.atrium.browser.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DevTools protocol connection to one Chromium over its browser WebSocket, with flat sessions: a command names the
 * target session it is for ({@code sessionId}), events carry the session they came from. Only what Atrium sends: no
 * generated protocol classes, so a new Chromium changes nothing here unless a command it uses changes.
 */
final class Cdp implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Cdp.class);
    static final ObjectMapper JSON = new ObjectMapper();

    /** A command Chromium answered with an error. */
    static final class CdpException extends IOException {
        private static final long serialVersionUID = 1L;

        CdpException(String message) {
            super(message);
        }
    }

    /** An event: its method, params and the flat session it came from (null: the browser's own). */
    record Event(String method, JsonNode params, String sessionId) {}

    private final WebSocket socket;
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final List<java.util.function.Consumer<Event>> listeners = new CopyOnWriteArrayList<>();
    /** Events are handled here, never on the WebSocket's thread, so a handler may send commands and wait. */
    private final Executor events;

    private volatile boolean closed;

    private Cdp(WebSocket socket, Executor events) {
        this.socket = socket;
        this.events = events;
    }

    /** Connects to {@code ws://127.0.0.1:<port>/devtools/browser/<id>}. */
    static Cdp connect(HttpClient http, URI browserSocket, Executor events, Duration timeout) throws IOException {
        Reader reader = new Reader();
        try {
            WebSocket ws = http.newWebSocketBuilder()
                    .connectTimeout(timeout)
                    .buildAsync(browserSocket, reader)
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            Cdp cdp = new Cdp(ws, events);
            reader.cdp = cdp;
            return cdp;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while connecting to Chromium", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("cannot connect to Chromium's DevTools at " + browserSocket + ": " + e, e);
        }
    }

    void onEvent(java.util.function.Consumer<Event> listener) {
        listeners.add(listener);
    }

    /** Sends a command to a target session (null: the browser) and returns its answer's {@code result}. */
    CompletableFuture<JsonNode> send(String method, Map<String, ?> params, String sessionId) {
        long id = ids.incrementAndGet();
        ObjectNode message = JSON.createObjectNode();
        message.put("id", id);
        message.put("method", method);
        message.set("params", JSON.valueToTree(params == null ? Map.of() : params));
        if (sessionId != null) {
            message.put("sessionId", sessionId);
        }
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        if (closed) {
            answer.completeExceptionally(new CdpException("the browser is closed"));
            return answer;
        }
        pending.put(id, answer);
        String text = message.toString();
        synchronized (socket) {
            // java.net.http's WebSocket allows one outstanding send; joined here so sends never overlap
            try {
                socket.sendText(text, true).join();
            } catch (RuntimeException e) {
                pending.remove(id);
                answer.completeExceptionally(new CdpException("cannot send " + method + ": " + e.getMessage()));
            }
        }
        return answer;
    }

    /** {@link #send} without waiting: for answers to events, whose failure (a target gone meanwhile) changes nothing. */
    @SuppressWarnings("FutureReturnValueIgnored")
    void fire(String method, Map<String, ?> params, String sessionId) {
        send(method, params, sessionId).whenComplete((result, failure) -> {
            if (failure != null) {
                LOG.debug("{} failed: {}", method, failure.toString());
            }
        });
    }

    /** {@link #send} and waits for the answer. */
    JsonNode call(String method, Map<String, ?> params, String sessionId, Duration timeout) throws IOException {
        try {
            return send(method, params, sessionId).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (TimeoutException e) {
            throw new CdpException(method + " got no answer within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException(e.getCause());
        }
    }

    private void received(String text) {
        JsonNode message;
        try {
            message = JSON.readTree(text);
        } catch (IOException e) {
            LOG.debug("unreadable DevTools message", e);
            return;
        }
        JsonNode id = message.get("id");
        if (id != null) {
            CompletableFuture<JsonNode> answer = pending.remove(id.asLong());
            if (answer != null) {
                JsonNode error = message.get("error");
                if (error != null) {
                    answer.completeExceptionally(
                            new CdpException(error.path("message").asText("error")));
                } else {
                    answer.complete(message.path("result"));
                }
            }
            return;
        }
        Event event = new Event(
                message.path("method").asText(),
                message.path("params"),
                message.hasNonNull("sessionId") ? message.get("sessionId").asText() : null);
        events.execute(() -> {
            for (java.util.function.Consumer<Event> listener : listeners) {
                try {
                    listener.accept(event);
                } catch (RuntimeException e) {
                    LOG.debug("a DevTools event handler failed on {}", event.method(), e);
                }
            }
        });
    }

    private void ended(String why) {
        closed = true;
        for (Long id : List.copyOf(pending.keySet())) {
            CompletableFuture<JsonNode> answer = pending.remove(id);
            if (answer != null) {
                answer.completeExceptionally(new CdpException("the browser connection ended: " + why));
            }
        }
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        ended("closed");
        socket.abort();
    }

    /**
     * The longest message taken from Chromium. A page's own answers are bounded where they are made (its HTML, its
     * text, a screenshot's size); this is the backstop: a longer message ends the connection (and the session) rather
     * than the heap.
     */
    static final int MAX_MESSAGE_CHARS = 48 * 1024 * 1024;

    /** Collects text frames into messages (a screenshot's answer comes in many frames). */
    private static final class Reader implements WebSocket.Listener {
        volatile Cdp cdp;
        private final StringBuilder partial = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            if (partial.length() + data.length() > MAX_MESSAGE_CHARS) {
                partial.setLength(0);
                partial.trimToSize();
                Cdp c = cdp;
                if (c != null) {
                    c.ended("an answer of Chromium over " + MAX_MESSAGE_CHARS + " characters");
                }
                webSocket.abort();
                return null;
            }
            partial.append(data);
            if (last) {
                String text = partial.toString();
                partial.setLength(0);
                Cdp c = cdp;
                if (c != null) {
                    c.received(text);
                }
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            Cdp c = cdp;
            if (c != null) {
                c.ended("closed by Chromium (" + statusCode + ")");
            }
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            Cdp c = cdp;
            if (c != null) {
                c.ended(String.valueOf(error));
            }
        }
    }
}
