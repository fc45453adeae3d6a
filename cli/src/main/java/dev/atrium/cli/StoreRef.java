package dev.atrium.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.cli.Main.Admin;
import dev.atrium.cli.Main.Failure;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * What {@code atrium install} names: {@code STORE/[OWNER/]REPO[@TAG]}. {@code STORE} is a store the workspace has
 * registered ({@code /api/spaces/:spaceId/store-registry}), by its slug, its domain or {@code slug@domain};
 * {@code OWNER} is needed only when the store lists more than one repository named {@code REPO}. Without {@code @TAG}
 * the repository's newest version tag is taken, read from its Git refs (the store registry does not list tags).
 */
record StoreRef(String store, String owner, String repo, String tag) {

    private static final Pattern PART = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._~-]*");
    private static final Pattern STORE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._~-]*(@[A-Za-z0-9.:-]+)?");
    /** A version tag: {@code v1.2.3}, {@code 1.2}, {@code v2.0.0-rc.1}. */
    private static final Pattern VERSION = Pattern.compile("[vV]?\\d{1,18}(\\.\\d{1,18})*([-+].*)?");

    /** The repository found: the store's name for it, and the URL it is cloned from. */
    record Resolved(String store, String owner, String name, String cloneUrl) {}

    static StoreRef parse(String text) throws Failure {
        String usage = "install takes STORE/[OWNER/]REPO[@TAG] (STORE: a registered store's slug, domain or"
                + " slug@domain), not '" + text + "'";
        String path = text;
        String tag = null;
        int slash = text.lastIndexOf('/');
        int at = text.lastIndexOf('@');
        if (at > slash) {
            tag = text.substring(at + 1);
            path = text.substring(0, at);
            if (tag.isEmpty()
                    || tag.startsWith("-")
                    || tag.contains("..")
                    || tag.chars().anyMatch(c -> c <= ' ')) {
                throw new Failure(2, usage);
            }
        }
        String[] parts = path.split("/", -1);
        if (parts.length < 2 || parts.length > 3 || !STORE.matcher(parts[0]).matches()) {
            throw new Failure(2, usage);
        }
        for (int i = 1; i < parts.length; i++) {
            if (!PART.matcher(parts[i]).matches()) {
                throw new Failure(2, usage);
            }
        }
        return parts.length == 3
                ? new StoreRef(parts[0], parts[1], parts[2], tag)
                : new StoreRef(parts[0], null, parts[1], tag);
    }

    /** Finds the registered store, then the repository in it (by the store's search). */
    Resolved resolve(Admin api, String space) throws Failure {
        String registry = "/api/spaces/" + Deploy.encode(space) + "/store-registry";
        JsonNode entry = entry(api.get(registry).path("stores"));
        String storeName =
                entry.path("store_slug").asText() + "@" + entry.path("domain").asText();
        JsonNode found = api.get(registry + "/" + Deploy.encode(entry.path("id").asText())
                        + "/repositories/search?limit=100&q=" + Deploy.encode(repo))
                .path("repositories");
        List<JsonNode> matches = new ArrayList<>();
        for (JsonNode r : found) {
            if (r.path("name").asText().equals(repo)
                    && (owner == null || r.path("owner").asText().equals(owner))) {
                matches.add(r);
            }
        }
        if (matches.isEmpty()) {
            throw new Failure(
                    1, "the store " + storeName + " lists no repository " + (owner == null ? "" : owner + "/") + repo);
        }
        if (matches.size() > 1) {
            List<String> names = matches.stream()
                    .map(r -> r.path("owner").asText() + "/" + repo)
                    .toList();
            throw new Failure(
                    2,
                    "the store " + storeName + " lists " + String.join(", ", names) + ": name one as " + store
                            + "/OWNER/" + repo);
        }
        JsonNode r = matches.get(0);
        if (!r.hasNonNull("clone_url")) {
            throw new Failure(
                    1,
                    "the store " + storeName + " gives no clone URL for "
                            + r.path("id").asText());
        }
        return new Resolved(
                storeName, r.path("owner").asText(), repo, r.path("clone_url").asText());
    }

    /** The registry entry (of {@code registered}) that {@code store} names; the active one when a domain or slug names several. */
    private JsonNode entry(JsonNode registered) throws Failure {
        List<JsonNode> matches = new ArrayList<>();
        List<String> known = new ArrayList<>();
        for (JsonNode s : registered) {
            String slug = s.path("store_slug").asText();
            String domain = s.path("domain").asText();
            known.add(slug + "@" + domain);
            if (store.equalsIgnoreCase(slug + "@" + domain) || store.equals(slug) || store.equalsIgnoreCase(domain)) {
                matches.add(s);
            }
        }
        if (matches.isEmpty()) {
            throw new Failure(
                    1,
                    "this workspace has registered no store " + store
                            + (known.isEmpty() ? "" : " (it has " + String.join(", ", known) + ")")
                            + "; register one with POST /api/spaces/:spaceId/store-registry {\"identifier\":"
                            + " \"slug@domain\"}");
        }
        if (matches.size() > 1) {
            Optional<JsonNode> active = matches.stream()
                    .filter(m -> m.path("is_active").asBoolean())
                    .findFirst();
            if (active.isPresent()) {
                return active.get();
            }
            throw new Failure(
                    2,
                    store + " names several registered stores ("
                            + String.join(
                                    ", ",
                                    matches.stream()
                                            .map(m -> m.path("store_slug").asText() + "@"
                                                    + m.path("domain").asText())
                                            .toList())
                            + "): give slug@domain");
        }
        return matches.get(0);
    }

    // ------------------------------------------------------------------ the newest tag

    /**
     * The newest version tag of the repository at {@code cloneUrl}, from its Git smart-HTTP ref advertisement. No
     * token is sent: the repository is another server's public one.
     */
    static String newestTag(String cloneUrl) throws Failure {
        String url = cloneUrl.replaceAll("/+$", "") + "/info/refs?service=git-upload-pack";
        List<String> tags;
        try {
            HttpClient client = HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(10))
                    .followRedirects(HttpClient.Redirect.NORMAL)
                    .build();
            HttpResponse<byte[]> response = client.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .timeout(Duration.ofSeconds(30))
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            if (response.statusCode() != 200) {
                throw new Failure(
                        1,
                        "cannot list the tags of " + cloneUrl + " (HTTP " + response.statusCode()
                                + "): name one, STORE/REPO@TAG");
            }
            tags = tags(response.body());
        } catch (IOException | IllegalArgumentException e) {
            throw new Failure(
                    1, "cannot list the tags of " + cloneUrl + " (" + e.getMessage() + "): name one, STORE/REPO@TAG");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure(1, "interrupted");
        }
        return newest(tags)
                .orElseThrow(() -> new Failure(
                        1,
                        cloneUrl + " has no version tag (v1.2.3 or 1.2.3)"
                                + (tags.isEmpty()
                                        ? ""
                                        : "; its tags: "
                                                + String.join(", ", tags.subList(0, Math.min(10, tags.size()))))
                                + ": name one, STORE/REPO@TAG"));
    }

    /**
     * The tag names of a ref advertisement: pkt-lines ({@code 003f<sha> refs/tags/v1\n}, the first with {@code \0}
     * and capabilities), or a dumb server's {@code <sha>\t<ref>} lines. Peeled entries ({@code ^{}}) are the same tags.
     */
    static List<String> tags(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8);
        List<String> lines = new ArrayList<>();
        if (text.length() >= 4 && text.substring(0, 4).matches("[0-9a-f]{4}")) {
            int i = 0;
            while (i + 4 <= text.length()) {
                int len;
                try {
                    len = Integer.parseInt(text.substring(i, i + 4), 16);
                } catch (NumberFormatException e) {
                    break;
                }
                if (len < 4) { // flush (0000), delimiter or end of response
                    i += 4;
                    continue;
                }
                if (i + len > text.length()) {
                    break;
                }
                lines.add(text.substring(i + 4, i + len));
                i += len;
            }
        } else {
            lines.addAll(text.lines().toList());
        }
        TreeSet<String> tags = new TreeSet<>();
        for (String line : lines) {
            int nul = line.indexOf('\0');
            String l = (nul >= 0 ? line.substring(0, nul) : line).strip();
            String[] parts = l.split("[ \t]", 2);
            if (parts.length == 2 && parts[1].startsWith("refs/tags/")) {
                String name = parts[1].substring("refs/tags/".length());
                tags.add(name.endsWith("^{}") ? name.substring(0, name.length() - 3) : name);
            }
        }
        return List.copyOf(tags);
    }

    /** The highest version among the tags that are versions; a pre-release ranks below its release. */
    static Optional<String> newest(List<String> tags) {
        return tags.stream().filter(t -> VERSION.matcher(t).matches()).max(StoreRef::compareVersions);
    }

    static int compareVersions(String a, String b) {
        String[] x = splitVersion(a);
        String[] y = splitVersion(b);
        String[] xs = x[0].split("\\.");
        String[] ys = y[0].split("\\.");
        for (int i = 0; i < Math.max(xs.length, ys.length); i++) {
            long p = i < xs.length ? Long.parseLong(xs[i]) : 0;
            long q = i < ys.length ? Long.parseLong(ys[i]) : 0;
            if (p != q) {
                return Long.compare(p, q);
            }
        }
        if (x[1].isEmpty() != y[1].isEmpty()) {
            return x[1].isEmpty() ? 1 : -1;
        }
        return Comparator.<String>naturalOrder().compare(x[1], y[1]);
    }

    /** {@code v1.2.3-rc.1+b} → {@code [1.2.3, rc.1]}: build metadata does not order versions. */
    private static String[] splitVersion(String tag) {
        String t = tag.toLowerCase(Locale.ROOT).startsWith("v") ? tag.substring(1) : tag;
        int plus = t.indexOf('+');
        if (plus >= 0) {
            t = t.substring(0, plus);
        }
        int dash = t.indexOf('-');
        return dash >= 0 ? new String[] {t.substring(0, dash), t.substring(dash + 1)} : new String[] {t, ""};
    }
}
