package dev.atrium.storage.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.blob.api.NoSuchBlobException;
import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.BodyLimit;
import dev.atrium.kernel.api.ByteRange;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.StoredContent;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.Deflater;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import javax.servlet.http.HttpServletResponse;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.HeaderParam;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /api/spaces/:spaceId/storage}: every route proves the workspace through the kernel's {@link OwnerScope}
 * first (a stranger's workspace is the same 404 as a missing one), then addresses files only inside it. The one
 * exception is a download by a signed URL, which carries its own proof (see {@link #download}).
 *
 * <p>Why one class of about 860 lines: the storage routes of the spec (18), each proving the workspace first; the file
 * logic is {@link Storage}'s.
 */
@Component(service = StorageResource.class)
@KernelResource
@Path("/api/spaces/{spaceId}/storage")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class StorageResource {

    static final String READ = "files:read";
    static final String WRITE = "files:write";
    /** Bodies of the byte routes are limited by the configured file size and quota, not by the kernel. */
    static final long ANY_SIZE = Long.MAX_VALUE;

    private static final int MAX_BULK = 1000;
    private static final int MAX_CONTENT_TYPE = 255;
    private static final long DEFAULT_URL_SECONDS = 3600;
    private static final int COPY_BUFFER = 256 * 1024;
    private static final int MAX_OPEN_ATTEMPTS = 5;
    private static final Logger LOG = LoggerFactory.getLogger(StorageResource.class);

    private final OwnerScope ownerScope;
    private final Storage storage;
    private final FileHandlers handlers;
    private final PublicUrls urls;
    private final SpaceDirectory spaces;
    private final AtomicBoolean copyingNoted = new AtomicBoolean();

    @Activate
    public StorageResource(
            @Reference OwnerScope ownerScope,
            @Reference Storage storage,
            @Reference FileHandlers handlers,
            @Reference PublicUrls urls,
            @Reference SpaceDirectory spaces) {
        this.ownerScope = ownerScope;
        this.spaces = spaces;
        this.storage = storage;
        this.handlers = handlers;
        this.urls = urls;
    }

    private SpaceRef space(SecurityContext sc, String spaceId) {
        return ownerScope.require(Caller.from(sc), spaceId);
    }

    // ---------------------------------------------------------------- listing and metadata

    @GET
    @RequiresScope(READ)
    @JsonShape(StorageJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("path") String path,
            @QueryParam("folder_id") String folderId,
            @QueryParam("sort") String sort,
            @QueryParam("order") String order,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = space(sc, spaceId);
        PageRequest page = PageRequest.of(limit, offset);
        Storage.Sort by = Storage.Sort.of(sort);
        boolean descending = direction(order);
        Entry folder = storage.folder(space.id(), folderId, path == null ? null : Paths.normalise("path", path, true));
        Map<String, Object> body = page.body(
                "files",
                storage.list(space.id(), folder, by, descending, page.limit(), page.offset()).stream()
                        .map(Entry::toJson)
                        .toList(),
                storage.count(space.id(), folder));
        body.put("folder", folder == null ? null : folder.toJson());
        body.put("path", folder == null ? "" : folder.path());
        body.put("sort", by.column);
        body.put("order", descending ? "desc" : "asc");
        return body;
    }

    private static boolean direction(String order) {
        if (order == null || order.isBlank() || order.equals("asc")) {
            return false;
        }
        if (order.equals("desc")) {
            return true;
        }
        throw ApiException.badRequest("order must be asc or desc");
    }

    @GET
    @Path("file-handlers")
    @RequiresScope(READ)
    @JsonShape(StorageJson.Handlers.class)
    public Map<String, Object> fileHandlers(@Context SecurityContext sc, @PathParam("spaceId") String spaceId) {
        SpaceRef space = space(sc, spaceId);
        return Map.of(
                "handlers",
                handlers.all(space.id()).stream()
                        .map(FileHandlers.Handler::toJson)
                        .toList());
    }

    @POST
    @Path("folders")
    @RequiresScope(WRITE)
    @JsonShape(StorageJson.OneFolder.class)
    public Response createFolder(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(StorageJson.NewFolder.class) JsonNode body) {
        SpaceRef space = space(sc, spaceId);
        NulText.reject(body);
        JsonBody json = JsonBody.of(body);
        return Response.status(201)
                .entity(Map.of(
                        "folder",
                        storage.createFolder(space.id(), target(space, json)).toJson()))
                .build();
    }

    @POST
    @Path("files")
    @RequiresScope(WRITE)
    @JsonShape(StorageJson.OneFile.class)
    public Response createFile(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(StorageJson.NewFile.class) JsonNode body)
            throws IOException {
        SpaceRef space = space(sc, spaceId);
        NulText.reject(body);
        JsonBody json = JsonBody.of(body);
        Storage.Target target = target(space, json);
        byte[] content = json.string("content").orElse("").getBytes(StandardCharsets.UTF_8);
        String type =
                json.string("content_type").map(StorageResource::contentType).orElse(null);
        Entry file = storage.write(
                space.id(), target, null, false, new java.io.ByteArrayInputStream(content), content.length, type, null);
        return Response.status(201).entity(Map.of("file", file.toJson())).build();
    }

    /** Where a new entry goes: {@code path}, or {@code name} inside {@code parent_id} (the root when absent). */
    private Storage.Target target(SpaceRef space, JsonBody json) {
        if (json.has("path")) {
            if (json.has("name") || json.has("parent_id")) {
                throw ApiException.badRequest("give either path, or name with an optional parent_id");
            }
            String path = Paths.normalise("path", json.requiredString("path"), false);
            return new Storage.Target(Paths.parent(path), Paths.last(path));
        }
        String name = Paths.name(
                "name", json.string("name").orElseThrow(() -> ApiException.badRequest("path or name is required")));
        String parentPath =
                json.string("parent_id").map(id -> folderPath(space, id)).orElse("");
        return new Storage.Target(parentPath, name);
    }

    private String folderPath(SpaceRef space, String folderId) {
        Entry folder = storage.folder(space.id(), folderId, null);
        return folder == null ? "" : folder.path();
    }

    @GET
    @Path("{fileId}")
    @RequiresScope(READ)
    @JsonShape(StorageJson.OneFile.class)
    public Map<String, Object> detail(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("fileId") String fileId) {
        SpaceRef space = space(sc, spaceId);
        return Map.of("file", storage.get(space.id(), fileId).toJson());
    }

    @PATCH
    @Path("{fileId}")
    @RequiresScope(WRITE)
    @JsonShape(StorageJson.OneFile.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("fileId") String fileId,
            @JsonShape(StorageJson.Move.class) JsonNode body) {
        SpaceRef space = space(sc, spaceId);
        NulText.reject(body);
        JsonBody json = JsonBody.of(body);
        storage.get(space.id(), fileId);
        String parentPath = null;
        String name = null;
        if (json.has("path")) {
            if (json.has("name") || body.has("parent_id")) {
                throw ApiException.badRequest("give either path, or name and/or parent_id");
            }
            String path = Paths.normalise("path", json.requiredString("path"), false);
            parentPath = Paths.parent(path);
            name = Paths.last(path);
        } else {
            if (json.has("name")) {
                name = Paths.name("name", json.requiredString("name"));
            }
            if (body.has("parent_id")) {
                // an explicit null moves the entry to the root
                parentPath = json.string("parent_id")
                        .map(id -> folderPath(space, id))
                        .orElse("");
            }
            if (name == null && parentPath == null) {
                throw ApiException.badRequest("name, parent_id or path is required");
            }
        }
        return Map.of("file", storage.move(space.id(), fileId, parentPath, name).toJson());
    }

    @DELETE
    @Path("{fileId}")
    @RequiresScope(WRITE)
    @JsonShape(StorageJson.Deleted.class)
    public Map<String, Object> delete(
            @Context SecurityContext sc, @PathParam("spaceId") String spaceId, @PathParam("fileId") String fileId) {
        SpaceRef space = space(sc, spaceId);
        int deleted = storage.delete(space.id(), List.of(fileId));
        return Map.of("success", true, "deleted", deleted);
    }

    // ---------------------------------------------------------------- content

    @GET
    @Path("{fileId}/content")
    @Produces({MediaType.WILDCARD})
    @RequiresScope(READ)
    @NotJson("*/*")
    public Response content(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("fileId") String fileId,
            @HeaderParam(HttpHeaders.IF_NONE_MATCH) String ifNoneMatch,
            @Context HttpServletResponse response)
            throws IOException {
        SpaceRef space = space(sc, spaceId);
        for (int attempt = 1; ; attempt++) {
            Entry file = file(space, fileId);
            if (ByteRange.noneMatchHits(ifNoneMatch, file.etag())) {
                return Response.notModified()
                        .header(HttpHeaders.ETAG, file.etag())
                        .build();
            }
            StreamingOutput body = body(file, null, attempt, response);
            if (body != null) {
                return served(
                                Response.ok(body, file.contentType()),
                                file.name(),
                                !StoredContent.passive(file.contentType()))
                        .header(HttpHeaders.ETAG, file.etag())
                        .header(HttpHeaders.CONTENT_LENGTH, file.size())
                        .build();
            }
        }
    }

    /**
     * The file's bytes (all, or the range {@code r}), opened before the answer is made so that its headers describe
     * them: from the blob's own file when the store keeps files (see {@link FileBody}), else its stream. Null when the
     * blob went away since the row was read (a write replaced the content and released the old bytes): read the row again.
     */
    private StreamingOutput body(Entry file, ByteRange r, int attempt, HttpServletResponse response)
            throws IOException {
        long first = r == null ? 0 : r.first();
        long length = r == null ? file.size() : r.length();
        try {
            Optional<FileChannel> own = storage.openFile(file);
            if (own.isPresent()) {
                FileChannel channel = own.get();
                boolean entrys;
                try {
                    entrys = channel.size() == file.size();
                } catch (IOException e) {
                    channel.close();
                    throw e;
                }
                if (entrys) {
                    return new FileBody(channel, first, length, response, FileBody.WINDOW, this::copying);
                }
                channel.close(); // not this entry's bytes: the stream refuses them as it always has
            }
            return stream(storage.open(file, first, r == null ? -1 : length));
        } catch (NoSuchBlobException replacedMeanwhile) {
            if (attempt >= MAX_OPEN_ATTEMPTS) {
                throw ApiException.unavailable("the file changes too often to be read now; try again");
            }
            return null;
        }
    }

    /** Said once per activation: downloads then cost two more copies of each byte (a slower, not a wrong, answer). */
    private void copying(String why) {
        if (copyingNoted.compareAndSet(false, true)) {
            LOG.warn("downloads are copied through the JAX-RS stream, not written from the mapped file: {}", why);
        }
    }

    @PUT
    @Path("{fileId}/content")
    @Consumes({MediaType.WILDCARD})
    @BodyLimit(ANY_SIZE)
    @RequiresScope(WRITE)
    @JsonShape(StorageJson.OneFile.class)
    public Response writeContent(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("fileId") String fileId,
            @HeaderParam(HttpHeaders.CONTENT_TYPE) String contentType,
            @HeaderParam(HttpHeaders.IF_MATCH) String ifMatch,
            @HeaderParam(HttpHeaders.CONTENT_LENGTH) String length,
            InputStream body)
            throws IOException {
        SpaceRef space = space(sc, spaceId);
        Entry file = storage.write(
                space.id(),
                null,
                fileId,
                false,
                new FullReads(body),
                length(length),
                contentType == null ? null : contentType(contentType),
                ifMatch);
        return Response.ok(Map.of("file", file.toJson()))
                .header(HttpHeaders.ETAG, file.etag())
                .build();
    }

    private static long length(String header) {
        if (header == null || header.isBlank()) {
            return -1;
        }
        try {
            return Long.parseLong(header.trim());
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("Content-Length must be a number");
        }
    }

    static String contentType(String value) {
        String v = value.trim();
        if (v.isEmpty()
                || v.length() > MAX_CONTENT_TYPE
                || !v.matches("[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+*-]+(\\s*;.*)?")
                || v.chars().anyMatch(c -> c < 0x20 || c > 0x7e)) {
            throw ApiException.badRequest("content type must be a media type such as text/plain, at most "
                    + MAX_CONTENT_TYPE + " characters");
        }
        return v;
    }

    private Entry file(SpaceRef space, String fileId) {
        Entry file = storage.get(space.id(), fileId);
        if (file.folder()) {
            throw ApiException.badRequest("a folder has no content: download it with download-zip");
        }
        return file;
    }

    private static StreamingOutput stream(InputStream opened) {
        return out -> {
            try (InputStream in = opened) {
                copy(in, out);
            }
        };
    }

    // ---------------------------------------------------------------- downloads

    /**
     * The file's bytes as an attachment, whole or one {@code Range}. With a bearer token the owner scope decides (a
     * stranger gets 404 even with a valid signature). Without one, {@code expires} and {@code signature} from
     * {@code download-url} must be valid for this workspace id and file; an expired link is 410, a changed one or one
     * of a deleted file the same 404 as a missing file.
     */
    @GET
    @Path("download/{fileId}")
    @Produces({MediaType.WILDCARD})
    @Anonymous
    @NotJson("*/*")
    public Response download(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("fileId") String fileId,
            @QueryParam("expires") String expires,
            @QueryParam("signature") String signature,
            @HeaderParam("Range") String range,
            @HeaderParam("If-Range") String ifRange,
            @Context HttpServletResponse response)
            throws IOException {
        java.util.function.Supplier<Entry> lookup;
        if (sc != null && sc.getUserPrincipal() instanceof Caller caller && caller.principalId() != null) {
            SpaceRef space = ownerScope.require(caller, spaceId);
            if (!caller.hasScope(READ)) {
                throw ApiException.forbidden("this token lacks the scope " + READ);
            }
            lookup = () -> file(space, fileId);
        } else if (signature == null && expires == null) {
            throw ApiException.unauthorized(
                    "authentication required: send Authorization: Bearer <token> or use a signed download URL");
        } else {
            lookup = () -> signed(spaceId, fileId, expires, signature);
        }
        for (int attempt = 1; ; attempt++) {
            Entry file = lookup.get();
            ByteRange r;
            try {
                r = ifRange != null && !ifRange.trim().equals(file.etag()) ? null : ByteRange.parse(range, file.size());
            } catch (ByteRange.Unsatisfiable e) {
                return Response.status(416)
                        .type(MediaType.APPLICATION_JSON)
                        .entity(ApiException.body("RANGE_NOT_SATISFIABLE", e.getMessage()))
                        .header("Content-Range", "bytes */" + file.size())
                        .build();
            }
            StreamingOutput body = body(file, r, attempt, response);
            if (body == null) {
                continue;
            }
            Response.ResponseBuilder b = r == null
                    ? Response.ok(body).header(HttpHeaders.CONTENT_LENGTH, file.size())
                    : Response.status(206)
                            .entity(body)
                            .header(HttpHeaders.CONTENT_LENGTH, r.length())
                            .header("Content-Range", r.contentRange(file.size()));
            return served(b.type(file.contentType()), file.name(), true)
                    .header("Accept-Ranges", "bytes")
                    .header(HttpHeaders.ETAG, file.etag())
                    .build();
        }
    }

    private Entry signed(String spaceId, String fileId, String expires, String signature) {
        if (signature == null || signature.isBlank() || expires == null || !expires.matches("[0-9]{1,12}")) {
            throw ApiException.badRequest(
                    "a signed download URL needs expires (seconds since the epoch) and signature");
        }
        long until = Long.parseLong(expires);
        // a signature made for another file, workspace or expiry is the same 404 as a missing file: no oracle
        if (!storage.signer().verify(spaceId, fileId, until, signature)) {
            throw Storage.notFound();
        }
        if (Instant.now().getEpochSecond() > until) {
            throw ApiException.gone("the download URL has expired");
        }
        // the link stops working with its workspace: a suspended owner or workspace serves nothing
        if (spaces.byId(spaceId).isEmpty()) {
            throw Storage.notFound();
        }
        Entry file = storage.get(spaceId, fileId);
        if (file.folder()) {
            throw Storage.notFound();
        }
        return file;
    }

    /** Copies in large chunks: the response goes out in few, big writes (InputStream.transferTo's 8 KiB are slow here). */
    static void copy(InputStream in, OutputStream out) throws IOException {
        byte[] buffer = new byte[COPY_BUFFER];
        for (int n; (n = in.read(buffer)) != -1; ) {
            out.write(buffer, 0, n);
        }
    }

    /**
     * The headers of every answer carrying stored bytes: no type sniffing (a text/plain file never becomes HTML), a policy
     * that loads nothing and sandboxes the document (should a browser render it anyway, it runs no script on this origin),
     * and the disposition.
     */
    static Response.ResponseBuilder served(Response.ResponseBuilder b, String name, boolean attachment) {
        return b.header("X-Content-Type-Options", StoredContent.NOSNIFF)
                .header("Content-Security-Policy", StoredContent.CSP)
                .header("Content-Disposition", StoredContent.disposition(attachment ? "attachment" : "inline", name));
    }

    @GET
    @Path("download-url")
    @RequiresScope(READ)
    @JsonShape(StorageJson.DownloadUrl.class)
    public Map<String, Object> downloadUrl(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @QueryParam("file_id") String fileId,
            @QueryParam("expires_in") String expiresIn) {
        SpaceRef space = space(sc, spaceId);
        if (fileId == null || fileId.isBlank()) {
            throw ApiException.badRequest("file_id is required");
        }
        long seconds = DEFAULT_URL_SECONDS;
        if (expiresIn != null && !expiresIn.isBlank()) {
            try {
                seconds = Long.parseLong(expiresIn.trim());
            } catch (NumberFormatException e) {
                throw ApiException.badRequest("expires_in must be a number of seconds");
            }
            if (seconds < 1 || seconds > storage.config().downloadUrlMaxSeconds()) {
                throw ApiException.badRequest(
                        "expires_in must be between 1 and " + storage.config().downloadUrlMaxSeconds() + " seconds");
            }
        }
        Entry file = file(space, fileId);
        long expires = Instant.now().getEpochSecond() + seconds;
        String url = urls.base(uri.getBaseUri()) + "/api/spaces/" + space.id() + "/storage/download/" + file.id()
                + "?expires=" + expires + "&signature=" + storage.signer().sign(space.id(), file.id(), expires);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("url", url);
        m.put("file_id", file.id());
        m.put("expires_at", Instant.ofEpochSecond(expires).toString());
        return m;
    }

    /** A folder (the root without folder_id and path) as a ZIP, written entry by entry straight to the response. */
    @GET
    @Path("download-zip")
    @Produces({"application/zip", MediaType.APPLICATION_JSON})
    @RequiresScope(READ)
    @NotJson("application/zip")
    public Response downloadZip(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("folder_id") String folderId,
            @QueryParam("path") String path) {
        SpaceRef space = space(sc, spaceId);
        Entry folder = storage.folder(space.id(), folderId, path == null ? null : Paths.normalise("path", path, true));
        String root = folder == null ? "" : folder.path();
        String spaceIdValue = space.id();
        StreamingOutput body = out -> writeZip(spaceIdValue, root, out);
        String name = (folder == null ? space.slug() : folder.name()) + ".zip";
        return served(Response.ok(body, "application/zip"), name, true).build();
    }

    private void writeZip(String spaceId, String root, OutputStream out) throws IOException {
        ZipOutputStream zip =
                new ZipOutputStream(new java.io.BufferedOutputStream(out, 64 * 1024), StandardCharsets.UTF_8);
        zip.setLevel(Deflater.BEST_SPEED);
        int cut = root.isEmpty() ? 0 : root.length() + 1;
        String after = "";
        int left = 0;
        while (true) {
            List<Entry> page = storage.subtreePage(spaceId, root, after, 500);
            if (page.isEmpty()) {
                break;
            }
            for (Entry e : page) {
                String name = e.path().substring(cut);
                if (!Paths.portable(name)) {
                    // stored before names were checked: an unpacker would read '.. /x' as '../x'; such rows are still
                    // read, renamed and deleted by id, never written into an archive
                    left++;
                    continue;
                }
                if (e.folder()) {
                    zip.putNextEntry(entry(name + "/", e));
                    zip.closeEntry();
                    continue;
                }
                InputStream in = openCurrent(spaceId, e);
                if (in == null) {
                    continue; // deleted while the archive was being written: left out
                }
                try (in) {
                    zip.putNextEntry(entry(name, e));
                    copy(in, zip);
                    zip.closeEntry();
                }
            }
            after = page.get(page.size() - 1).path();
        }
        zip.finish();
        zip.flush();
        if (left > 0) {
            LOG.warn(
                    "download-zip of workspace {} left out {} entries whose stored names are not portable; rename them",
                    spaceId,
                    left);
        }
    }

    /** The bytes of {@code e} as they are now: a content replaced since the page was read is read again; null once deleted. */
    private InputStream openCurrent(String spaceId, Entry e) throws IOException {
        Entry current = e;
        for (int attempt = 1; attempt <= MAX_OPEN_ATTEMPTS; attempt++) {
            try {
                return storage.open(current, 0, -1);
            } catch (NoSuchBlobException replacedOrDeleted) {
                try {
                    current = storage.get(spaceId, e.id());
                } catch (ApiException gone) {
                    return null;
                }
            }
        }
        return null;
    }

    private static ZipEntry entry(String name, Entry e) {
        ZipEntry z = new ZipEntry(name);
        z.setTime(e.updatedAt().toEpochMilli());
        return z;
    }

    // ---------------------------------------------------------------- direct uploads

    @POST
    @Path("upload-url")
    @RequiresScope(WRITE)
    @JsonShape(StorageJson.UploadUrl.class)
    public Response uploadUrl(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @PathParam("spaceId") String spaceId,
            @JsonShape(StorageJson.UploadRequest.class) JsonNode body) {
        SpaceRef space = space(sc, spaceId);
        NulText.reject(body);
        JsonBody json = JsonBody.of(body);
        JsonNode size = body.get("size");
        if (size == null || size.isNull()) {
            throw ApiException.badRequest("size is required");
        }
        if (!size.canConvertToExactIntegral() || !size.canConvertToLong()) {
            throw ApiException.badRequest("size must be a whole number of bytes");
        }
        String type =
                json.string("content_type").map(StorageResource::contentType).orElse(null);
        Entry pending = storage.announceUpload(space.id(), target(space, json), size.longValue(), type);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("file_id", pending.id());
        m.put(
                "upload_url",
                urls.base(uri.getBaseUri()) + "/api/spaces/" + space.id() + "/storage/upload/" + pending.id());
        m.put("method", "PUT");
        m.put("path", pending.path());
        m.put("size", pending.declaredSize());
        m.put(
                "expires_at",
                pending.createdAt()
                        .plusSeconds(storage.config().uploadTtlSeconds())
                        .toString());
        return Response.status(201).entity(m).build();
    }

    @PUT
    @Path("upload/{fileId}")
    @Consumes({MediaType.WILDCARD})
    @BodyLimit(ANY_SIZE)
    @RequiresScope(WRITE)
    @JsonShape(StorageJson.Upload.class)
    public Map<String, Object> upload(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @PathParam("fileId") String fileId,
            @HeaderParam(HttpHeaders.CONTENT_LENGTH) String length,
            InputStream body)
            throws IOException {
        SpaceRef space = space(sc, spaceId);
        Entry received = storage.receiveUpload(space.id(), fileId, new FullReads(body), length(length));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("file_id", received.id());
        m.put("size", received.size());
        m.put("sha256", received.sha256());
        return Map.of("upload", m);
    }

    @POST
    @Path("confirm-upload")
    @RequiresScope(WRITE)
    @JsonShape(StorageJson.OneFile.class)
    public Map<String, Object> confirmUpload(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(StorageJson.ConfirmUpload.class) JsonNode body) {
        SpaceRef space = space(sc, spaceId);
        NulText.reject(body);
        JsonBody json = JsonBody.of(body);
        String id = json.requiredString("file_id");
        JsonNode size = body.get("size");
        if (size == null || size.isNull()) {
            throw ApiException.badRequest("size is required");
        }
        if (!size.canConvertToExactIntegral() || !size.canConvertToLong() || size.longValue() < 0) {
            throw ApiException.badRequest("size must be a whole number of bytes");
        }
        String sha = json.string("sha256").orElse(null);
        if (sha != null && !sha.matches("[0-9a-fA-F]{64}")) {
            throw ApiException.badRequest("sha256 must be 64 hexadecimal digits");
        }
        return Map.of(
                "file",
                storage.confirmUpload(space.id(), id, size.longValue(), sha).toJson());
    }

    // ---------------------------------------------------------------- bulk operations

    @POST
    @Path("bulk-delete")
    @RequiresScope(WRITE)
    @JsonShape(StorageJson.Deleted.class)
    public Map<String, Object> bulkDelete(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(StorageJson.BulkDelete.class) JsonNode body) {
        SpaceRef space = space(sc, spaceId);
        NulText.reject(body);
        JsonBody.of(body);
        int deleted = storage.delete(space.id(), ids(body));
        return Map.of("success", true, "deleted", deleted);
    }

    @POST
    @Path("bulk-move")
    @RequiresScope(WRITE)
    @JsonShape(StorageJson.Files.class)
    public Map<String, Object> bulkMove(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(StorageJson.BulkMove.class) JsonNode body) {
        SpaceRef space = space(sc, spaceId);
        NulText.reject(body);
        JsonBody json = JsonBody.of(body);
        List<String> ids = ids(body);
        String destination;
        if (json.has("path")) {
            if (body.has("parent_id")) {
                throw ApiException.badRequest("give either parent_id or path of the destination folder");
            }
            destination = Paths.normalise("path", json.requiredString("path"), true);
        } else if (body.has("parent_id")) {
            destination =
                    json.string("parent_id").map(id -> folderPath(space, id)).orElse("");
        } else {
            throw ApiException.badRequest("parent_id or path of the destination folder is required");
        }
        return Map.of(
                "files",
                storage.moveAll(space.id(), ids, destination).stream()
                        .map(Entry::toJson)
                        .toList());
    }

    @POST
    @Path("bulk-rename")
    @RequiresScope(WRITE)
    @JsonShape(StorageJson.Files.class)
    public Map<String, Object> bulkRename(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @JsonShape(StorageJson.BulkRename.class) JsonNode body) {
        SpaceRef space = space(sc, spaceId);
        NulText.reject(body);
        JsonBody.of(body);
        JsonNode items = body.get("items");
        if (items == null || !items.isArray() || items.isEmpty()) {
            throw ApiException.badRequest("items must be a non-empty array of {id, name}");
        }
        if (items.size() > MAX_BULK) {
            throw ApiException.badRequest("at most " + MAX_BULK + " items at a time");
        }
        List<Map.Entry<String, String>> renames = new ArrayList<>();
        for (JsonNode item : items) {
            if (!item.isObject()
                    || !item.path("id").isTextual()
                    || !item.path("name").isTextual()) {
                throw ApiException.badRequest("each item must be an object {id, name} of strings");
            }
            renames.add(Map.entry(
                    item.get("id").textValue(),
                    Paths.name("name", item.get("name").textValue())));
        }
        return Map.of(
                "files",
                storage.renameAll(space.id(), renames).stream()
                        .map(Entry::toJson)
                        .toList());
    }

    private static List<String> ids(JsonNode body) {
        JsonNode ids = body.get("ids");
        if (ids == null || !ids.isArray() || ids.isEmpty()) {
            throw ApiException.badRequest("ids must be a non-empty array of file ids");
        }
        if (ids.size() > MAX_BULK) {
            throw ApiException.badRequest("at most " + MAX_BULK + " ids at a time");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode id : ids) {
            if (!id.isTextual() || id.textValue().isBlank()) {
                throw ApiException.badRequest("ids must hold file ids (strings)");
            }
            out.add(id.textValue());
        }
        return out;
    }
}
