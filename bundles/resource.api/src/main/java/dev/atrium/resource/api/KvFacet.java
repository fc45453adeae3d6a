package dev.atrium.resource.api;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Key-value storage ({@code kv}). Keys are 1–512 UTF-8 characters (the core refuses others before calling); values
 * are bytes. An entry past its expiry is never returned, listed or counted, whenever the backend actually removes it.
 */
@ConsumerType
public interface KvFacet {

    /**
     * Keys in ascending order (by their UTF-8 bytes) starting with {@code prefix}, after {@code cursor}.
     *
     * @param prefix "" for all
     * @param cursor null for the first page, else a {@link KvPage#cursor()} this provider returned
     * @param limit  1–1000
     */
    KvPage list(ResourceContext ctx, String prefix, String cursor, int limit) throws ResourceException;

    Optional<KvEntry> get(ResourceContext ctx, String key) throws ResourceException;

    /**
     * Sets {@code key} to {@code value}, replacing any entry.
     *
     * @param ttl how long it lives, or null for ever (the core passes at least 1 second)
     */
    void put(ResourceContext ctx, String key, byte[] value, Duration ttl) throws ResourceException;

    /** Returns whether there was a live entry. */
    boolean delete(ResourceContext ctx, String key) throws ResourceException;

    /** An entry; {@code expiresAt} null when it does not expire. */
    record KvEntry(String key, byte[] value, Instant expiresAt) {}

    /** A key in a listing; {@code expiresAt} null when it does not expire. */
    record KvKey(String name, Instant expiresAt) {}

    /** A page of keys; {@code cursor} null when there are no more. */
    record KvPage(List<KvKey> keys, String cursor) {}
}
