package dev.atrium.services.bindings.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.resource.api.ObjectFacet;
import dev.atrium.resource.api.ObjectFacet.ObjectInfo;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceDirectory;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.services.api.ServiceRoutes;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * The {@code r2} part of the internal binding endpoint: what workerd's native {@code R2Bucket} binding sends (see
 * docs/decisions.md, "What workerd's native bindings send"), answered from the resource's {@link ObjectFacet}.
 * {@code head}, {@code get} (whole or a range) and {@code list} come as {@code GET /} with the call in the
 * {@code CF-R2-Request} header and are answered with {@code CF-R2-Metadata-Size} and that many bytes of metadata JSON,
 * then (get) the object's bytes; {@code put} and {@code delete} come as {@code PUT /} with {@code CF-R2-Metadata-Size}
 * bytes of call JSON, then (put) the value. Errors carry {@code CF-R2-Error}, which the runtime turns into the
 * exception the code sees (a missing object into {@code null}).
 *
 * <p>Not kept: custom metadata (accepted, as the facet has none) and HTTP metadata other than the content type. Refused
 * with a message naming them, rather than ignored: conditional calls ({@code onlyIf}), checksums, list's
 * {@code delimiter} and {@code startAfter}, and multipart uploads.
 */
final class R2Bindings {

    /** R2's own limit for a single upload. */
    static final long MAX_OBJECT = 5L << 30;

    static final int MAX_CALL = 1 << 20;
    static final int MAX_KEY = 1024;
    /** The code the runtime turns into {@code null} for head and get. */
    static final int NO_SUCH_KEY = 10007;
    /**
     * Every other failure: the runtime only shows the code, in the exception the code sees
     * ({@code <action>: <message> (<code>)}), so the message says what was wrong and one code serves.
     */
    static final int FAILED = 10001;

    private final ResourceDirectory directory;

    R2Bindings(ResourceDirectory directory) {
        this.directory = directory;
    }

    void handle(ServiceRoutes.Target target, String name, HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        Optional<ResourceDirectory.Opened<ObjectFacet>> opened =
                directory.open(target.serviceId(), target.spaceId(), name, ObjectFacet.class);
        if (opened.isEmpty()) {
            error(response, 503, FAILED, "the r2 provider of this binding is not running");
            return;
        }
        ObjectFacet r2 = opened.get().facet();
        ResourceContext ctx = opened.get().context();
        try {
            if (request.getMethod().equals("GET")) {
                JsonNode call = call(request.getHeader("CF-R2-Request"));
                if (call == null) {
                    error(response, 400, FAILED, "the CF-R2-Request header is missing or not JSON");
                    return;
                }
                read(r2, ctx, call, response);
            } else if (request.getMethod().equals("PUT")) {
                long size = size(request.getHeader("CF-R2-Metadata-Size"));
                if (size < 0 || size > MAX_CALL) {
                    error(response, 400, FAILED, "CF-R2-Metadata-Size must be 0 to " + MAX_CALL);
                    return;
                }
                InputStream body = request.getInputStream();
                byte[] json = body.readNBytes((int) size);
                JsonNode call = json.length == size ? call(new String(json, StandardCharsets.UTF_8)) : null;
                if (call == null) {
                    error(response, 400, FAILED, "the call is not JSON of the size CF-R2-Metadata-Size gave");
                    return;
                }
                write(r2, ctx, call, body, response);
            } else {
                error(response, 405, FAILED, "r2 calls are GET or PUT");
            }
        } catch (ResourceException e) {
            switch (e.kind()) {
                case NOT_FOUND -> error(response, 404, NO_SUCH_KEY, "The specified key does not exist.");
                case TOO_LARGE -> error(response, 413, FAILED, e.getMessage());
                case BAD_INPUT, CONFLICT, FORBIDDEN -> error(response, 400, FAILED, e.getMessage());
                case UNAVAILABLE -> error(response, 503, FAILED, e.getMessage());
            }
        }
    }

