package dev.atrium.itests;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A browser's HTTP side, over real HTTP: it keeps the cookies the Atrium server sets (by name, for its origin only)
 * and never follows redirects by itself, so a test sees every hop of a login.
 */
final class Browser {

    private static final HttpClient CLIENT = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(5))
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();

    final String base;
    final Map<String, String> cookies = new LinkedHashMap<>();

    Browser(String base) {
        this.base = base;
    }

    HttpResponse<String> get(String url) {
        return send(HttpRequest.newBuilder(uri(url)).GET(), url);
    }

    HttpResponse<String> send(String method, String url, String contentType, String body, Map<String, String> headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(url))
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        headers.forEach(b::header);
        return send(b, url);
    }

    /** Follows redirects (this origin's and others') until an answer that is not 3xx; returns that answer. */
    HttpResponse<String> follow(HttpResponse<String> r) {
        for (int hops = 0; hops < 10 && r.statusCode() / 100 == 3; hops++) {
            String location = r.headers().firstValue("Location").orElseThrow();
            r = get(r.uri().resolve(location).toString());
        }
        return r;
    }

    String csrf() {
        return cookies.get("atrium_csrf");
    }

    private URI uri(String url) {
        return URI.create(url.startsWith("http") ? url : base + url);
    }

    private HttpResponse<String> send(HttpRequest.Builder b, String url) {
        URI target = uri(url);
        boolean ours = target.toString().startsWith(base);
        if (ours && !cookies.isEmpty()) {
            b.header(
                    "Cookie",
                    cookies.entrySet().stream()
                            .map(e -> e.getKey() + "=" + e.getValue())
                            .collect(Collectors.joining("; ")));
        }
        try {
            HttpResponse<String> r =
                    CLIENT.send(b.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            if (ours) {
                for (String set : r.headers().allValues("Set-Cookie")) {
                    String pair = set.split(";", 2)[0];
                    int eq = pair.indexOf('=');
                    String name = pair.substring(0, eq).trim();
                    String value = pair.substring(eq + 1).trim();
                    if (value.isEmpty() || set.toLowerCase().contains("max-age=0")) {
                        cookies.remove(name);
                    } else {
                        cookies.put(name, value);
                    }
                }
            }
            return r;
        } catch (IOException e) {
            throw new IllegalStateException(url + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The Set-Cookie header that set {@code name}, attributes included. */
    static String setCookie(HttpResponse<String> r, String name) {
        List<String> all = r.headers().allValues("Set-Cookie");
        return all.stream().filter(s -> s.startsWith(name + "=")).findFirst().orElse(null);
    }
}
