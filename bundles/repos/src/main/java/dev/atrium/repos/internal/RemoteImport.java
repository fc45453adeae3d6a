package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectIdRef;
import org.eclipse.jgit.lib.ProgressMonitor;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.lib.StoredConfig;
import org.eclipse.jgit.transport.FilterSpec;
import org.eclipse.jgit.transport.TransportHttp;
import org.eclipse.jgit.transport.UsernamePasswordCredentialsProvider;

/**
 * Fetches a remote repository over smart HTTP into a local one, following the spec's source resolution: a
 * full fetch within limits first; a blobless partial fetch only when the full one failed on a limit and the
 * remote advertises {@code filter} and {@code allow-reachable-sha1-in-want}; else, from a code host that serves
 * them, the default branch's files from its archive ({@link ArchiveImport}). Every URL, redirects included,
 * passes the kernel's {@link EgressGuard} before anything connects to it, and every connection, JGit's included,
 * goes only to the addresses the guard approved for it ({@link GuardedHttp}).
 */
final class RemoteImport {

    private static final int MAX_REDIRECTS = 5;
    private static final String INFO_REFS = "/info/refs";

    /** Limits of one import (the {@code remoteImport*} settings of {@link Repositories.Config}). */
    record Limits(long maxPackBytes, long maxObjects, int timeoutSeconds, Map<String, String> archiveHosts) {

        Limits(long maxPackBytes, long maxObjects, int timeoutSeconds) {
            this(maxPackBytes, maxObjects, timeoutSeconds, Map.of());
        }
    }

    /**
     * How the import went.
     *
     * @param result the fetch's result (its ref updates), or null when the remote had no branch or tag
     */
    record Outcome(
            boolean partial,
            String url,
            org.eclipse.jgit.transport.FetchResult result,
            ArchiveImport.Archived archived) {

        Outcome(boolean partial, String url, org.eclipse.jgit.transport.FetchResult result) {
            this(partial, url, result, null);
        }
    }

    private RemoteImport() {}

    /** An import's refs: every branch and tag under its own name. */
    private static final CheckedFetch.Mapping SAME = CheckedFetch.Mapping.same(true);

    /** Imports into a new, empty repository: a blobless fetch when a full one exceeds a limit and the remote offers it. */
    static Outcome run(EgressGuard guard, URI url, String token, Limits limits, Repository into) {
        return run(guard, url, token, limits, into, SAME, false);
    }

    /**
     * Fetches into a repository that has history already: the refs go where {@code mapping} says; {@code partial}
     * when the repository was imported blobless (its fetches stay blobless). The limits count what this fetch adds.
     *
     * @return how it went, and what it changed
     */
    static Outcome run(
            EgressGuard guard,
            URI url,
            String token,
            Limits limits,
            Repository into,
            CheckedFetch.Mapping mapping,
            boolean partial) {
        try (GuardedHttp http = new GuardedHttp(guard)) {
            Probe probe = resolve(http, guard, url, token);
            URI base = probe.base();
            Set<String> capabilities = probe.capabilities();
            boolean blobless = partial && offersPartial(capabilities);
            if (partial && !blobless) {
                throw ApiException.badRequest("the repository was imported blobless, and the remote no longer offers a"
                        + " blobless partial fetch (it must advertise filter and allow-reachable-sha1-in-want)");
            }
            boolean fresh = !partial && mapping.equals(SAME);
            try {
                return new Outcome(
                        blobless, base.toString(), fetch(http, into, base, token, limits, mapping, blobless));
            } catch (LimitExceeded limit) {
                Optional<URI> archive = token == null
                        ? ArchiveImport.url(base, probe.defaultBranch(), limits.archiveHosts())
                        : Optional.empty();
                String branch = probe.defaultBranch();
                if (!fresh) {
                    if (archive.isPresent() && !partial) {
                        String local = mapping.spec(
                                        new ObjectIdRef.Unpeeled(Ref.Storage.NETWORK, Constants.R_HEADS + branch, null))
                                .getDestination();
                        return new Outcome(
                                false,
                                base.toString(),
                                null,
                                ArchiveImport.run(http, guard, archive.get(), base, branch, limits, into, local));
                    }
                    throw ApiException.badRequest(limit.getMessage());
                }
                if (!offersPartial(capabilities)) {
                    if (archive.isPresent()) {
                        return archived(http, guard, archive.get(), base, branch, limits, into);
                    }
                    throw ApiException.badRequest(
                            limit.getMessage() + "; the remote does not offer a blobless partial fetch "
                                    + "(it must advertise filter and allow-reachable-sha1-in-want)");
                }
                try {
                    return new Outcome(true, base.toString(), fetch(http, into, base, token, limits, mapping, true));
                } catch (LimitExceeded again) {
                    if (archive.isPresent()) {
                        return archived(http, guard, archive.get(), base, branch, limits, into);
                    }
                    throw ApiException.badRequest(again.getMessage() + ", even for a blobless partial fetch");
                }
            }
        }
    }

