package dev.atrium.blob.api;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.util.Optional;
import java.util.stream.Stream;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Keeps blobs. Keys are {@code <namespace>/<sha256 of the bytes>}: putting the same bytes twice in one namespace
 * gives the same key and keeps them once. A namespace belongs to one capability (for example {@code storage} or
 * {@code r2.<resource id>}), which alone decides when a blob it no longer references is deleted: the store never
 * counts references.
 *
 * <p>A put is atomic: until it returns, no reader, listing or restart sees the blob; after it returns, the bytes are
 * durable. A put that fails or is interrupted (even by a crash) leaves nothing that {@link #list} shows; the store
 * removes what it left behind itself.
 *
 * <p>Implementations are registered with the service property {@code atrium.blob.store} naming the backend
 * ({@code fs}, {@code s3}); a consumer normally takes whichever one is there.
 */
@ProviderType
public interface BlobStore {

    /** The service property naming the backend. */
    String BACKEND = "atrium.blob.store";

    /**
     * Reads {@code content} to its end and keeps the bytes.
     *
     * @param namespace a capability's namespace: letters, digits, {@code . _ -}, 1 to 128 characters, starting with a letter
     *                  or digit (so never {@code .}, {@code ..} or a hidden name)
     * @param content   the bytes; the caller closes it
     * @param maxBytes  the most bytes to accept
     * @return the blob, with its key, size and SHA-256
     * @throws BlobTooLargeException when {@code content} holds more than {@code maxBytes}; nothing is kept
     * @throws IllegalArgumentException when the namespace is malformed
     * @throws IOException when reading {@code content} or writing the store fails; nothing is kept
     */
    Blob put(String namespace, InputStream content, long maxBytes) throws IOException;

    /**
     * The blob under {@code key}, or null when there is none (or the key is malformed).
     */
    Blob stat(String key) throws IOException;

    /** Whether a blob is kept under {@code key}. */
    default boolean exists(String key) throws IOException {
        return stat(key) != null;
    }

    /**
     * Opens the blob's bytes from {@code offset}, at most {@code length} of them.
     *
     * @param offset the first byte, 0 or more and at most the blob's size
     * @param length how many bytes, or -1 for all to the end
     * @throws NoSuchBlobException when there is no blob under {@code key}
     * @throws IllegalArgumentException when the range does not lie within the blob
     */
    InputStream open(String key, long offset, long length) throws IOException;

    /** Opens the whole blob. */
    default InputStream open(String key) throws IOException {
        return open(key, 0, -1);
    }

    /**
     * The blob's bytes as a local file, for a store that keeps each blob in one: an open, read-only channel whose
     * content is exactly the blob's bytes, so that a reader can map it or hand it to the kernel
     * ({@link FileChannel#map}, {@link FileChannel#transferTo}) instead of copying it through {@link #open}'s stream.
     * The file never changes (a blob is never rewritten in place), and a delete of the blob meanwhile leaves the open
     * channel readable to its end. The caller closes it.
     *
     * @return the open channel; empty when this store keeps no local files (the default), whether or not the blob
     *         exists: read it with {@link #open} then
     * @throws NoSuchBlobException when the store keeps local files and there is no blob under {@code key} (or the key
     *                             is malformed)
     * @since 1.1
     */
    default Optional<FileChannel> openFile(String key) throws IOException {
        return Optional.empty();
    }

    /**
     * Deletes the blob under {@code key}.
     *
     * @return whether there was one
     */
    boolean delete(String key) throws IOException;

    /**
     * The blobs whose keys start with {@code prefix} (for example {@code storage/}), in key order. The stream holds
     * resources of the store: close it.
     */
    Stream<Blob> list(String prefix) throws IOException;
}
