package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jgit.dircache.DirCache;
import org.eclipse.jgit.dircache.DirCacheBuilder;
import org.eclipse.jgit.dircache.DirCacheEntry;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.lib.Repository;

/**
 * The last way in of the spec's source resolution (its step 3): when a Git fetch is over the import limits and no
 * blobless one is possible, a code host that serves tarballs of a branch ({@code archiveHosts}: host to URL template
 * with {@code {owner}}, {@code {repo}} and {@code {ref}}) gives the branch's files, written as one commit (the files,
 * not their history) to a ref. The download passes the egress guard, redirects included, and the same limits: its
 * bytes the pack limit, its files the object limit, the unpacked bytes four times the pack limit.
 */
final class ArchiveImport {

    private static final int MAX_REDIRECTS = 5;

    /** What an archive import wrote: {@code localRef} moved from {@code before} (zero: new) to {@code after}. */
    record Archived(String remoteBranch, String localRef, ObjectId before, ObjectId after) {}

    private ArchiveImport() {}

    /**
     * {@code ATRIUM_APP_DEPLOY_REMOTE_ARCHIVE_HOSTS}'s form: {@code host=template} pairs separated by commas; a host
     * may carry a port ({@code example.test:8443}).
     */
    static Map<String, String> hosts(String setting) {
        Map<String, String> out = new LinkedHashMap<>();
        if (setting == null) {
            return out;
        }
        for (String pair : setting.split(",")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                out.put(
                        pair.substring(0, eq).trim().toLowerCase(Locale.ROOT),
                        pair.substring(eq + 1).trim());
            }
        }
        return out;
    }

    /** The tarball URL of {@code branch} of {@code remote}, when its host is one that serves them. */
    static Optional<URI> url(URI remote, String branch, Map<String, String> hosts) {
        if (remote.getHost() == null || branch == null) {
            return Optional.empty();
        }
        String host = remote.getHost().toLowerCase(Locale.ROOT);
        String template = remote.getPort() == -1 ? null : hosts.get(host + ":" + remote.getPort());
        if (template == null && remote.getPort() == -1) {
            template = hosts.get(host);
        }
        if (template == null) {
            return Optional.empty();
        }
        String path = remote.getPath() == null ? "" : remote.getPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        if (path.endsWith(".git")) {
            path = path.substring(0, path.length() - 4);
        }
        int slash = path.lastIndexOf('/');
        if (slash <= 0) {
            return Optional.empty();
        }
        String owner = path.substring(1, slash);
        String repo = path.substring(slash + 1);
        return Optional.of(URI.create(template.replace("{owner}", owner)
                .replace("{repo}", repo)
                .replace("{ref}", URLEncoder.encode(branch, StandardCharsets.UTF_8))));
    }

    /** Downloads {@code archive} and writes its files as one commit to {@code localRef} of {@code into}. */
    static Archived run(
            GuardedHttp http,
            EgressGuard guard,
            URI archive,
            URI remote,
            String branch,
            RemoteImport.Limits limits,
            Repository into,
            String localRef) {
        URI at = archive;
        for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
            guard.check(at);
            Request request = http.client().newRequest(at).timeout(limits.timeoutSeconds(), TimeUnit.SECONDS);
            try (InputStreamResponseListener listener = new InputStreamResponseListener()) {
                request.send(listener);
                Response r = listener.get(limits.timeoutSeconds(), TimeUnit.SECONDS);
                int status = r.getStatus();
                if (status >= 300 && status < 400 && r.getHeaders().get(HttpHeader.LOCATION) != null) {
                    at = at.resolve(r.getHeaders().get(HttpHeader.LOCATION));
                    continue;
                }
                if (status != 200) {
                    throw ApiException.badRequest(
                            "the archive of " + branch + " at " + archive + " answered " + status);
                }
                try (InputStream in = listener.getInputStream()) {
                    return write(in, remote, branch, limits, into, localRef);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw ApiException.badRequest("interrupted while downloading the archive");
            } catch (java.util.concurrent.TimeoutException e) {
                throw ApiException.badRequest(
                        "the archive at " + archive + " did not answer within " + limits.timeoutSeconds() + " s");
            } catch (java.util.concurrent.ExecutionException | IOException e) {
                EgressGuard.Refused refused = EgressGuard.Refused.in(e);
                if (refused != null) {
                    throw ApiException.badRequest(refused.getMessage());
                }
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                throw ApiException.badRequest("downloading the archive at " + archive + " failed: "
                        + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage()));
            } finally {
                var unused = request.abort(new IOException("the download ended"));
            }
        }
        throw ApiException.badRequest(
                "the archive at " + archive + " redirected more than " + MAX_REDIRECTS + " times");
    }

    private static Archived write(
            InputStream body, URI remote, String branch, RemoteImport.Limits limits, Repository into, String localRef)
            throws IOException {
        DirCache index = DirCache.newInCore();
        DirCacheBuilder builder = index.builder();
        long files = 0;
        Bounded packed = new Bounded(body, limits.maxPackBytes(), "the archive is larger than the pack limit of ");
        try (ObjectInserter inserter = into.newObjectInserter();
                TarArchiveInputStream tar = new TarArchiveInputStream(new Bounded(
                        new GZIPInputStream(packed), 4 * limits.maxPackBytes(), "the archive unpacks to more than "))) {
            TarArchiveEntry e;
            while ((e = tar.getNextEntry()) != null) {
                String name = e.getName();
                int first = name.indexOf('/');
                // a code host's tarball holds one top directory (<repo>-<ref>/); a pax header is no file
                String path = first < 0 ? "" : name.substring(first + 1);
                if (path.isEmpty() || e.isDirectory() || e.isGlobalPaxHeader() || e.isPaxHeader()) {
                    continue;
                }
                if (++files > limits.maxObjects()) {
                    throw ApiException.badRequest("the archive has more than " + limits.maxObjects() + " files");
                }
                DirCacheEntry entry;
                try {
                    entry = new DirCacheEntry(path);
                } catch (IllegalArgumentException bad) {
                    throw ApiException.badRequest("the archive holds a path Git refuses: " + path);
                }
                if (e.isSymbolicLink()) {
                    byte[] target = e.getLinkName().getBytes(StandardCharsets.UTF_8);
                    entry.setFileMode(FileMode.SYMLINK);
                    entry.setObjectId(inserter.insert(Constants.OBJ_BLOB, target));
                } else if (e.isFile()) {
                    entry.setFileMode((e.getMode() & 0100) != 0 ? FileMode.EXECUTABLE_FILE : FileMode.REGULAR_FILE);
                    entry.setObjectId(inserter.insert(Constants.OBJ_BLOB, e.getSize(), tar));
                } else {
                    continue; // devices, fifos, hard links: nothing a repository holds
                }
                builder.add(entry);
            }
            if (files == 0) {
                throw ApiException.badRequest("the archive of " + branch + " holds no files");
            }
            builder.finish();
            ObjectId tree = index.writeTree(inserter);
            PersonIdent who = new PersonIdent("Atrium", "atrium@localhost");
            CommitBuilder commit = new CommitBuilder();
            commit.setTreeId(tree);
            commit.setAuthor(who);
            commit.setCommitter(who);
            commit.setMessage("The files of " + branch + " of " + remote + ", from its code host's archive\n\n"
                    + "The Git fetch was over the import limits and no blobless fetch was possible: this commit holds"
                    + " the branch's files, not its history.\n");
            ObjectId id = inserter.insert(commit);
            inserter.flush();
            Ref old = into.exactRef(localRef);
            RefUpdate u = into.updateRef(localRef);
            u.setNewObjectId(id);
            u.setForceUpdate(true);
            RefUpdate.Result result = u.update();
            if (result != RefUpdate.Result.NEW
                    && result != RefUpdate.Result.FORCED
                    && result != RefUpdate.Result.NO_CHANGE
                    && result != RefUpdate.Result.FAST_FORWARD) {
                throw new IOException("could not move " + localRef + ": " + result);
            }
            return new Archived(branch, localRef, old == null ? ObjectId.zeroId() : old.getObjectId(), id);
        }
    }

    /** Reads at most {@code max} bytes, then fails saying so. */
    private static final class Bounded extends FilterInputStream {
        private final long max;
        private final String what;
        private long read;

        Bounded(InputStream in, long max, String what) {
            super(in);
            this.max = max;
            this.what = what;
        }

        private void count(long n) {
            if (n > 0 && (read += n) > max) {
                throw ApiException.badRequest(what + max + " bytes");
            }
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            count(b < 0 ? 0 : 1);
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            count(n);
            return n;
        }
    }
}
