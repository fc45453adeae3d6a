package dev.atrium.browser.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.browser.internal.BrowserAction.Target;
import dev.atrium.kernel.api.ApiException;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One browser session: a Chromium of its own (its own profile), one browser context in it and one page, driven over
 * the DevTools protocol. Every request of the page and of the frames and workers attached to it is paused
 * ({@code Fetch.enable} with pattern {@code *}) and judged by the {@link RequestPolicy} before it goes out; a refused
 * one fails as {@code BlockedByClient} and is listed in {@link #blocked}. One operation at a time: a second waits.
 */
final class BrowserSession implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(BrowserSession.class);
    /** How many refusals a session keeps (the newest). */
    static final int MAX_BLOCKED = 200;
    /** The tallest full-page screenshot, in CSS pixels: a page of endless height would make an endless PNG. */
    static final int MAX_FULL_PAGE_HEIGHT = 16_384;
    /**
     * The longest page HTML or text answered: a page can build a DOM of hundreds of millions of characters, and the
     * whole of it would cross the DevTools connection into this server's heap. Longer is 413.
     */
    static final int MAX_TEXT_CHARS = 8 * 1024 * 1024;

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration BUSY_WAIT = Duration.ofSeconds(60);
    private static final List<Map<String, Object>> EVERY_REQUEST =
            List.of(Map.of("urlPattern", "*", "requestStage", "Request"));

    /** A request the policy refused. */
    record Blocked(String url, String reason, Instant at) {
        Map<String, Object> toJson() {
            return Map.of("url", url, "reason", reason, "at", at.toString());
        }
    }

    final String id;
    final String principalId;
    final String spaceId;
    final Instant createdAt;
    final int width;
    final int height;
    final Duration idleTimeout;
    private final Chromium chromium;
    private final EgressProxy proxy;
    private final Cdp cdp;
    private final RequestPolicy policy;
    private final ReentrantLock busy = new ReentrantLock();
    private final ArrayDeque<Blocked> blocked = new ArrayDeque<>();
    private final ReentrantLock loadLock = new ReentrantLock();
    private final Condition loadChanged = loadLock.newCondition();
    private boolean loading;
    private volatile String targetId;
    private volatile String page;
    private volatile Page tab;
    private volatile String url = "about:blank";
    private volatile long lastUsedNanos = System.nanoTime();
    private volatile Instant lastUsedAt = Instant.now();
    private volatile boolean ended;
    private final java.util.concurrent.atomic.AtomicBoolean endClaimed =
            new java.util.concurrent.atomic.AtomicBoolean();
    private final java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);

    BrowserSession(
            String id,
            String principalId,
            String spaceId,
            int width,
            int height,
            Duration idleTimeout,
            Chromium chromium,
            EgressProxy proxy,
            Cdp cdp,
            RequestPolicy policy) {
        this.id = id;
        this.principalId = principalId;
        this.spaceId = spaceId;
        this.createdAt = Instant.now();
        this.width = width;
        this.height = height;
        this.idleTimeout = idleTimeout;
        this.chromium = chromium;
        this.proxy = proxy;
        this.cdp = cdp;
        this.policy = policy;
        proxy.onRefused(this::recordBlocked);
    }

    /**
     * Takes the page Chromium opened at start (its default context is this session's alone: the profile and the
     * process are) and puts every request of it under the policy. A second context and page would cost a renderer
     * start, a third of the session's start time.
     */
    void open() throws IOException {
        cdp.onEvent(this::event);
        String opened = null;
        for (JsonNode target :
                cdp.call("Target.getTargets", Map.of(), null, COMMAND_TIMEOUT).path("targetInfos")) {
            if ("page".equals(target.path("type").asText())) {
                opened = target.path("targetId").asText();
                break;
            }
        }
        if (opened == null) {
            opened = cdp.call(
                            "Target.createTarget",
                            Map.of("url", "about:blank", "width", width, "height", height),
                            null,
                            COMMAND_TIMEOUT)
                    .path("targetId")
                    .asText();
        }
        targetId = opened;
        page = cdp.call("Target.attachToTarget", Map.of("targetId", targetId, "flatten", true), null, COMMAND_TIMEOUT)
                .path("sessionId")
                .asText();
        tab = new Page(cdp, page);
        guard(page);
        cdp.call("Page.enable", Map.of(), page, COMMAND_TIMEOUT);
        cdp.call(
                "Emulation.setDeviceMetricsOverride",
                Map.of("width", width, "height", height, "deviceScaleFactor", 1, "mobile", false),
                page,
                COMMAND_TIMEOUT);
    }

    /** Pauses every request of a target session and attaches to its frames and workers, paused until guarded too. */
    private void guard(String session) throws IOException {
        cdp.call("Fetch.enable", Map.of("patterns", EVERY_REQUEST), session, COMMAND_TIMEOUT);
        cdp.call(
                "Target.setAutoAttach",
                Map.of("autoAttach", true, "waitForDebuggerOnStart", true, "flatten", true),
                session,
                COMMAND_TIMEOUT);
    }

    private void event(Cdp.Event e) {
        switch (e.method()) {
            case "Fetch.requestPaused" -> requestPaused(e);
            case "Target.attachedToTarget" -> {
                String child = e.params().path("sessionId").asText();
                try {
                    guard(child);
                } catch (IOException failed) {
                    LOG.debug("browser session {}: cannot guard an attached target", id, failed);
                }
                cdp.fire("Runtime.runIfWaitingForDebugger", Map.of(), child);
            }
            case "Page.frameStartedLoading" -> {
                if (isMainFrame(e)) {
                    setLoading(true);
                }
            }
            case "Page.frameStoppedLoading" -> {
                if (isMainFrame(e)) {
                    setLoading(false);
                }
            }
            case "Page.frameNavigated" -> {
                JsonNode frame = e.params().path("frame");
                if (page.equals(e.sessionId()) && !frame.hasNonNull("parentId")) {
                    url = frame.path("url").asText(url);
                }
            }
            case "Page.javascriptDialogOpening" ->
                // an alert nobody answers would block every later operation of the page
                cdp.fire("Page.handleJavaScriptDialog", Map.of("accept", false), e.sessionId());
            default -> {
                // not needed
            }
        }
    }

    private boolean isMainFrame(Cdp.Event e) {
        return page != null
                && page.equals(e.sessionId())
                && targetId.equals(e.params().path("frameId").asText());
    }

    private void requestPaused(Cdp.Event e) {
        String requestId = e.params().path("requestId").asText();
        String requestUrl = e.params().path("request").path("url").asText();
        String refusal;
        try {
            refusal = policy.refusal(requestUrl);
        } catch (RuntimeException failed) {
            refusal = "the URL could not be checked";
        }
        if (refusal == null) {
            cdp.fire("Fetch.continueRequest", Map.of("requestId", requestId), e.sessionId());
            return;
        }
        recordBlocked(requestUrl, refusal);
        cdp.fire("Fetch.failRequest", Map.of("requestId", requestId, "errorReason", "BlockedByClient"), e.sessionId());
    }

    private void recordBlocked(String requestUrl, String reason) {
        LOG.info("browser session {}: refused {} ({})", id, abbreviate(requestUrl, 300), reason);
        synchronized (blocked) {
            blocked.addLast(new Blocked(abbreviate(requestUrl, 2000), reason, Instant.now()));
            while (blocked.size() > MAX_BLOCKED) {
                blocked.removeFirst();
            }
        }
    }

    List<Blocked> blocked() {
        synchronized (blocked) {
            return List.copyOf(blocked);
        }
    }

    private void setLoading(boolean now) {
        loadLock.lock();
        try {
            loading = now;
            loadChanged.signalAll();
        } finally {
            loadLock.unlock();
        }
    }

    /** Waits until the main frame stops loading, or the time is up; true when it stopped. */
    private boolean awaitLoaded(long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        loadLock.lock();
        try {
            while (loading) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                loadChanged.awaitNanos(left);
            }
            return true;
        } finally {
            loadLock.unlock();
        }
    }

    // ---------------------------------------------------------------- operations

    /** Runs one operation at a time, keeping the session alive; a browser that fails is 409 saying so. */
    private <T> T operate(Operation<T> operation) {
        touch();
        try {
            if (!busy.tryLock(BUSY_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw ApiException.conflict("the browser session is busy with another operation");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("interrupted");
        }
        try {
            if (ended || cdp.isClosed()) {
                throw ApiException.gone("the browser session has ended");
            }
            return operation.run();
        } catch (IOException e) {
            throw ApiException.conflict("the browser could not do it: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("interrupted");
        } finally {
            busy.unlock();
            touch();
        }
    }

    private interface Operation<T> {
        T run() throws IOException, InterruptedException;
    }

    Map<String, Object> navigate(String target, int timeoutMs) {
        String refusal = policy.refusal(target);
        if (refusal != null) {
            recordBlocked(target, refusal);
            throw ApiException.badRequest("the URL may not be opened: " + refusal);
        }
        return operate(() -> {
            int before = blocked().size();
            setLoading(true);
            JsonNode answer =
                    cdp.call("Page.navigate", Map.of("url", target), page, Duration.ofMillis(timeoutMs + 5_000L));
            if (!answer.hasNonNull("loaderId")) {
                setLoading(false); // a fragment change: no load follows
            }
            boolean loaded = awaitLoaded(timeoutMs);
            Map<String, Object> result = pageState();
            String error = answer.path("errorText").asText("");
            result.put("error", error.isEmpty() ? null : error);
            result.put("loaded", loaded);
            List<Blocked> all = blocked();
            result.put(
                    "blocked",
                    all.subList(Math.min(before, all.size()), all.size()).stream()
                            .map(Blocked::toJson)
                            .toList());
            return result;
        });
    }

    Map<String, Object> act(BrowserAction action) {
        return operate(() -> {
            Map<String, Object> result = new LinkedHashMap<>();
            switch (action.kind()) {
                case "click" -> {
                    JsonNode centre = tab.callOn(tab.locate(action.target(), action.timeoutMs(), true), Scripts.CENTRE);
                    double x = centre.path("x").asDouble();
                    double y = centre.path("y").asDouble();
                    tab.mouse("mouseMoved", x, y);
                    tab.mouse("mousePressed", x, y);
                    tab.mouse("mouseReleased", x, y);
                    settle(action.timeoutMs());
                }
                case "type" -> {
                    String element = tab.locate(action.target(), action.timeoutMs(), true);
                    tab.callOn(element, Scripts.FOCUS_AND_SELECT);
                    if (action.text().isEmpty()) {
                        tab.callOn(element, Scripts.CLEAR);
                    } else {
                        cdp.call("Input.insertText", Map.of("text", action.text()), page, COMMAND_TIMEOUT);
                    }
                }
                case "press" -> {
                    if (action.target() != null) {
                        tab.callOn(tab.locate(action.target(), action.timeoutMs(), true), Scripts.FOCUS);
                    }
                    tab.key(action.key());
                    settle(action.timeoutMs());
                }
                case "select" -> {
                    String element = tab.locate(action.target(), action.timeoutMs(), true);
                    JsonNode why = tab.callOn(element, Scripts.SELECT, action.value());
                    if (why.isTextual()) {
                        throw ApiException.badRequest(why.asText());
                    }
                }
                case "scroll" -> {
                    JsonNode position = action.target() != null
                            ? tab.callOn(
                                    tab.locate(action.target(), action.timeoutMs(), false), Scripts.SCROLL_INTO_VIEW)
                            : tab.evaluate("(" + Scripts.SCROLL_WINDOW + ")(" + action.value() + ")", false);
                    result.put("scroll", Cdp.JSON.convertValue(position, Map.class));
                }
                case "wait_for" -> tab.locate(action.target(), action.timeoutMs(), true);
                default -> throw new IllegalStateException(action.kind());
            }
            result.put("ok", true);
            result.putAll(pageState());
            return result;
        });
    }

    Object extract(String kind, Target target) {
        return operate(() -> {
            String root = target == null
                    ? tab.evaluateHandle("document.body || document.documentElement")
                    : tab.locate(target, BrowserAction.DEFAULT_TIMEOUT_MS, false);
            return switch (kind) {
                case "text" -> {
                    JsonNode text = tab.callOn(root, Scripts.TEXT);
                    if (text.isNull()) {
                        throw tooLong("text");
                    }
                    yield Map.of("text", text.asText(""));
                }
                case "links" -> Map.of("links", Cdp.JSON.convertValue(tab.callOn(root, Scripts.LINKS), List.class));
                case "table" -> {
                    JsonNode table = tab.callOn(root, Scripts.TABLE);
                    if (table.isNull() || table.isMissingNode()) {
                        throw ApiException.conflict(
                                "there is no table " + (target == null ? "on the page" : "in " + target.describe()));
                    }
                    yield Map.of("table", Cdp.JSON.convertValue(table, Map.class));
                }
                case "accessibility" -> Map.of("nodes", tab.accessibility(target == null ? null : root));
                default -> throw new IllegalStateException(kind);
            };
        });
    }

    String html() {
        return operate(() -> {
            JsonNode html = tab.evaluate(
                    "(() => { const h = document.documentElement ? document.documentElement.outerHTML : '';"
                            + " return h.length > " + MAX_TEXT_CHARS + " ? null : h; })()",
                    false);
            if (html.isNull()) {
                throw tooLong("HTML");
            }
            return html.asText("");
        });
    }

    private static ApiException tooLong(String what) {
        return new ApiException(
                413, "PAYLOAD_TOO_LARGE", "the page's " + what + " is longer than " + MAX_TEXT_CHARS + " characters");
    }

    byte[] screenshot(boolean fullPage) {
        return operate(() -> {
            Map<String, Object> params = new LinkedHashMap<>();
            params.put("format", "png");
            if (fullPage) {
                JsonNode size = cdp.call("Page.getLayoutMetrics", Map.of(), page, COMMAND_TIMEOUT)
                        .path("cssContentSize");
                int w = Math.min(BrowserSessions.MAX_WIDTH, Math.max(1, (int)
                        Math.ceil(size.path("width").asDouble(width))));
                int h = Math.min(MAX_FULL_PAGE_HEIGHT, Math.max(1, (int)
                        Math.ceil(size.path("height").asDouble(height))));
                params.put("clip", Map.of("x", 0, "y", 0, "width", w, "height", h, "scale", 1));
                params.put("captureBeyondViewport", true);
            }
            return Base64.getDecoder()
                    .decode(cdp.call("Page.captureScreenshot", params, page, COMMAND_TIMEOUT)
                            .path("data")
                            .asText());
        });
    }

    byte[] pdf() {
        return operate(() -> Base64.getDecoder()
                .decode(cdp.call("Page.printToPDF", Map.of("printBackground", true), page, COMMAND_TIMEOUT)
                        .path("data")
                        .asText()));
    }

    // ---------------------------------------------------------------- helpers

    /** After a click or a key: a navigation it started is waited for, up to the action's timeout. */
    private void settle(int timeoutMs) throws InterruptedException {
        Thread.sleep(100);
        awaitLoaded(timeoutMs);
    }

    private Map<String, Object> pageState() throws IOException {
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("url", url);
        String title;
        try {
            title = tab.evaluate("document.title", false).asText("");
        } catch (ApiException | IOException gone) {
            title = "";
        }
        state.put("title", title);
        return state;
    }

    // ---------------------------------------------------------------- life

    void touch() {
        lastUsedNanos = System.nanoTime();
        lastUsedAt = Instant.now();
    }

    boolean idle(long nowNanos) {
        return !busy.isLocked() && nowNanos - lastUsedNanos > idleTimeout.toNanos();
    }

    /** Whole seconds until it would end idle (at least 1). */
    long secondsUntilIdle() {
        long left = idleTimeout.toNanos() - (System.nanoTime() - lastUsedNanos);
        return Math.max(1, TimeUnit.NANOSECONDS.toSeconds(left) + 1);
    }

    boolean alive() {
        return !ended && chromium.process.isAlive() && !cdp.isClosed();
    }

    long pid() {
        return chromium.pid();
    }

    Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("id", id);
        json.put("space_id", spaceId);
        json.put("status", alive() ? "active" : "ended");
        json.put("url", url);
        json.put("viewport", Map.of("width", width, "height", height));
        json.put("idle_timeout_seconds", idleTimeout.toSeconds());
        json.put("created_at", createdAt.toString());
        json.put("last_used_at", lastUsedAt.toString());
        json.put("pid", pid());
        json.put("blocked", blocked().stream().map(Blocked::toJson).toList());
        return json;
    }

    /** True once: for the one caller that ends this session (and meters it). */
    boolean claimEnd() {
        return endClaimed.compareAndSet(false, true);
    }

    boolean endClaimed() {
        return endClaimed.get();
    }

    /** Waits until {@link #close} has run, so that an ended session is never answered while Chromium still runs. */
    void awaitClosed(Duration timeout) {
        try {
            closed.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Ends Chromium (its whole process tree) and deletes the profile; safe to call twice. */
    @Override
    public void close() {
        ended = true;
        try {
            cdp.close();
        } finally {
            try {
                chromium.close();
            } finally {
                proxy.close();
                closed.countDown();
            }
        }
    }

    static String abbreviate(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max) + "…";
    }
}
