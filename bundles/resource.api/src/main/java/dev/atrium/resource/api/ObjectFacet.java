package dev.atrium.resource.api;

import java.io.InputStream;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Object storage ({@code r2}): named byte streams in a flat key space. Keys are 1–1024 UTF-8 characters (the core
 * refuses others before calling).
 */
@ConsumerType
public interface ObjectFacet {

    /**
     * Objects in ascending key order starting with {@code prefix}, after {@code cursor}.
     *
     * @param cursor null for the first page, else an {@link ObjectPage#cursor()} this provider returned
     * @param limit  1–1000
     */
    ObjectPage list(ResourceContext ctx, String prefix, String cursor, int limit) throws ResourceException;

    /** How many objects and bytes the resource holds. */
    ObjectStats stats(ResourceContext ctx) throws ResourceException;

    /** The object's metadata, or empty when there is none. */
    Optional<ObjectInfo> head(ResourceContext ctx, String key) throws ResourceException;

    /**
     * Opens bytes of an object; the caller closes the stream.
     *
     * @param offset the first byte (0 or more, at most the size)
     * @param length how many, or -1 for all to the end
     * @throws ResourceException {@link ResourceException.Kind#NOT_FOUND} when there is no such object
     */
    InputStream get(ResourceContext ctx, String key, long offset, long length) throws ResourceException;

    /**
     * Stores {@code content} (read to its end) under {@code key}, replacing any object; atomic: readers see the old
     * object or the whole new one.
     *
     * @param contentType the media type to serve it with, or null
     * @param maxBytes    the most bytes to accept; more is {@link ResourceException.Kind#TOO_LARGE} and nothing changes
     */
    ObjectInfo put(ResourceContext ctx, String key, InputStream content, String contentType, long maxBytes)
            throws ResourceException;

    /** Returns whether there was an object. */
    boolean delete(ResourceContext ctx, String key) throws ResourceException;

    /** An object's metadata; {@code etag} is a strong validator of its bytes (a SHA-256 in hex, say). */
    record ObjectInfo(String key, long size, String etag, String contentType, Instant uploaded) {}

    /** A page of objects; {@code cursor} null when there are no more. */
    record ObjectPage(List<ObjectInfo> objects, String cursor) {}

    /** Totals of a resource. */
    record ObjectStats(long objectCount, long totalBytes) {}
}
