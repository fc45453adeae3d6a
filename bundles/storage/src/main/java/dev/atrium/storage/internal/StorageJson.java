package dev.atrium.storage.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the storage routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class StorageJson {

    private StorageJson() {}

    /**
     * A file or a folder ({@link Entry#toJson()}): {@code kind} is {@code file} or {@code folder}; {@code parent_id}
     * is null at the root; a folder has no {@code sha256} or {@code etag}.
     */
    record View(
            String id,
            @JsonProperty("space_id") String spaceId,
            @JsonProperty("parent_id") String parentId,
            String name,
            String path,
            String kind,
            long size,
            @JsonProperty("content_type") String contentType,
            String sha256,
            String etag,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record OneFile(View file) {}

    record OneFolder(View folder) {}

    record Files(List<View> files) {}

    /**
     * A page of a folder's entries: {@code folder} is the folder listed (null and {@code path} empty for the root);
     * {@code sort} is {@code name}, {@code size}, {@code created_at} or {@code updated_at}, {@code order}
     * {@code asc} or {@code desc}.
     */
    record Page(
            List<View> files, long total, int limit, int offset, View folder, String path, String sort, String order) {}

    /**
     * What opens files of these media types or extensions: {@code kind} {@code builtin} or {@code app} (then
     * {@code app_id} names it, and {@code url} is where an app's handler opens a file; null for built-in ones).
     */
    record Handler(
            String id,
            String name,
            String kind,
            @JsonProperty("app_id") String appId,
            @JsonProperty("mime_types") List<String> mimeTypes,
            List<String> extensions,
            String url) {}

    record Handlers(List<Handler> handlers) {}

    /** Where a new entry goes: either {@code path}, or {@code name} in the folder {@code parent_id} (the root by default). */
    record NewFolder(
            String path,
            String name,
            @JsonProperty("parent_id") String parentId) {}

    /** A small text file written in one call: {@code content} (empty unless given) at {@code path} or {@code name}. */
    record NewFile(
            String path,
            String name,
            @JsonProperty("parent_id") String parentId,
            String content,
            @JsonProperty("content_type") String contentType) {}

    /**
     * A rename or a move: either {@code path}, or {@code name} and/or {@code parent_id} ({@code null} moves it to the
     * root).
     */
    record Move(
            String path,
            String name,
            @JsonProperty("parent_id") String parentId) {}

    /** {@code deleted} counts the entries removed, what the folders held included. */
    record Deleted(boolean success, int deleted) {}

    /** A signed download link, valid without a token until {@code expires_at}. */
    record DownloadUrl(
            String url,
            @JsonProperty("file_id") String fileId,
            @JsonProperty("expires_at") Instant expiresAt) {}

    /** An upload to announce: its place ({@code path}, or {@code name} in {@code parent_id}) and its size in bytes. */
    record UploadRequest(
            String path,
            String name,
            @JsonProperty("parent_id") String parentId,
            long size,
            @JsonProperty("content_type") String contentType) {}

    /** Where to {@code PUT} the bytes of an announced upload, until {@code expires_at}. */
    record UploadUrl(
            @JsonProperty("file_id") String fileId,
            @JsonProperty("upload_url") String uploadUrl,
            String method,
            String path,
            Long size,
            @JsonProperty("expires_at") Instant expiresAt) {}

    record Received(@JsonProperty("file_id") String fileId, long size, String sha256) {}

    /** The bytes an upload received, not yet a file until it is confirmed. */
    record Upload(Received upload) {}

    /** The upload to make a file: {@code size} (and {@code sha256}, when given) must match what was received. */
    record ConfirmUpload(@JsonProperty("file_id") String fileId, long size, String sha256) {}

    /** The ids of the files and folders to delete (at most 1000; a folder goes with what it holds). */
    record BulkDelete(List<String> ids) {}

    /** Entries to move into one folder: {@code parent_id} ({@code null}: the root) or its {@code path}. */
    record BulkMove(
            List<String> ids, @JsonProperty("parent_id") String parentId, String path) {}

    record Rename(String id, String name) {}

    record BulkRename(List<Rename> items) {}
}