    /** A new repository's default branch from the archive (public repositories only: no token goes to an archive). */
    private static Outcome archived(
            GuardedHttp http, EgressGuard guard, URI archive, URI base, String branch, Limits limits, Repository into) {
        return new Outcome(
                false,
                base.toString(),
                null,
                ArchiveImport.run(http, guard, archive, base, branch, limits, into, Constants.R_HEADS + branch));
    }

    private static boolean offersPartial(Set<String> capabilities) {
        return capabilities.contains("filter") && capabilities.contains("allow-reachable-sha1-in-want");
    }

    /** Where the repository turned out to be, and what its upload-pack offers. */
    record Probe(URI base, Set<String> capabilities, String defaultBranch) {}

    /** Follows redirects of the ref advertisement by hand, checking each target. */
    static Probe resolve(GuardedHttp http, EgressGuard guard, URI url, String token) {
        String s = url.toString();
        while (s.endsWith("/")) {
            s = s.substring(0, s.length() - 1);
        }
        URI base = URI.create(s);
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            guard.check(base); // the whole URL (scheme, credentials, name); the client's resolver checks the addresses
            // again
            URI probe = URI.create(base + INFO_REFS + "?service=git-upload-pack");
            Request request = http.client().newRequest(probe).timeout(30, TimeUnit.SECONDS);
            if (token != null) {
                request.headers(h -> h.put(
                        HttpHeader.AUTHORIZATION,
                        "Basic "
                                + Base64.getEncoder()
                                        .encodeToString(("x-access-token:" + token).getBytes(StandardCharsets.UTF_8))));
            }
            try (InputStreamResponseListener listener =
                    new InputStreamResponseListener()) { // closing it drops what is left
                request.send(listener);
                Response r = listener.get(30, TimeUnit.SECONDS);
                int status = r.getStatus();
                if (status >= 300 && status < 400) {
                    String location = r.getHeaders().get(HttpHeader.LOCATION);
                    if (location == null) {
                        throw ApiException.badRequest("the remote redirected without a Location");
                    }
                    URI next;
                    try {
                        next = probe.resolve(location);
                    } catch (IllegalArgumentException e) {
                        throw ApiException.badRequest("the remote redirected to an invalid URL: " + location);
                    }
                    String path = next.getRawPath();
                    if (path == null || !path.endsWith(INFO_REFS)) {
                        throw ApiException.badRequest(
                                "the remote redirected somewhere that is not a Git repository: " + next);
                    }
                    base = URI.create(next.getScheme() + "://" + next.getRawAuthority()
                            + path.substring(0, path.length() - INFO_REFS.length()));
                    continue;
                }
                if (status == 401 || status == 403) {
                    throw ApiException.badRequest(
                            "the remote refused access (" + status + "); pass auth.token for a private repository");
                }
                if (status != 200) {
                    throw ApiException.badRequest(
                            "the remote answered " + status + " for " + probe + ": not a Git repository");
                }
                String contentType = r.getHeaders().get(HttpHeader.CONTENT_TYPE);
                if (contentType == null || !contentType.startsWith("application/x-git-upload-pack-advertisement")) {
                    throw ApiException.badRequest(
                            "the remote does not speak Git smart HTTP (Content-Type " + contentType + ")");
                }
                try (InputStream in = listener.getInputStream()) {
                    byte[] advertisement = in.readNBytes(64 << 10);
                    return new Probe(base, capabilities(advertisement), defaultBranch(advertisement));
                }
            } catch (InterruptedException | InterruptedIOException e) {
                Thread.currentThread().interrupt();
                throw ApiException.badRequest("interrupted while contacting the remote");
            } catch (TimeoutException e) {
                throw ApiException.badRequest("the remote " + base.getHost() + " did not answer within 30 seconds");
            } catch (ExecutionException | IOException e) {
                EgressGuard.Refused refused = EgressGuard.Refused.in(e);
                if (refused != null) {
                    throw ApiException.badRequest(refused.getMessage());
                }
                Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                throw ApiException.badRequest("the remote " + base.getHost() + " cannot be reached: "
                        + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage()));
            } finally {
                var unused = request.abort(new IOException("the probe ended")); // nothing once the exchange completed
            }
        }
        throw ApiException.badRequest("the remote redirected more than " + MAX_REDIRECTS + " times");
    }

    /** The branch {@code HEAD} names in the advertisement's {@code symref} capability; {@code main} when none. */
    static String defaultBranch(byte[] advertisement) {
        String text = new String(advertisement, StandardCharsets.ISO_8859_1);
        int at = text.indexOf("symref=HEAD:" + Constants.R_HEADS);
        if (at < 0) {
            return "main";
        }
        int from = at + ("symref=HEAD:" + Constants.R_HEADS).length();
        int end = from;
        while (end < text.length() && text.charAt(end) > ' ' && text.charAt(end) != '\0') {
            end++;
        }
        return end > from ? text.substring(from, end) : "main";
    }

    /** The capabilities after the first ref of a protocol v0 advertisement. */
    static Set<String> capabilities(byte[] advertisement) {
        String text = new String(advertisement, StandardCharsets.ISO_8859_1);
        int nul = text.indexOf('\0');
        if (nul < 0) {
            return Set.of();
        }
        int end = text.indexOf('\n', nul);
        String caps = text.substring(nul + 1, end < 0 ? text.length() : end);
        Set<String> out = new HashSet<>();
        for (String c : caps.trim().split(" ")) {
            int eq = c.indexOf('=');
            out.add(eq < 0 ? c : c.substring(0, eq));
        }
        return out;
    }

    private static org.eclipse.jgit.transport.FetchResult fetch(
            GuardedHttp http,
            Repository into,
            URI base,
            String token,
            Limits limits,
            CheckedFetch.Mapping mapping,
            boolean partial) {
        Counting monitor = new Counting(limits.maxObjects());
        long before = packBytes(into.getDirectory().toPath());
        java.util.Set<Path> packsBefore = packs(into.getDirectory().toPath());
        org.eclipse.jgit.transport.FetchResult result;
        try (Git git = Git.wrap(into)) {
            StoredConfig config = into.getConfig();
            // redirects were followed and checked above; JGit must not follow any others on its own
            config.setString("http", null, "followRedirects", "false");
            config.save();
            FilterSpec filter = partial ? FilterSpec.fromFilterLine("blob:none") : FilterSpec.NO_FILTER;
            result = CheckedFetch.fetch(
                    git,
                    base.toString(),
                    mapping,
                    command -> {
                        command.setTimeout(limits.timeoutSeconds());
                        if (token != null) {
                            command.setCredentialsProvider(
                                    new UsernamePasswordCredentialsProvider("x-access-token", token));
                        }
                    },
                    t -> {
                        if (!(t instanceof TransportHttp transport)) {
                            throw ApiException.badRequest("the remote must be an http or https URL");
                        }
                        transport.setHttpConnectionFactory(http);
                        t.setFilterSpec(filter);
                    },
                    monitor,
                    partial);
        } catch (GitAPIException | IOException | RuntimeException e) {
            if (monitor.exceeded) {
                throw new LimitExceeded("the repository has " + monitor.announced + " objects, more than the limit of "
                        + limits.maxObjects());
            }
            if (e instanceof ApiException api) {
                throw api;
            }
            EgressGuard.Refused refused = EgressGuard.Refused.in(e);
            if (refused != null) {
                throw ApiException.badRequest(refused.getMessage());
            }
            throw ApiException.badRequest("fetching from the remote failed: "
                    + CheckedFetch.describe(
                            e,
                            into.getDirectory().getAbsolutePath(),
                            into.getDirectory().getParent()));
        }
        long packBytes = packBytes(into.getDirectory().toPath()) - before;
        if (packBytes > limits.maxPackBytes()) {
            if (result != null) {
                undo(into, result); // an existing repository's refs are as they were; a new one is deleted anyway
            }
            // and the pack goes too: kept, the same fetch again would find its objects there and pass the limit
            for (Path p : packs(into.getDirectory().toPath())) {
                if (!packsBefore.contains(p)) {
                    try {
                        Files.deleteIfExists(p);
                    } catch (IOException e) {
                        throw new IllegalStateException("could not remove the pack a refused fetch brought", e);
                    }
                }
            }
            throw new LimitExceeded(
                    "the fetched pack is " + packBytes + " bytes, more than the limit of " + limits.maxPackBytes());
        }
        return result;
    }

    /** The files of {@code objects/pack}: the packs, their indexes, bitmaps and keep files. */
    private static java.util.Set<Path> packs(Path gitDir) {
        try (Stream<Path> s = Files.list(gitDir.resolve("objects").resolve("pack"))) {
            return s.collect(java.util.stream.Collectors.toSet());
        } catch (IOException e) {
            return java.util.Set.of();
        }
    }

    private static long packBytes(Path gitDir) {
        try (Stream<Path> s = Files.walk(gitDir.resolve("objects"))) {
            return s.filter(Files::isRegularFile)
                    .mapToLong(p -> p.toFile().length())
                    .sum();
        } catch (IOException e) {
            return 0;
        }
    }

    /** Puts every ref the fetch moved back where it was (deletes the ones it made). */
    private static void undo(Repository into, org.eclipse.jgit.transport.FetchResult result) {
        for (org.eclipse.jgit.transport.TrackingRefUpdate u : result.getTrackingRefUpdates()) {
            try {
                org.eclipse.jgit.lib.RefUpdate back = into.updateRef(u.getLocalName());
                back.setExpectedOldObjectId(u.getNewObjectId());
                back.setForceUpdate(true);
                if (u.getOldObjectId() == null || u.getOldObjectId().equals(org.eclipse.jgit.lib.ObjectId.zeroId())) {
                    back.delete();
                } else {
                    back.setNewObjectId(u.getOldObjectId());
                    back.update();
                }
            } catch (IOException e) {
                throw new IllegalStateException("could not undo the fetch of " + u.getLocalName(), e);
            }
        }
    }

    /** A fetch that stopped on a size or count limit: the only failure that may fall back to a partial fetch. */
    static final class LimitExceeded extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LimitExceeded(String message) {
            super(message);
        }
    }

    /** Cancels the fetch as soon as the pack announces more objects than allowed. */
    private static final class Counting implements ProgressMonitor {
        private final long max;
        volatile boolean exceeded;
        volatile long announced;

        Counting(long max) {
            this.max = max;
        }

        @Override
        public void start(int totalTasks) {}

        @Override
        public void beginTask(String title, int totalWork) {
            if (title != null && title.toLowerCase(Locale.ROOT).contains("receiving") && totalWork > max) {
                announced = totalWork;
                exceeded = true;
            }
        }

        @Override
        public void update(int completed) {}

        @Override
        public void endTask() {}

        @Override
        public boolean isCancelled() {
            return exceeded;
        }

        @Override
        public void showDuration(boolean enabled) {}
    }
}
