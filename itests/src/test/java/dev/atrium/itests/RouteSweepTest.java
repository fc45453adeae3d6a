package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The route-wide sweep (issue 13). Every route the running server lists at {@code GET /admin/routes} (read from
 * the whiteboards' runtime DTOs, so a new capability is swept without anyone naming its routes) gets:
 * <ol>
 * <li>a stranger (Principal B) on Principal A's objects, who must get exactly what a missing id gets, and leave A's
 * data as it was;</li>
 * <li>a fixed corpus of malformed input (bodies, path parameters sent raw, query parameters, methods), which must
 * never answer a 5xx nor an error body other than the spec's (per-prefix exceptions in {@link #bodyProblem}).</li>
 * </ol>
 * It runs after the other test classes of the shared server, prints its report, and fails listing every failure.
 * A route it cannot exercise is listed, with the reason, in {@code route-sweep-exemptions.txt}.
 */
@SharedServer
@Order(Integer.MAX_VALUE - 1)
@Timeout(300)
class RouteSweepTest {

    private static final Pattern PARAM = Pattern.compile("\\{([^}]+)}");
    private static final Set<String> BODY_METHODS = Set.of("POST", "PUT", "PATCH");
    private static final String JSON = "application/json";
    /** OAuth's pages for the browser (RFC 6749 shows errors at the authorization endpoint to the user, not the client). */
    private static final Set<String> BROWSER_PAGES = Set.of("/oauth/authorize", "/oauth/device");
    /** Routes the spec has answer 501 (Model B's inbox: a pull-only store accepts no activities), with the spec's body. */
    private static final Set<String> SPEC_501 = Set.of("POST /ap/stores/{slug}/inbox");

    private static final String FORM = "application/x-www-form-urlencoded";

    /** Field names the corpus fills: the names Atrium's bodies use, so bad values reach the code that reads them. */
    private static final List<String> FIELDS = List.of(
            "name",
            "title",
            "content",
            "text",
            "description",
            "username",
            "display_name",
            "message",
            "role",
            "input",
            "path",
            "branch",
            "ref",
            "from",
            "parent",
            "commit",
            "changes",
            "scopes",
            "redirect_uris",
            "client_name",
            "client_id",
            "value",
            "provider",
            "model",
            "visibility",
            "password",
            "mode",
            "expires_at",
            "email",
            "query",
            "url",
            "remote_url",
            "decision",
            "user_code",
            "security_posture",
            "locale",
            "default_branch",
            "response_type",
            "scope",
            "state",
            "code_challenge",
            "grant_type",
            "token",
            "status",
            "activity_visibility",
            "auto_update_enabled");

    /** Path parameter values sent raw, with no client-side normalisation. */
    private static final List<String> RAW_PATH_VALUES = List.of("..", "%2e%2e", "..%2f..%2f..", "%2f", "%00", "%ff");

    /** Query strings: bad cursors, ranges, numbers, dates, enums and encodings under the names Atrium's routes read. */
    private static final List<String> QUERIES = List.of(
            "cursor=garbage",
            "cursor=-1",
            "cursor=99999999999999999999",
            "cursor=" + "9".repeat(300),
            "cursor=%ff",
            "limit=-1&offset=-1",
            "limit=abc&offset=abc",
            "limit=99999999999999999999&offset=99999999999999999999",
            "since=not-a-date&until=99999999999999999999",
            "last_event_id=-1",
            "last_event_id=99999999999999999999",
            "ref=..&path=../../etc/passwd",
            "ref=%00&path=%00&q=%00",
            "format=bogus&status=bogus&type=bogus&state=%00",
            "active_only=maybe&port=99999999999",
            "service=%ff&provider=%00&code=%ff",
            "limit=1&offset=1&cursor=x&limit=2",
            "cursor=" + b64("+1000000000-01-01T00:00:00Z|run|x"),
            "cursor=" + b64("+1000000000-01-01T00:00:00Z|x"),
            "cursor=" + b64("-1000000000-01-01T00:00:00Z|message|x"),
            "cursor=" + b64("2020-01-01T00:00:00Z|run|a\u0000"),
            "cursor=9223372036854775807",
            "cursor=-9223372036854775808");

    /** A cursor of the shape Atrium's opaque cursors have (base64url of text), holding a value that is out of range. */
    private static String b64(String text) {
        return java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    record Route(String kind, String method, String path, List<String> consumes, List<String> produces, String bundle) {
        String label() {
            return (method == null ? "*" : method) + " " + path;
        }
    }

    /** One request of the sweep: raw ones go over a socket exactly as written. */
    record Probe(
            Route route,
            String kase,
            String method,
            String target,
            String token,
            String contentType,
            byte[] body,
            boolean raw) {}

    record Answer(int status, String contentType, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    record Failure(String category, Route route, String kase, String detail) {
        @Override
        public String toString() {
            return category + " | " + route.label() + " | " + shortCase(kase) + " | " + detail;
        }
    }

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final AtomicInteger sent = new AtomicInteger();
    private final Map<String, Long> routeMillis = new java.util.concurrent.ConcurrentHashMap<>();
    private final Set<String> unmapped = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final List<Failure> failures = Collections.synchronizedList(new ArrayList<>());

    private AtriumServer server;
    private SweepFixtures fx;

    @Test
    void everyRouteAnswersAStrangerLikeAMissingIdRefusesATokenWithoutItsScopeAndNoMalformedInputGetsA5xxOrANonSpecBody(
            AtriumServer server) throws Exception {
        this.server = server;
        long started = System.nanoTime();
        Http.Reply listed = server.operator().get("/admin/routes");
        assertEquals(200, listed.status(), listed.body());
        List<Route> all = new ArrayList<>();
        for (JsonNode r : listed.json().path("routes")) {
            all.add(new Route(
                    r.path("kind").asText(),
                    r.path("method").isNull() ? null : r.path("method").asText(),
                    r.path("path").asText(),
                    strings(r.path("consumes")),
                    strings(r.path("produces")),
                    r.path("bundle").asText(null)));
        }
        Map<String, String> exemptions = exemptions();
        List<Route> routes = new ArrayList<>();
        List<String> exempted = new ArrayList<>();
        for (Route r : all) {
            String why = exemptions.containsKey(r.label()) ? exemptions.get(r.label()) : exemptions.get(r.path());
            if (why != null) {
                exempted.add(r.label() + " (" + why + ")");
            } else {
                routes.add(r);
            }
        }
        fx = new SweepFixtures(server);
        awaitRunsFinished();
        long fixturesDone = System.nanoTime();

        // (a) the stranger
        Map<String, String> before = snapshot(routes);
        int strangerCases = 0;
        for (Route r : routes) {
            strangerCases += stranger(r);
        }
        Map<String, String> after = snapshot(routes);
        for (String path : before.keySet()) {
            if (!before.get(path).equals(after.get(path))) {
                failures.add(new Failure(
                        "LEAK",
                        new Route("snapshot", "GET", path, List.of(), List.of(), null),
                        "A's data changed",
                        excerpt(before.get(path)) + " -> " + excerpt(after.get(path))));
            }
        }

        long strangerDone = System.nanoTime();

        // (c) scopes: every route refuses a token without its scope
        ScopeCount scopeCount = scopes(routes);

        // (b) the malformed corpus; DELETEs last and one at a time, so a normalised path cannot take fixtures from the
        // rest
        List<Probe> probes = new ArrayList<>();
        Set<String> methodProbed = new LinkedHashSet<>();
        for (Route r : routes) {
            probes.addAll(corpus(r, methodProbed));
        }
        List<Probe> deletes =
                probes.stream().filter(p -> p.method().equals("DELETE")).toList();
        // a route's probes run a dozen at a time in order: a route that is slow on purpose (a password hash, a key
        // generation) then holds one or a few threads, not all of them
        Map<String, List<Probe>> byRoute = new LinkedHashMap<>();
        probes.stream()
                .filter(p -> !p.method().equals("DELETE"))
                .forEach(p -> byRoute.computeIfAbsent(p.route().label(), k -> new ArrayList<>())
                        .add(p));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> running = new ArrayList<>();
            List<List<Probe>> batches = new ArrayList<>();
            for (List<Probe> route : byRoute.values()) {
                for (int i = 0; i < route.size(); i += 12) {
                    batches.add(route.subList(i, Math.min(route.size(), i + 12)));
                }
            }
            for (List<Probe> batch : batches) {
                running.add(pool.submit(() -> batch.forEach(this::check)));
            }
            for (Future<?> f : running) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        for (Probe p : deletes) {
            check(p);
        }

        String report = report(routes, exempted, strangerCases, started)
                + scopeCount
                + String.format(
                        "phases: fixtures %d ms, stranger %d ms, corpus %d ms%n",
                        (fixturesDone - started) / 1_000_000,
                        (strangerDone - fixturesDone) / 1_000_000,
                        (System.nanoTime() - strangerDone) / 1_000_000);
        System.out.println(report);
        Files.writeString(AtriumServer.ROOT.resolve("itests/target/route-sweep-report.txt"), report);
        if (!failures.isEmpty()) {
            fail(report);
        }
    }

    // ---------------------------------------------------------------- scopes

    /**
     * Routes that need only a signed-in caller, by design: who the caller is and which workspaces it has, so that an
     * app holding any scope can find the workspace it works in (docs/decisions.md, "Limited tokens and scope-less
     * endpoints"). Every other route declares a scope.
     */
    private static final Set<String> SCOPE_FREE = Set.of(
            "GET /api/me",
            "GET /api/auth/me",
            "GET /api/me/personal-space",
            "GET /api/setup/status",
            "GET /api/spaces",
            "GET /api/spaces/me",
            "GET /api/spaces/{spaceId}");
    /** Routes with authentication rules of their own: the operator's, OAuth's and the sign-in pages, federation's. */
    private static final List<String> OWN_AUTHENTICATION =
            List.of("/admin/", "/oauth/", "/.well-known/", "/auth/", "/ap/");

    record ScopeCount(int checked, int refused, int scopeFree, int open, int otherAuthentication) {
        @Override
        public String toString() {
            return "scopes: " + checked + " routes called with two tokens of disjoint scopes (runs:read, repos:write); "
                    + refused
                    + " refused the token without their scope with 403, " + scopeFree + " need no scope by design, "
                    + open
                    + " answer anonymous callers, " + otherAuthentication + " take no user token\n";
        }
    }

    /**
     * Calls every JAX-RS route with two of A's tokens whose scopes share nothing: a route that declares a scope refuses
     * at least one of them with 403 before it looks at ids or bodies (the kernel checks scopes first), so ids here are
     * missing ones and nothing of A's changes. A route that lets both through declares no scope.
     */
    private ScopeCount scopes(List<Route> routes) throws Exception {
        String runsRead = limitedToken("runs:read");
        String reposWrite = limitedToken("repos:write");
        int checked = 0;
        int refused = 0;
        int scopeFree = 0;
        int open = 0;
        int other = 0;
        for (Route r : routes) {
            if (!r.kind().equals("jaxrs")
                    || r.method() == null
                    || OWN_AUTHENTICATION.stream().anyMatch(r.path()::startsWith)) {
                continue;
            }
            String target = scopeTarget(r, true);
            boolean body = BODY_METHODS.contains(r.method());
            String type = !body ? null : r.consumes().contains(FORM) ? FORM : JSON;
            byte[] empty = !body ? null : (FORM.equals(type) ? "" : "{}").getBytes(StandardCharsets.UTF_8);
            Answer anonymous = send(new Probe(r, "scope: anonymous", r.method(), target, null, type, empty, false));
            if (anonymous.status() != 401) {
                open++;
                continue;
            }
            Answer first = send(new Probe(r, "scope: runs:read", r.method(), target, runsRead, type, empty, false));
            Answer second =
                    send(new Probe(r, "scope: repos:write", r.method(), target, reposWrite, type, empty, false));
            if (first.status() == 401 || second.status() == 401) {
                other++;
                continue;
            }
            checked++;
            boolean refusedFirst = forbidden(first);
            boolean refusedSecond = forbidden(second);
            if (!refusedFirst && !refusedSecond && !body && !r.method().equals("DELETE")) {
                // a route that takes signed links too checks the scope once it knows the caller owns the object: a read
                // of A's own objects, which changes nothing
                target = scopeTarget(r, false);
                first = send(new Probe(r, "scope: runs:read on A's", r.method(), target, runsRead, null, null, false));
                second = send(
                        new Probe(r, "scope: repos:write on A's", r.method(), target, reposWrite, null, null, false));
                refusedFirst = forbidden(first);
                refusedSecond = forbidden(second);
            }
            if (refusedFirst || refusedSecond) {
                refused++;
            } else if (SCOPE_FREE.contains(r.label())) {
                scopeFree++;
            } else {
                failures.add(new Failure(
                        "NO SCOPE",
                        r,
                        "runs:read and repos:write tokens",
                        target + " -> " + first.status() + " and " + second.status()
                                + ": declare the scope the route needs"));
            }
        }
        return new ScopeCount(checked, refused, scopeFree, open, other);
    }

    /** The route with A's ids, or ones like them that nobody has ({@code missing}). */
    private String scopeTarget(Route r, boolean missing) {
        Map<String, String> values = new LinkedHashMap<>();
        List<String> names = params(r.path());
        List<String> previous = previousSegments(r.path());
        for (int i = 0; i < names.size(); i++) {
            String value = fx.value(r.path(), previous.get(i), names.get(i));
            boolean owned = SweepFixtures.kindOf(previous.get(i), names.get(i)) != SweepFixtures.Kind.NONE;
            values.put(
                    names.get(i),
                    value == null
                            ? "sweep-" + names.get(i).replaceAll("[^A-Za-z0-9]", "")
                            : missing && owned ? SweepFixtures.missingLike(value) : value);
        }
        return fill(r.path(), values);
    }

    private String limitedToken(String scopes) {
        Http.Reply token =
                server.operator().post("/admin/users/" + fx.a.username() + "/tokens", Map.of("scopes", scopes));
        assertEquals(201, token.status(), token.body());
        return token.json().path("token").asText();
    }

    private static boolean forbidden(Answer a) {
        if (a.status() != 403) {
            return false;
        }
        try {
            return "FORBIDDEN"
                    .equals(Http.JSON
                            .readTree(a.body())
                            .path("error")
                            .path("code")
                            .asText());
        } catch (IOException e) {
            return false;
        }
    }

    // ---------------------------------------------------------------- the stranger

    /** Sends B's request on A's objects and on missing ids; returns the number of cases sent. */
    private int stranger(Route r) throws Exception {
        if (r.kind().equals("servlet")) {
            if (!r.path().startsWith("/git/")) {
                return 0;
            }
            String missing = fx.clonePath.replaceFirst("/[^/]+\\.git$", "/" + SweepFixtures.random(12) + ".git");
            int n = 0;
            for (String[] tail : List.of(
                    new String[] {"GET", "/info/refs?service=git-upload-pack"},
                    new String[] {"POST", "/git-upload-pack"},
                    new String[] {"POST", "/git-receive-pack"})) {
                compareStranger(r, tail[0], fx.clonePath + tail[1], missing + tail[1], List.of(fx.clonePath, missing));
                n += 2;
            }
            return n;
        }
        List<String> names = params(r.path());
        List<String> previous = previousSegments(r.path());
        Map<String, String> mine = new LinkedHashMap<>();
        Map<String, String> missing = new LinkedHashMap<>();
        boolean owned = false;
        for (int i = 0; i < names.size(); i++) {
            String value = fx.value(r.path(), previous.get(i), names.get(i));
            if (value == null) {
                return 0; // reported once, by mineFor
            }
            mine.put(names.get(i), value);
            if (SweepFixtures.kindOf(previous.get(i), names.get(i)) != SweepFixtures.Kind.NONE) {
                owned = true;
                missing.put(names.get(i), SweepFixtures.missingLike(value));
            } else {
                missing.put(names.get(i), value);
            }
        }
        if (!owned) {
            return 0;
        }
        List<String> ids = new ArrayList<>();
        for (String name : names) {
            if (!mine.get(name).equals(missing.get(name))) {
                ids.add(mine.get(name));
                ids.add(missing.get(name));
            }
        }
        compareStranger(r, r.method(), fill(r.path(), mine), fill(r.path(), missing), ids);
        return 2;
    }

    private void compareStranger(Route r, String method, String onA, String onMissing, List<String> ids)
            throws Exception {
        boolean body = BODY_METHODS.contains(method);
        Answer a = send(new Probe(
                r,
                "stranger",
                method,
                onA,
                fx.b.http().token(),
                body ? JSON : null,
                body ? "{}".getBytes() : null,
                false));
        Answer m = send(new Probe(
                r,
                "stranger",
                method,
                onMissing,
                fx.b.http().token(),
                body ? JSON : null,
                body ? "{}".getBytes() : null,
                false));
        String na = normalise(a.text(), ids);
        String nm = normalise(m.text(), ids);
        if (a.status() != m.status() || !na.equals(nm)) {
            failures.add(new Failure(
                    "LEAK",
                    r,
                    "stranger " + method + " " + onA,
                    "A's object: " + a.status() + " " + excerpt(na) + " / missing id: " + m.status() + " "
                            + excerpt(nm)));
        }
        for (Answer x : List.of(a, m)) {
            judge(new Probe(r, "stranger", method, onA, null, null, null, false), x);
        }
    }

    private static String normalise(String body, List<String> ids) {
        String out = body;
        for (String id : ids) {
            out = out.replace(id, "<id>");
        }
        return out.replaceAll("request [0-9a-f]+", "request <id>");
    }

    /** A's GET answers of every GET route whose parameters all name A's objects (streams left out). */
    private Map<String, String> snapshot(List<Route> routes) throws Exception {
        Map<String, String> out = new TreeMap<>();
        for (Route r : routes) {
            if (!"GET".equals(r.method())
                    || !r.path().startsWith("/api/")
                    || r.produces().contains("text/event-stream")
                    || r.path().startsWith("/api/oauth/")
                    || r.path().endsWith("/export")) {
                continue;
            }
            String path = fill(r.path(), mineFor(r));
            Answer x = send(new Probe(r, "snapshot", "GET", path, fx.a.http().token(), null, null, false));
            out.put(path, x.status() + " " + stable(x.text()));
        }
        return out;
    }

    /** The body without the fields that move by themselves (times of use, counters of reads). */
    private static String stable(String body) {
        try {
            JsonNode json = Http.JSON.readTree(body);
            strip(json);
            return json.toString();
        } catch (IOException notJson) {
            return body;
        }
    }

    private static void strip(JsonNode node) {
        if (node instanceof ObjectNode o) {
            for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
                String f = it.next();
                if (f.startsWith("last_used")
                        || f.equals("updated_at")
                        || f.equals("last_seen_at")
                        || f.equals("download_count")
                        || f.equals("usage")) {
                    it.remove();
                } else {
                    strip(o.get(f));
                }
            }
        } else if (node != null && node.isArray()) {
            node.forEach(RouteSweepTest::strip);
        }
    }

    private void awaitRunsFinished() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        String runs = "/api/threads/" + fx.ids.get(SweepFixtures.Kind.THREAD) + "/runs";
        while (System.nanoTime() < deadline) {
            String body = fx.a.http().get(runs).body();
            if (!body.contains("\"queued\"") && !body.contains("\"running\"")) {
                return;
            }
            Thread.sleep(50);
        }
    }

    // ---------------------------------------------------------------- the corpus

    private List<Probe> corpus(Route r, Set<String> methodProbed) {
        List<Probe> out = new ArrayList<>();
        String token =
                r.path().startsWith("/admin/") ? fx.operatorToken : fx.a.http().token();
        if (r.kind().equals("servlet")) {
            for (String target : servletTargets(r)) {
                String base = target.contains("?") ? target.substring(0, target.indexOf('?')) : target;
                out.add(new Probe(r, "GET", "GET", target, token, null, null, false));
                for (String q : QUERIES) {
                    out.add(new Probe(r, "query " + q, "GET", base + "?" + q, token, null, null, false));
                }
                for (String[] b : bodies(List.of())) {
                    out.add(new Probe(
                            r,
                            "body " + b[0],
                            "POST",
                            base,
                            token,
                            b[1],
                            b[2].getBytes(StandardCharsets.ISO_8859_1),
                            false));
                }
                Matcher service =
                        Pattern.compile("/(git-upload-pack|git-receive-pack)$").matcher(base);
                if (service.find()) {
                    String type = "application/x-" + service.group(1) + "-request";
                    for (String pkt :
                            List.of("zzzzgarbage0000", "0032want zz", "00", "0000", "ffffx", "\u0000\u00ff")) {
                        out.add(new Probe(
                                r,
                                "git pkt-lines " + excerpt(pkt),
                                "POST",
                                base,
                                token,
                                type,
                                pkt.getBytes(StandardCharsets.ISO_8859_1),
                                false));
                    }
                }
                out.add(new Probe(r, "method PATCH", "PATCH", base, token, JSON, "{}".getBytes(), false));
                out.add(new Probe(r, "method FOO", "FOO", base, token, null, null, false));
                for (String v : RAW_PATH_VALUES) {
                    out.add(new Probe(
                            r,
                            "raw path " + v,
                            "GET",
                            (base.endsWith("/") ? base : base + "/") + v,
                            token,
                            null,
                            null,
                            true));
                }
            }
            return out;
        }
        Map<String, String> mine = mineFor(r);
        String path = fill(r.path(), mine);
        boolean hasBody = BODY_METHODS.contains(r.method());
        byte[] empty = hasBody ? "{}".getBytes() : null;
        String emptyType = hasBody ? JSON : null;
        for (String name : params(r.path())) {
            for (String v : RAW_PATH_VALUES) {
                Map<String, String> values = new LinkedHashMap<>(mine);
                values.put(name, v);
                out.add(new Probe(
                        r,
                        "raw path {" + name + "}=" + v,
                        r.method(),
                        fillRaw(r.path(), values),
                        token,
                        emptyType,
                        empty,
                        true));
            }
        }
        if ("GET".equals(r.method()) && !r.produces().contains("text/event-stream")) {
            for (String q : QUERIES) {
                out.add(new Probe(r, "query " + q, "GET", path + "?" + q, token, null, null, false));
            }
        }
        if (hasBody) {
            for (String[] b : bodies(r.consumes())) {
                out.add(new Probe(
                        r,
                        "body " + b[0],
                        r.method(),
                        path,
                        token,
                        b[1],
                        b[2].getBytes(StandardCharsets.ISO_8859_1),
                        false));
            }
        }
        if (methodProbed.add(r.path())) {
            out.add(new Probe(r, "method PATCH", "PATCH", path, token, JSON, "{}".getBytes(), false));
            out.add(new Probe(r, "method FOO", "FOO", path, token, null, null, false));
        }
        return out;
    }

    /** Where a servlet pattern is sent: its own path, or under a wildcard a few tails (A's repository for Git). */
    private List<String> servletTargets(Route r) {
        if (!r.path().endsWith("/*")) {
            return List.of(r.path());
        }
        String prefix = r.path().substring(0, r.path().length() - 2);
        if (prefix.equals("/git")) {
            return List.of(
                    fx.clonePath + "/info/refs?service=git-upload-pack",
                    fx.clonePath + "/git-upload-pack",
                    fx.clonePath + "/git-receive-pack",
                    prefix + "/x");
        }
        return List.of(prefix + "/", prefix + "/x");
    }

    /**
     * The body corpus as {name, content type, body as ISO-8859-1 text (so any byte can be written)}. Routes that
     * consume something other than JSON also get the forms and raw bytes of their own type.
     */
    private static List<String[]> bodies(List<String> consumes) {
        List<String[]> out = new ArrayList<>();
        out.add(new String[] {"malformed JSON", JSON, "{\"name\":"});
        out.add(new String[] {"trailing comma", JSON, "{\"name\":\"x\",}"});
        out.add(new String[] {"empty JSON body", JSON, ""});
        out.add(new String[] {"JSON array", JSON, "[]"});
        out.add(new String[] {"JSON string", JSON, "\"x\""});
        out.add(new String[] {"JSON number", JSON, "123"});
        out.add(new String[] {"JSON null", JSON, "null"});
        out.add(new String[] {"wrong types (objects)", JSON, fields("{\"x\":1}")});
        out.add(new String[] {"wrong types (arrays)", JSON, fields("[1,\"a\"]")});
        out.add(new String[] {"wrong types (numbers)", JSON, fields("12345")});
        out.add(new String[] {"wrong types (booleans)", JSON, fields("true")});
        out.add(new String[] {"NUL escaped", JSON, fields("\"a\\u0000b\"")});
        out.add(new String[] {"NUL raw", JSON, fields("\"a\u0000b\"")});
        out.add(new String[] {"lone surrogate escaped", JSON, fields("\"a\\ud800b\"")});
        out.add(new String[] {"lone surrogate raw", JSON, fields("\"a\u00ed\u00a0\u0080b\"")});
        out.add(new String[] {"invalid UTF-8", JSON, fields("\"a\u00ff\u00feb\"")});
        out.add(new String[] {"huge strings", JSON, fields("\"" + "x".repeat(4 * 1024) + "\"")});
        out.add(new String[] {
            "huge numbers", JSON, fields("123456789012345678901234567890123456789012345678901234567890")
        });
        out.add(new String[] {"huge exponent", JSON, fields("1e999999999")});
        out.add(new String[] {"deep nesting", JSON, "{\"name\":" + "[".repeat(20_000) + "]".repeat(20_000) + "}"});
        out.add(new String[] {"bogus charset", JSON + "; charset=bogus", fields("\"x\"")});
        out.add(new String[] {"UTF-16 charset on UTF-8 bytes", JSON + "; charset=utf-16", fields("\"x\"")});
        boolean form = consumes.isEmpty() || consumes.contains("*/*") || consumes.contains(FORM);
        if (form) {
            out.add(new String[] {"form NUL escaped", FORM, "grant_type=%00&token=%00&client_id=%00&name=%00"});
            out.add(new String[] {"form NUL raw", FORM, "grant_type=a\u0000&token=\u0000"});
            out.add(new String[] {"form invalid UTF-8", FORM, "grant_type=%ff%fe&token=%c3&client_id=%ed%a0%80"});
            out.add(new String[] {"form broken escapes", FORM, "grant_type=%zz&=&&==&token=%"});
            out.add(new String[] {"form bogus charset", FORM + "; charset=bogus", "grant_type=x"});
            out.add(new String[] {"form huge", FORM, "grant_type=" + "x".repeat(200_000)});
        }
        for (String type : consumes) {
            if (!type.contains("json") && !type.equals("*/*") && !type.equals(FORM)) {
                out.add(new String[] {"garbage " + type, type, "garbage\u0000\u00ff"});
            }
        }
        if (consumes.contains("*/*")) {
            out.add(new String[] {"garbage text/plain", "text/plain", "garbage\u0000\u00ff"});
            out.add(new String[] {
                "garbage octet-stream", "application/octet-stream", "PK\u0003\u0004garbage\u0000\u00ff"
            });
        }
        return out;
    }

    private static String fields(String value) {
        StringBuilder sb = new StringBuilder("{");
        for (String f : FIELDS) {
            sb.append(sb.length() > 1 ? "," : "")
                    .append('"')
                    .append(f)
                    .append("\":")
                    .append(value);
        }
        return sb.append('}').toString();
    }

    private void check(Probe p) {
        long t0 = System.nanoTime();
        try {
            judge(p, send(p));
        } catch (Exception e) {
            failures.add(new Failure("NO ANSWER", p.route(), p.kase(), p.method() + " " + p.target() + ": " + e));
        } finally {
            routeMillis.merge(p.route().label(), (System.nanoTime() - t0) / 1_000_000, Long::sum);
        }
    }

    private void judge(Probe p, Answer x) {
        String where = p.method() + " " + excerpt(p.target());
        if (x.status() == 501
                && SPEC_501.contains(p.route().label())
                && x.text().contains("\"NOT_IMPLEMENTED\"")) {
            return;
        }
        if (x.status() >= 500) {
            failures.add(
                    new Failure("5xx", p.route(), p.kase(), where + " -> " + x.status() + " " + excerpt(x.text())));
            return;
        }
        // Jetty's parser refuses %00 in a path and a dot segment above the root before any filter; since the kernel's
        // listener (issue 34) its error handler answers those with the spec's body too, judged like every other answer
        boolean page = p.route().produces().contains("text/html")
                || BROWSER_PAGES.contains(p.route().path());
        String problem = bodyProblem(p.target(), page, x);
        if (problem != null) {
            failures.add(new Failure(
                    "NON-SPEC BODY",
                    p.route(),
                    p.kase(),
                    where + " -> " + x.status() + " " + x.contentType() + " " + excerpt(x.text()) + " (" + problem
                            + ")"));
        }
    }

    /**
     * Null when an error answer's body is allowed on {@code target}. Everywhere: the spec's
     * {@code {"error":{"code","message"}}} as {@code application/json}. Also allowed: RFC 6749 error JSON under
     * {@code /oauth} and {@code /.well-known}; Git's own answers under {@code /git} (plain text, a Git result
     * type, or no body: what a Git client shows its user); HTML
     * under {@code /auth} and on any route that produces {@code text/html} (pages for browsers, such as
     * {@code /oauth/authorize}).
     */
    static String bodyProblem(String target, boolean htmlPage, Answer x) {
        if (x.status() < 400) {
            return null;
        }
        String path = target.contains("?") ? target.substring(0, target.indexOf('?')) : target;
        String type = x.contentType() == null ? "" : x.contentType().toLowerCase(Locale.ROOT);
        if (path.startsWith("/git/")
                && (x.body().length == 0 || type.startsWith("text/plain") || type.startsWith("application/x-git-"))) {
            return null;
        }
        JsonNode json = null;
        try {
            json = x.body().length == 0 ? null : Http.JSON.readTree(x.body());
        } catch (IOException notJson) {
            // judged below
        }
        if (json != null && type.startsWith(JSON)) {
            JsonNode error = json.get("error");
            if (json.size() == 1
                    && error != null
                    && error.size() == 2
                    && error.path("code").isTextual()
                    && error.path("message").isTextual()) {
                return null;
            }
            if ((path.startsWith("/oauth/") || path.startsWith("/.well-known/"))
                    && error != null
                    && error.isTextual()) {
                return null;
            }
            return "JSON, but not the spec's error body";
        }
        if ((path.startsWith("/auth/") || htmlPage) && type.startsWith("text/html")) {
            return null;
        }
        return x.body().length == 0 ? "empty error body" : "not JSON";
    }

    // ---------------------------------------------------------------- sending

    private Answer send(Probe p) throws IOException, InterruptedException {
        sent.incrementAndGet();
        if (p.raw()) {
            return sendRaw(p);
        }
        try {
            return sendClient(p);
        } catch (IOException staleConnection) {
            // the pool may hand out a connection the server closed after refusing an unread body; once more, on a new
            // one
            return sendClient(p);
        }
    }

    private Answer sendClient(Probe p) throws IOException, InterruptedException {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(URI.create(server.base() + p.target())).timeout(Duration.ofSeconds(60));
        if (p.token() != null) {
            b.header("Authorization", "Bearer " + p.token());
        }
        if (p.body() != null) {
            b.header("Content-Type", p.contentType())
                    .method(p.method(), HttpRequest.BodyPublishers.ofByteArray(p.body()));
        } else {
            b.method(p.method(), HttpRequest.BodyPublishers.noBody());
        }
        HttpResponse<byte[]> r = client.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        return new Answer(r.statusCode(), r.headers().firstValue("Content-Type").orElse(null), r.body());
    }

    private Answer sendRaw(Probe p) throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port)) {
            s.setSoTimeout(60_000);
            StringBuilder head = new StringBuilder(p.method())
                    .append(' ')
                    .append(p.target())
                    .append(" HTTP/1.1\r\n")
                    .append("Host: 127.0.0.1:")
                    .append(server.port)
                    .append("\r\nConnection: close\r\n");
            if (p.token() != null) {
                head.append("Authorization: Bearer ").append(p.token()).append("\r\n");
            }
            byte[] body = p.body() == null ? new byte[0] : p.body();
            if (p.contentType() != null) {
                head.append("Content-Type: ").append(p.contentType()).append("\r\n");
            }
            head.append("Content-Length: ").append(body.length).append("\r\n\r\n");
            OutputStream out = s.getOutputStream();
            out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            InputStream in = s.getInputStream();
            RawHttp.Response r = RawHttp.read(in);
            return new Answer(r.status(), r.header("content-type"), r.body());
        }
    }

    // ---------------------------------------------------------------- templates

    private Map<String, String> mineFor(Route r) {
        List<String> names = params(r.path());
        List<String> previous = previousSegments(r.path());
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < names.size(); i++) {
            String value = fx.value(r.path(), previous.get(i), names.get(i));
            if (value == null) {
                if (unmapped.add(r.label())) {
                    failures.add(
                            new Failure(
                                    "UNMAPPED PARAMETER",
                                    r,
                                    "{" + names.get(i) + "}",
                                    "SweepFixtures has no value for it: map it to an object A owns, or exempt the route saying why"));
                }
                value = "sweep-" + names.get(i).replaceAll("[^A-Za-z0-9]", "");
            }
            out.put(names.get(i), value);
        }
        return out;
    }

    static List<String> params(String template) {
        List<String> out = new ArrayList<>();
        Matcher m = PARAM.matcher(template);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** For each parameter, the literal segment before it ("" when none). */
    static List<String> previousSegments(String template) {
        List<String> out = new ArrayList<>();
        String[] segments = template.split("/");
        for (int i = 0; i < segments.length; i++) {
            if (segments[i].startsWith("{")) {
                out.add(i > 0 && !segments[i - 1].startsWith("{") ? segments[i - 1] : "");
            }
        }
        return out;
    }

    /** The template with each parameter's value percent-encoded (a multi-segment parameter keeps its slashes). */
    static String fill(String template, Map<String, String> values) {
        Map<String, String> encoded = new LinkedHashMap<>();
        values.forEach((k, v) -> encoded.put(k, encode(v)));
        return fillRaw(template, encoded);
    }

    static String fillRaw(String template, Map<String, String> values) {
        Matcher m = PARAM.matcher(template);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(sb, Matcher.quoteReplacement(values.get(m.group(1))));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    private static String encode(String v) {
        StringBuilder sb = new StringBuilder();
        for (byte b : v.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~/".indexOf(c) >= 0) {
                sb.append(c);
            } else {
                sb.append('%').append(String.format("%02X", b & 0xff));
            }
        }
        return sb.toString();
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    /** "METHOD path" or "path" (every method) to the reason the route is not swept. */
    static Map<String, String> exemptions() throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        try (InputStream in = RouteSweepTest.class.getResourceAsStream("/route-sweep-exemptions.txt")) {
            if (in == null) {
                return out;
            }
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                String l = line.strip();
                if (l.isEmpty() || l.startsWith("#")) {
                    continue;
                }
                int hash = l.indexOf(" #");
                if (hash < 0) {
                    throw new IllegalStateException("an exemption must say why after ' #': " + l);
                }
                out.put(l.substring(0, hash).strip(), l.substring(hash + 2).strip());
            }
        }
        return out;
    }

    private static String shortCase(String kase) {
        return kase.length() > 80 ? kase.substring(0, 80) + "…" : kase;
    }

    private static String excerpt(String s) {
        String one = s == null ? "" : s.replace("\r", "\\r").replace("\n", "\\n");
        return one.length() > 160 ? one.substring(0, 160) + "…" : one;
    }

    private String report(List<Route> routes, List<String> exempted, int strangerCases, long started) {
        Map<String, Integer> byCategory = new TreeMap<>();
        Map<String, Integer> byCase = new TreeMap<>();
        List<String> lines;
        synchronized (failures) {
            for (Failure f : failures) {
                byCategory.merge(f.category(), 1, Integer::sum);
                String kase = shortCase(f.kase().replaceAll("\\{[^}]*}=", "{param}="));
                byCase.merge(
                        f.category() + " | "
                                + (f.route().bundle() == null ? "-" : f.route().bundle()) + " | " + kase,
                        1,
                        Integer::sum);
            }
            lines = failures.stream().map(Failure::toString).sorted().toList();
        }
        StringBuilder sb =
                new StringBuilder("\n==== route-wide sweep (issue 13), run at " + java.time.Instant.now() + " ====\n");
        long jaxrs = routes.stream().filter(r -> r.kind().equals("jaxrs")).count();
        sb.append("routes covered: ")
                .append(routes.size())
                .append(" (")
                .append(jaxrs)
                .append(" JAX-RS resource methods, ")
                .append(routes.size() - jaxrs)
                .append(" servlets)\n");
        sb.append("routes exempted: ")
                .append(exempted.size())
                .append(exempted.isEmpty() ? "" : " " + exempted)
                .append('\n');
        sb.append("cases sent: ")
                .append(sent.get())
                .append(" (stranger: ")
                .append(strangerCases)
                .append(")\n");
        sb.append("leaks: ").append(byCategory.getOrDefault("LEAK", 0)).append('\n');
        sb.append("5xx: ").append(byCategory.getOrDefault("5xx", 0)).append('\n');
        sb.append("non-spec bodies: ")
                .append(byCategory.getOrDefault("NON-SPEC BODY", 0))
                .append('\n');
        sb.append("no answer: ").append(byCategory.getOrDefault("NO ANSWER", 0)).append('\n');
        sb.append("unmapped parameters: ")
                .append(byCategory.getOrDefault("UNMAPPED PARAMETER", 0))
                .append('\n');
        fx.notes.forEach(n -> sb.append("note: ").append(n).append('\n'));
        sb.append("took: ").append((System.nanoTime() - started) / 1_000_000).append(" ms\n");
        sb.append("slowest routes (ms spent in their corpus): ");
        routeMillis.entrySet().stream()
                .sorted((x, y) -> Long.compare(y.getValue(), x.getValue()))
                .limit(5)
                .forEach(e ->
                        sb.append(e.getKey()).append(' ').append(e.getValue()).append("; "));
        sb.append('\n');
        if (!lines.isEmpty()) {
            sb.append("---- failures by category | bundle | case ----\n");
            byCase.forEach((k, v) -> sb.append(String.format("%5d  %s%n", v, k)));
            sb.append("---- failures (category | route | case | request -> answer) ----\n");
            lines.forEach(l -> sb.append(l).append('\n'));
        }
        return sb.toString();
    }
}
