package dev.atrium.blob.api;

import java.io.IOException;

/** A put offered more bytes than its limit; nothing was kept. */
public class BlobTooLargeException extends IOException {
    private static final long serialVersionUID = 1L;
    private final long limit;

    public BlobTooLargeException(long limit) {
        super("more than " + limit + " bytes");
        this.limit = limit;
    }

    /** The limit that was exceeded, in bytes. */
    public long limit() {
        return limit;
    }
}