    private void read(ObjectFacet r2, ResourceContext ctx, JsonNode call, HttpServletResponse response)
            throws IOException, ResourceException {
        String method = call.path("method").asText();
        if (method.equals("list")) {
            list(r2, ctx, call, response);
            return;
        }
        if (!method.equals("head") && !method.equals("get")) {
            error(response, 501, FAILED, "r2 " + method + " is not supported here");
            return;
        }
        String key = callKey(call, response);
        if (key == null) {
            return;
        }
        Optional<ObjectInfo> info = r2.head(ctx, key);
        if (info.isEmpty()) {
            error(response, 404, NO_SUCH_KEY, "The specified key does not exist.");
            return;
        }
        Map<String, Object> meta = metadata(info.get());
        if (method.equals("head")) {
            metadataOnly(response, meta);
            return;
        }
        long size = info.get().size();
        long offset = 0;
        long length = size;
        JsonNode range = call.path("range");
        if (range.isObject() && !range.isEmpty()) {
            if (range.has("suffix")) {
                length = Math.min(size, Math.max(0, range.path("suffix").asLong()));
                offset = size - length;
            } else {
                offset = Math.max(0, range.path("offset").asLong(0));
                length = range.has("length") ? Math.max(0, range.path("length").asLong()) : size - offset;
            }
            if (offset > size) {
                error(response, 416, FAILED, "the range starts after the object's end");
                return;
            }
            length = Math.min(length, size - offset);
            meta.put("range", Map.of("offset", offset, "length", length));
        } else if (!call.path("rangeHeader").asText("").isEmpty()) {
            error(
                    response,
                    501,
                    FAILED,
                    "a range given as an HTTP Range header is not supported here; give offset and length");
            return;
        }
        byte[] json = InternalBindings.JSON.writeValueAsBytes(meta);
        try (InputStream bytes = r2.get(ctx, key, offset, length)) {
            response.setStatus(200);
            response.setHeader("CF-R2-Metadata-Size", Integer.toString(json.length));
            response.setContentType("application/octet-stream");
            response.setContentLengthLong(json.length + length);
            response.getOutputStream().write(json);
            bytes.transferTo(response.getOutputStream());
        }
    }

    private void list(ObjectFacet r2, ResourceContext ctx, JsonNode call, HttpServletResponse response)
            throws IOException, ResourceException {
        for (String field : new String[] {"delimiter", "startAfter"}) {
            if (!call.path(field).asText("").isEmpty()) {
                error(response, 501, FAILED, "r2 list with " + field + " is not supported here");
                return;
            }
        }
        int limit = call.has("limit") ? call.path("limit").asInt(1000) : 1000;
        if (limit < 1 || limit > 1000) {
            error(response, 400, FAILED, "limit must be 1 to 1000");
            return;
        }
        String cursor = call.path("cursor").asText("");
        ObjectFacet.ObjectPage page =
                r2.list(ctx, call.path("prefix").asText(""), cursor.isEmpty() ? null : cursor, limit);
        List<Map<String, Object>> objects = new ArrayList<>();
        for (ObjectInfo o : page.objects()) {
            objects.add(metadata(o));
        }
        Map<String, Object> meta = new LinkedHashMap<>();
        meta.put("objects", objects);
        meta.put("truncated", page.cursor() != null);
        if (page.cursor() != null) {
            meta.put("cursor", page.cursor());
        }
        meta.put("delimitedPrefixes", List.of());
        metadataOnly(response, meta);
    }

