package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import dev.atrium.repos.internal.GitWrites.CommitRequest;
import dev.atrium.repos.internal.GitWrites.FileChange;
import dev.atrium.repos.internal.RepoAccess.Located;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.HeaderParam;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.transport.FetchResult;
import org.eclipse.jgit.transport.TrackingRefUpdate;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /api/repos/:id/import}: a Git bundle or an archive uploaded into an existing repository. */
@Component(service = RepoImportResource.class)
@KernelResource
@Path("/api/repos/{repoId}/import")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class RepoImportResource {

    /** A Git bundle upload, streamed to a temporary file. */
    static final long MAX_IMPORT_BYTES = 1L << 30;
    /** An archive's unpacked files, held in memory until they are one commit. */
    static final long MAX_ARCHIVE_BYTES = 256L << 20;

    private static final Duration PUSH_WAIT = Duration.ofSeconds(30);

    private final Repositories repositories;
    private final RepoAccess access;
    private final ReposResource repos;

    @Activate
    public RepoImportResource(
            @Reference Repositories repositories, @Reference RepoAccess access, @Reference ReposResource repos) {
        this.repositories = repositories;
        this.access = access;
        this.repos = repos;
    }

    /**
     * {@code POST /api/repos/:id/import}: a Git bundle ({@code application/x-git-bundle}) adds its branches and
     * tags (no branch is rewritten: a non-fast-forward is 409); a {@code application/zip} or
     * {@code application/gzip} archive becomes one commit on the default branch holding exactly its files.
     */
    @POST
    @dev.atrium.kernel.api.BodyLimit(MAX_IMPORT_BYTES)
    @Consumes(MediaType.WILDCARD)
    @RequiresScope("repos:write")
    @JsonShape(RepoJson.Imported.class)
    public Response importUpload(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @HeaderParam("Content-Type") String contentType,
            @QueryParam("message") String message,
            InputStream body)
            throws IOException {
        Caller caller = Caller.from(sc);
        Located l = access.writable(caller, repoId);
        String type =
                contentType == null ? "" : contentType.split(";")[0].trim().toLowerCase(Locale.ROOT);
        switch (type) {
            case "application/x-git-bundle" -> {
                return Response.ok(importBundle(l.repo(), caller, body)).build();
            }
            case "application/zip", "application/gzip", "application/x-gzip", "application/x-tar+gzip" -> {
                List<FileChange> files =
                        Archives.read(body, type.equals("application/zip") ? "zip" : "tar.gz", MAX_ARCHIVE_BYTES);
                String msg = message == null || message.isBlank() ? "Import archive" : message;
                if (GitNames.textProblem(msg) != null) {
                    throw ApiException.badRequest("message: " + GitNames.textProblem(msg));
                }
                PersonIdent author =
                        new PersonIdent(caller.principalId(), caller.principalId() + "@users.noreply.atrium");
                CommitRequest req = new CommitRequest(l.repo().defaultBranch(), null, msg, author, files, true);
                return Response.status(201)
                        .entity(repos.commit(l.repo(), caller, req))
                        .build();
            }
            default ->
                throw ApiException.badRequest(
                        "Content-Type must be application/x-git-bundle, application/zip or application/gzip (a .tar.gz)");
        }
    }

    private Map<String, Object> importBundle(Repository r, Caller caller, InputStream body) throws IOException {
        java.nio.file.Path tmp = java.nio.file.Files.createTempFile("atrium-import-", ".bundle");
        try {
            long size;
            try (var out = java.nio.file.Files.newOutputStream(tmp)) {
                size = copyBounded(body, out, MAX_IMPORT_BYTES);
            }
            if (size == 0) {
                throw ApiException.badRequest("the body is empty: send a Git bundle");
            }
            byte[] head = new byte[16];
            try (InputStream in = java.nio.file.Files.newInputStream(tmp)) {
                int n = in.readNBytes(head, 0, head.length);
                String start = new String(head, 0, n, StandardCharsets.US_ASCII);
                if (!start.startsWith("# v2 git bundle") && !start.startsWith("# v3 git bundle")) {
                    throw ApiException.badRequest(
                            "the body is not a Git bundle (it must start with '# v2 git bundle')");
                }
            }
            try (org.eclipse.jgit.lib.Repository git = repositories.open(r);
                    Git g = Git.wrap(git);
                    var lock = repositories.lockForPush(r, PUSH_WAIT)) {
                // a local tag never moves (a refspec without + still fast-forwards one), and a default branch that
                // takes merges only takes none from a bundle
                boolean mergesOnly = repositories.mergesOnly(r);
                Map<String, org.eclipse.jgit.lib.ObjectId> tags = new java.util.HashMap<>();
                git.getRefDatabase()
                        .getRefsByPrefix(Constants.R_TAGS)
                        .forEach(t -> tags.put(t.getName(), t.getObjectId()));
                Ref defaultRef = git.exactRef(Constants.R_HEADS + r.defaultBranch());
                org.eclipse.jgit.lib.ObjectId defaultAt = defaultRef == null ? null : defaultRef.getObjectId();
                List<String> rejected = new ArrayList<>();
                CheckedFetch.Mapping mapping = ref -> {
                    String name = ref.getName();
                    if (mergesOnly && name.equals(Constants.R_HEADS + r.defaultBranch()) && defaultAt != null) {
                        if (!defaultAt.equals(ref.getObjectId())) {
                            rejected.add(name + " (the default branch takes merges of pull requests only)");
                        }
                        return null;
                    }
                    if (tags.containsKey(name)) {
                        if (!tags.get(name).equals(ref.getObjectId())) {
                            rejected.add(name + " (a tag never moves)");
                        }
                        return null;
                    }
                    return new org.eclipse.jgit.transport.RefSpec(name + ":" + name);
                };
                FetchResult result = CheckedFetch.fetch(g, tmp.toString(), mapping, c -> {}, null, null, false);
                if (result == null && rejected.isEmpty()) {
                    return Map.of("refs", List.of()); // no branches or tags: nothing to import
                }
                List<RefChange> changes = new ArrayList<>();
                List<Map<String, Object>> refs = new ArrayList<>();
                Iterable<TrackingRefUpdate> updates = result == null ? List.of() : result.getTrackingRefUpdates();
                for (TrackingRefUpdate u : updates) {
                    switch (u.getResult()) {
                        case NEW, FAST_FORWARD, FORCED -> {
                            changes.add(new RefChange(
                                    u.getLocalName(),
                                    u.getOldObjectId().name(),
                                    u.getNewObjectId().name()));
                            refs.add(Map.of(
                                    "ref",
                                    u.getLocalName(),
                                    "commit",
                                    u.getNewObjectId().name()));
                        }
                        case NO_CHANGE -> {}
                        default -> rejected.add(u.getLocalName() + " (" + u.getResult() + ")");
                    }
                }
                repositories.pushed(r, caller.principalId(), changes);
                if (!rejected.isEmpty()) {
                    throw ApiException.conflict("the bundle would rewrite " + String.join(", ", rejected)
                            + (changes.isEmpty() ? "" : "; the other refs were imported"));
                }
                if (git.exactRef(Constants.HEAD) != null
                        && git.exactRef(Constants.HEAD).getObjectId() == null) {
                    Ref first = git.getRefDatabase().getRefsByPrefix(Constants.R_HEADS).stream()
                            .findFirst()
                            .orElse(null);
                    if (first != null && git.exactRef(Constants.R_HEADS + r.defaultBranch()) == null) {
                        repositories.update(
                                r, null, null, null, first.getName().substring(Constants.R_HEADS.length()), null);
                    }
                }
                return Map.of("refs", refs);
            } catch (GitAPIException e) {
                throw ApiException.badRequest("the bundle could not be imported: "
                        + CheckedFetch.describe(
                                e,
                                tmp.toUri().toString(),
                                tmp.toString(),
                                tmp.getParent().toString()));
            }
        } finally {
            java.nio.file.Files.deleteIfExists(tmp);
        }
    }

    private static long copyBounded(InputStream in, java.io.OutputStream out, long max) throws IOException {
        byte[] buf = new byte[1 << 16];
        long total = 0;
        int n;
        while (true) {
            try {
                n = in.read(buf);
            } catch (IOException e) {
                // the client's body ended early or broke off: its error, not the server's
                throw ApiException.badRequest("the upload could not be read to its end: "
                        + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
            }
            if (n <= 0) {
                break;
            }
            total += n;
            if (total > max) {
                throw new ApiException(413, "PAYLOAD_TOO_LARGE", "the upload is larger than " + max + " bytes");
            }
            out.write(buf, 0, n);
        }
        return total;
    }
}
