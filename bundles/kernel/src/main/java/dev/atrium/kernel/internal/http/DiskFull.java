package dev.atrium.kernel.internal.http;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystemException;
import javax.servlet.ServletException;

/**
 * The one rule that tells a full disk from other failures: an {@link IOException} anywhere in the cause chain whose
 * reason is ENOSPC or EDQUOT, as the JDK words them on Linux. Both error paths of the kernel (the JAX-RS mapper and
 * the servlet envelope) answer it 507 {@code INSUFFICIENT_STORAGE} instead of 500: the client's request was fine,
 * the server has no room for it, and a retry later may succeed.
 */
final class DiskFull {

    static final int STATUS = 507;
    static final String CODE = "INSUFFICIENT_STORAGE";
    static final String MESSAGE = "the server has no room left to store this; nothing was stored";

    private static final String[] REASONS = {"No space left on device", "Disk quota exceeded"};

    private DiskFull() {}

    /** The exception that says the disk is full, or null. */
    static IOException find(Throwable failure) {
        Throwable t = failure;
        for (int depth = 0; t != null && depth < 12; depth++) {
            if (t instanceof IOException io && full(io)) {
                return io;
            }
            if (t instanceof UncheckedIOException u && full(u.getCause())) {
                return u.getCause();
            }
            t = t.getCause() == null && t instanceof ServletException se ? se.getRootCause() : t.getCause();
        }
        return null;
    }

    private static boolean full(IOException e) {
        String text = e instanceof FileSystemException fs && fs.getReason() != null ? fs.getReason() : e.getMessage();
        if (text == null) {
            return false;
        }
        for (String reason : REASONS) {
            if (text.contains(reason)) {
                return true;
            }
        }
        return false;
    }
}