    private void write(
            ObjectFacet r2, ResourceContext ctx, JsonNode call, InputStream value, HttpServletResponse response)
            throws IOException, ResourceException {
        String method = call.path("method").asText();
        switch (method) {
            case "put" -> {
                String key = callKey(call, response);
                if (key == null) {
                    return;
                }
                String contentType = call.path("httpFields").path("contentType").asText(null);
                ObjectInfo stored = r2.put(ctx, key, value, contentType, MAX_OBJECT);
                InternalBindings.json(response, 200, metadata(stored));
            }
            case "delete" -> {
                List<String> keys = new ArrayList<>();
                if (call.path("objects").isArray()) {
                    call.path("objects").forEach(o -> keys.add(key(o)));
                } else {
                    keys.add(key(call.path("object")));
                }
                if (keys.contains(null) || keys.size() > 1000) {
                    error(
                            response,
                            400,
                            FAILED,
                            "delete takes 1 to 1000 object names of 1 to " + MAX_KEY + " characters");
                    return;
                }
                for (String key : keys) {
                    r2.delete(ctx, key);
                }
                InternalBindings.json(response, 200, Map.of());
            }
            default -> error(response, 501, FAILED, "r2 " + method + " is not supported here");
        }
    }

    /** The object a head, get or put names, or null once the call is refused (a bad name, or what is not kept here). */
    private static String callKey(JsonNode call, HttpServletResponse response) throws IOException {
        String refused = unsupported(call);
        if (refused != null) {
            error(response, 501, FAILED, refused);
            return null;
        }
        String key = key(call.path("object"));
        if (key == null) {
            error(response, 400, FAILED, "an object name is 1 to " + MAX_KEY + " characters");
        }
        return key;
    }

    /** What a call asks that is not kept here, or null. */
    private static String unsupported(JsonNode call) {
        if (call.path("onlyIf").isObject() && !call.path("onlyIf").isEmpty()) {
            return "conditional r2 calls (onlyIf) are not supported here";
        }
        for (String checksum : new String[] {"md5", "sha1", "sha256", "sha384", "sha512"}) {
            if (call.hasNonNull(checksum)) {
                return "r2 checksums (" + checksum + ") are not supported here";
            }
        }
        return null;
    }

    static Map<String, Object> metadata(ObjectInfo o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", o.key());
        m.put("version", o.etag());
        m.put("size", o.size());
        m.put("etag", o.etag());
        m.put("uploaded", o.uploaded().toEpochMilli());
        Map<String, Object> http = new LinkedHashMap<>();
        if (o.contentType() != null) {
            http.put("contentType", o.contentType());
        }
        m.put("httpFields", http);
        m.put("customFields", List.of());
        m.put("storageClass", "Standard");
        return m;
    }

    private static String key(JsonNode name) {
        String key = name == null || !name.isTextual() ? null : name.asText();
        return key == null || key.isEmpty() || key.length() > MAX_KEY || key.indexOf('\0') >= 0 ? null : key;
    }

    private static JsonNode call(String json) {
        if (json == null || json.isBlank()) {
            return null;
        }
        try {
            JsonNode node = InternalBindings.JSON.readTree(json);
            return node != null && node.isObject() ? node : null;
        } catch (IOException e) {
            return null;
        }
    }

    private static long size(String header) {
        try {
            return header == null ? -1 : Long.parseLong(header.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static void metadataOnly(HttpServletResponse response, Map<String, Object> meta) throws IOException {
        byte[] json = InternalBindings.JSON.writeValueAsBytes(meta);
        response.setStatus(200);
        response.setHeader("CF-R2-Metadata-Size", Integer.toString(json.length));
        response.setContentType("application/octet-stream");
        response.setContentLength(json.length);
        response.getOutputStream().write(json);
    }

    private static void error(HttpServletResponse response, int status, int code, String message) throws IOException {
        String m = message == null ? "the r2 call failed" : message;
        response.setStatus(status);
        response.setHeader(
                "CF-R2-Error",
                InternalBindings.JSON.writeValueAsString(Map.of("version", 0, "v4code", code, "message", m)));
        InternalBindings.error(
                response,
                status,
                status == 404
                        ? "NOT_FOUND"
                        : status == 501 ? "NOT_IMPLEMENTED" : status >= 500 ? "SERVICE_UNAVAILABLE" : "BAD_REQUEST",
                m);
    }
}
