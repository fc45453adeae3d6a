package dev.atrium.repos.releases.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.blob.api.NoSuchBlobException;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.BodyLimit;
import dev.atrium.kernel.api.ByteRange;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.StoredContent;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryEvents;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.releases.internal.MultipartForm.Part;
import dev.atrium.repos.releases.internal.ReleaseStore.Asset;
import dev.atrium.repos.releases.internal.ReleaseStore.Release;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.HeaderParam;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.StreamingOutput;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventAdmin;

/**
 * {@code /api/repos/:repoId/releases}: releases by tag, as Gitea serves them, and their assets. Who may read and
 * change a repository is the repositories bundle's answer ({@link RepositoryRegistry#readable}), which asks the kernel.
 */
@Component(service = ReleasesResource.class)
@KernelResource
@Path("/api/repos/{repoId}/releases")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ReleasesResource {

    static final String READ = "repos:read";
    static final String WRITE = "repos:write";
    private static final int MAX_TAG = 250;
    private static final int MAX_NAME = 255;
    private static final int MAX_BODY = 100_000;
    private static final int COPY_BUFFER = 256 * 1024;
    /** A plain field of an upload (its {@code name}) is read into memory: this much at most. */
    private static final int MAX_FIELD = 4096;

    private final RepositoryRegistry repositories;
    private final ReleaseStore store;
    private final ReleaseAssets assets;
    private final PublicUrls urls;
    private final Tags tags;

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile EventAdmin events;

    @Activate
    public ReleasesResource(
            @Reference RepositoryRegistry repositories,
            @Reference ReleaseStore store,
            @Reference ReleaseAssets assets,
            @Reference PublicUrls urls) {
        this.repositories = repositories;
        this.store = store;
        this.assets = assets;
        this.urls = urls;
        this.tags = new Tags(repositories);
    }

    // ------------------------------------------------------------------------------------------------- releases

    @GET
    @RequiresScope(READ)
    @JsonShape(ReleaseJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("repoId") String repoId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        RepositoryRegistry.Access a = repositories.readable(Caller.from(sc), repoId);
        PageRequest page = PageRequest.of(limit, offset);
        List<Release> releases = store.list(repoId, a.owned(), page.limit(), page.offset());
        Map<String, List<Asset>> byRelease =
                store.assets(releases.stream().map(Release::id).toList());
        return page.body(
                "releases",
                releases.stream()
                        .map(r -> r.toJson(byRelease.get(r.id()), base(uri, r)))
                        .toList(),
                store.count(repoId, a.owned()));
    }

    @POST
    @RequiresScope(WRITE)
    @JsonShape(ReleaseJson.One.class)
    public Response create(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("repoId") String repoId,
            @JsonShape(ReleaseJson.Create.class) JsonNode json) {
        Caller caller = Caller.from(sc);
        Repository repo = repositories.writable(caller, repoId);
        JsonBody b = JsonBody.of(json);
        NulText.reject(json);
        String tag = tags.check(b.text("tag_name", 1, MAX_TAG));
        boolean draft = b.bool("draft").orElse(false);
        String target = b.optionalText("target_commitish", 1, MAX_TAG).orElse(repo.defaultBranch());
        String name = b.optionalText("name", 0, MAX_NAME).orElse(tag);
        String body = b.string("body").map(s -> limited("body", s, MAX_BODY)).orElse("");
        boolean prerelease = b.bool("prerelease").orElse(false);
        if (exists(repoId, tag)) {
            throw ApiException.conflict("tag " + tag + " already has a release");
        }
        String commit = tags.commitOf(repo, tag);
        if (commit == null) {
            // the target must name a commit now, even for a draft, whose tag is made when it is published
            tags.resolve(repo, target);
        }
        Release r;
        try {
            r = store.create(
                    repoId,
                    caller.principalId(),
                    new ReleaseStore.Draft(tag, name, body, draft, prerelease, target, commit));
        } catch (dev.atrium.kernel.api.Sql.Conflict e) {
            throw ApiException.conflict("tag " + tag + " already has a release");
        }
        if (commit == null && !draft) {
            // the row first: a tag is made (and announced) only for a release that exists
            String made;
            try {
                made = tags.create(repo, caller.principalId(), tag, target);
            } catch (RuntimeException e) {
                assets.delete(r);
                throw e;
            }
            r = store.update(r, null, null, null, null, null, made);
        }
        if (!r.draft()) {
            published(repo, r);
        }
        return Response.status(201)
                .entity(Map.of("release", r.toJson(List.of(), base(uri, r))))
                .build();
    }

    /** Announces a release that became public knowledge (not a draft), after its row is committed. */
    private void published(Repository repo, Release r) {
        EventAdmin admin = events;
        if (admin == null) {
            return;
        }
        Map<String, Object> props = new java.util.HashMap<>();
        props.put(RepositoryEvents.REPO_ID, repo.id());
        props.put(RepositoryEvents.SPACE_ID, repo.spaceId());
        props.put(RepositoryEvents.NAME, repo.name());
        props.put(RepositoryEvents.VISIBILITY, repo.visibility());
        props.put(RepositoryEvents.PRINCIPAL_ID, r.authorId());
        props.put(RepositoryEvents.TAG, r.tag());
        props.put(RepositoryEvents.RELEASE_ID, r.id());
        props.put(RepositoryEvents.PRERELEASE, r.prerelease());
        admin.postEvent(new Event(RepositoryEvents.RELEASE_PUBLISHED, props));
    }

    private boolean exists(String repoId, String tag) {
        try {
            store.byTag(repoId, tag, true);
            return true;
        } catch (ApiException missing) {
            return false;
        }
    }

    @GET
    @Path("latest")
    @RequiresScope(READ)
    @JsonShape(ReleaseJson.One.class)
    public Map<String, Object> latest(
            @Context SecurityContext sc, @Context UriInfo uri, @PathParam("repoId") String repoId) {
        repositories.readable(Caller.from(sc), repoId);
        Release r = store.latest(repoId)
                .orElseThrow(() -> ApiException.notFound("the repository has no published release"));
        return Map.of("release", r.toJson(store.assets(r.id()), base(uri, r)));
    }

    @GET
    @Path("{tag}")
    @RequiresScope(READ)
    @JsonShape(ReleaseJson.One.class)
    public Map<String, Object> get(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("repoId") String repoId,
            @PathParam("tag") String tag) {
        Release r = readable(sc, repoId, tag);
        return Map.of("release", r.toJson(store.assets(r.id()), base(uri, r)));
    }

    @PATCH
    @Path("{tag}")
    @RequiresScope(WRITE)
    @JsonShape(ReleaseJson.One.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("repoId") String repoId,
            @PathParam("tag") String tag,
            @JsonShape(ReleaseJson.Update.class) JsonNode json) {
        Caller caller = Caller.from(sc);
        Repository repo = repositories.writable(caller, repoId);
        Release r = store.byTag(repoId, tag, true);
        JsonBody b = JsonBody.of(json);
        NulText.reject(json);
        String name = b.optionalText("name", 0, MAX_NAME).orElse(null);
        String body = b.string("body").map(s -> limited("body", s, MAX_BODY)).orElse(null);
        Boolean draft = b.bool("draft").orElse(null);
        Boolean prerelease = b.bool("prerelease").orElse(null);
        String target = b.optionalText("target_commitish", 1, MAX_TAG).orElse(null);
        String commit = tags.commitOf(repo, r.tag());
        if (target != null) {
            if (commit != null && !target.equals(r.target())) {
                throw ApiException.conflict("tag " + r.tag() + " exists: its target can no longer change");
            }
            tags.resolve(repo, target);
        }
        if (Boolean.TRUE.equals(draft) && !r.draft()) {
            throw ApiException.conflict("a published release cannot become a draft again");
        }
        String made = null;
        if (Boolean.FALSE.equals(draft) && r.draft() && commit == null) {
            made = tags.create(repo, caller.principalId(), r.tag(), target != null ? target : r.target());
        }
        Release updated = store.update(r, name, body, draft, prerelease, target, made != null ? made : commit);
        if (r.draft() && !updated.draft()) {
            published(repo, updated);
        }
        return Map.of("release", updated.toJson(store.assets(updated.id()), base(uri, updated)));
    }

    @DELETE
    @Path("{tag}")
    @RequiresScope(WRITE)
    @JsonShape(ReleaseJson.Deleted.class)
    public Map<String, Object> delete(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("tag") String tag,
            @QueryParam("delete_tag") String deleteTag) {
        Caller caller = Caller.from(sc);
        Repository repo = repositories.writable(caller, repoId);
        boolean alsoTag = flag("delete_tag", deleteTag);
        Release r = store.byTag(repoId, tag, true);
        assets.delete(r);
        if (alsoTag) {
            tags.delete(repo, caller.principalId(), r.tag());
        }
        return Map.of("success", true, "tag_deleted", alsoTag);
    }

    // --------------------------------------------------------------------------------------------------- assets

    @GET
    @Path("{tag}/assets")
    @RequiresScope(READ)
    @JsonShape(ReleaseJson.Assets.class)
    public Map<String, Object> assets(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("repoId") String repoId,
            @PathParam("tag") String tag) {
        Release r = readable(sc, repoId, tag);
        String base = base(uri, r);
        return Map.of(
                "assets", store.assets(r.id()).stream().map(a -> a.toJson(base)).toList());
    }

    /**
     * Uploads one asset as {@code multipart/form-data}: the file in a part named {@code attachment} (Gitea's name) or
     * {@code file}; its name from the query's {@code name}, else a {@code name} field before the file, else the part's
     * file name. The bytes go to the BlobStore as they arrive.
     */
    @POST
    @Path("{tag}/assets")
    @Consumes(MediaType.WILDCARD)
    @BodyLimit(Long.MAX_VALUE)
    @RequiresScope(WRITE)
    @JsonShape(ReleaseJson.OneAsset.class)
    public Response upload(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("repoId") String repoId,
            @PathParam("tag") String tag,
            @QueryParam("name") String queryName,
            @HeaderParam(HttpHeaders.CONTENT_TYPE) String contentType,
            InputStream body)
            throws IOException {
        Caller caller = Caller.from(sc);
        repositories.writable(caller, repoId);
        Release r = store.byTag(repoId, tag, true);
        Asset made = null;
        try {
            MultipartForm form = new MultipartForm(body, MultipartForm.boundary(contentType));
            String fieldName = null;
            for (Part p = form.next(); p != null; p = form.next()) {
                boolean file = p.filename() != null
                        || p.name().equals("attachment")
                        || p.name().equals("file");
                if (!file) {
                    String value = field(p);
                    if (p.name().equals("name")) {
                        fieldName = value;
                    }
                    continue;
                }
                if (made != null) {
                    throw ApiException.badRequest("one file per upload: the form has more than one");
                }
                String name = queryName != null ? queryName : fieldName != null ? fieldName : p.filename();
                if (name == null) {
                    throw ApiException.badRequest(
                            "the asset needs a name: ?name=, a name field, or the part's filename");
                }
                made = assets.upload(r, caller.principalId(), ReleaseAssets.checkName(name), type(p), p.body());
            }
            if (made == null) {
                throw ApiException.badRequest("the form has no file: send it in a part named attachment");
            }
            return Response.status(201)
                    .entity(Map.of("asset", made.toJson(base(uri, r))))
                    .build();
        } catch (IOException | RuntimeException e) {
            MultipartForm.Malformed malformed = malformed(e);
            if (malformed != null) {
                forget(made);
                throw ApiException.badRequest(malformed.getMessage());
            }
            // the form went wrong after its file was kept: the upload did not happen
            forget(made);
            throw e;
        }
    }

    /** The form's own complaint, however the store wrapped it on its way out of a put. */
    private static MultipartForm.Malformed malformed(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof MultipartForm.Malformed m) {
                return m;
            }
        }
        return null;
    }

    private void forget(Asset made) {
        if (made != null) {
            assets.delete(made);
        }
    }

    private static String field(Part p) throws IOException {
        byte[] bytes = p.body().readNBytes(MAX_FIELD + 1);
        if (bytes.length > MAX_FIELD) {
            throw ApiException.badRequest("form field " + p.name() + " is longer than " + MAX_FIELD + " bytes");
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * The part's media type as JAX-RS writes it back (parameters checked and normalised), else
     * {@code application/octet-stream}: a type that does not parse would make every download of the asset fail.
     */
    static String type(Part p) {
        String t = p.contentType();
        if (t == null || t.length() > 200 || t.chars().anyMatch(c -> c < 0x20 || c > 0x7e)) {
            return MediaType.APPLICATION_OCTET_STREAM;
        }
        try {
            String normal = MediaType.valueOf(t.trim()).toString();
            return normal.length() > 200 ? MediaType.APPLICATION_OCTET_STREAM : normal;
        } catch (IllegalArgumentException notAType) {
            return MediaType.APPLICATION_OCTET_STREAM;
        }
    }

    /**
     * The asset's bytes as an attachment: whole, or one {@code Range} (206), with its SHA-256 as the ETag
     * ({@code If-None-Match} answers 304, {@code If-Range} decides whether the range applies).
     */
    @GET
    @Path("{tag}/assets/{assetId}/download")
    @Produces(MediaType.WILDCARD)
    @NotJson("*/*")
    @RequiresScope(READ)
    public Response download(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("tag") String tag,
            @PathParam("assetId") String assetId,
            @HeaderParam("Range") String range,
            @HeaderParam("If-Range") String ifRange,
            @HeaderParam(HttpHeaders.IF_NONE_MATCH) String ifNoneMatch)
            throws IOException {
        Release r = readable(sc, repoId, tag);
        Asset a = store.asset(r.id(), assetId);
        if (ByteRange.noneMatchHits(ifNoneMatch, a.etag())) {
            return Response.notModified().header(HttpHeaders.ETAG, a.etag()).build();
        }
        ByteRange part;
        try {
            part = ifRange != null && !ifRange.trim().equals(a.etag()) ? null : ByteRange.parse(range, a.size());
        } catch (ByteRange.Unsatisfiable e) {
            return Response.status(416)
                    .type(MediaType.APPLICATION_JSON)
                    .entity(ApiException.body("RANGE_NOT_SATISFIABLE", e.getMessage()))
                    .header("Content-Range", "bytes */" + a.size())
                    .build();
        }
        try {
            if (assets.blobs().stat(a.blobKey()) == null) {
                throw ApiException.notFound("the asset's bytes are missing; upload it again");
            }
        } catch (NoSuchBlobException e) {
            throw ApiException.notFound("the asset's bytes are missing; upload it again");
        }
        if (part == null) {
            store.downloaded(a.id());
        }
        // opened when the answer is written, so that nothing before it can leave the stream open
        StreamingOutput out = o -> copy(
                part == null
                        ? assets.blobs().open(a.blobKey())
                        : assets.blobs().open(a.blobKey(), part.first(), part.length()),
                o);
        Response.ResponseBuilder b = part == null
                ? Response.ok(out).header(HttpHeaders.CONTENT_LENGTH, a.size())
                : Response.status(206)
                        .entity(out)
                        .header(HttpHeaders.CONTENT_LENGTH, part.length())
                        .header("Content-Range", part.contentRange(a.size()));
        return b.type(a.contentType())
                .header("Accept-Ranges", "bytes")
                .header(HttpHeaders.ETAG, a.etag())
                .header("X-Content-Type-Options", StoredContent.NOSNIFF)
                .header("Content-Security-Policy", StoredContent.CSP)
                .header("Content-Disposition", StoredContent.disposition("attachment", a.name()))
                .build();
    }

    private static void copy(InputStream opened, OutputStream out) throws IOException {
        try (InputStream in = opened) {
            byte[] buffer = new byte[COPY_BUFFER];
            for (int n; (n = in.read(buffer)) != -1; ) {
                out.write(buffer, 0, n);
            }
        }
    }

    @DELETE
    @Path("{tag}/assets/{assetId}")
    @RequiresScope(WRITE)
    @JsonShape(ReleaseJson.AssetDeleted.class)
    public Map<String, Object> deleteAsset(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @PathParam("tag") String tag,
            @PathParam("assetId") String assetId) {
        repositories.writable(Caller.from(sc), repoId);
        Release r = store.byTag(repoId, tag, true);
        assets.delete(store.asset(r.id(), assetId));
        return Map.of("success", true);
    }

    // ------------------------------------------------------------------------------------------------- helpers

    /** The release of {@code tag} as the caller may see it: a draft only by the repository's owner. */
    private Release readable(SecurityContext sc, String repoId, String tag) {
        RepositoryRegistry.Access a = repositories.readable(Caller.from(sc), repoId);
        return store.byTag(repoId, tag, a.owned());
    }

    /** The release's own URL, which its assets' download URLs extend. */
    private String base(UriInfo uri, Release r) {
        return urls.base(uri.getBaseUri()) + "/api/repos/" + r.repoId() + "/releases/"
                + URLEncoder.encode(r.tag(), StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String limited(String field, String value, int max) {
        if (value.length() > max) {
            throw ApiException.badRequest(field + " is longer than " + max + " characters");
        }
        return value;
    }

    private static boolean flag(String name, String value) {
        if (value == null || value.isBlank()) {
            return false;
        }
        return switch (value.trim()) {
            case "true", "1" -> true;
            case "false", "0" -> false;
            default -> throw ApiException.badRequest(name + " must be true or false");
        };
    }
}
