package dev.atrium.containers.podman.internal;

import java.io.IOException;

/** The podman service answered an API call with an error status; the message is the one it gave. */
final class ApiException extends IOException {

    private static final long serialVersionUID = 1L;

    private final int status;

    ApiException(int status, String message) {
        super(message);
        this.status = status;
    }

    int status() {
        return status;
    }
}
