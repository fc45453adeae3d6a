package dev.atrium.blob.api;

import java.time.Instant;

/**
 * A stored blob.
 *
 * @param key     its name in the store: {@code <namespace>/<sha256>}
 * @param size    its length in bytes
 * @param sha256  the SHA-256 of its bytes, 64 lower-case hex digits
 * @param created when the store first kept these bytes under this key (a collector spares younger blobs whose
 *                reference may not be recorded yet)
 */
public record Blob(String key, long size, String sha256, Instant created) {}
