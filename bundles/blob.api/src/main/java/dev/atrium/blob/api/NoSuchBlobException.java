package dev.atrium.blob.api;

import java.io.IOException;

/** No blob is kept under the key asked for. */
public class NoSuchBlobException extends IOException {
    private static final long serialVersionUID = 1L;

    public NoSuchBlobException(String key) {
        super("no blob " + key);
    }
}
