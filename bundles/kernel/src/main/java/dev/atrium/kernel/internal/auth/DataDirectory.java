package dev.atrium.kernel.internal.auth;

import java.nio.file.Path;

import org.osgi.framework.BundleContext;

/** {@code <data>}: the framework property {@code atrium.data}, else {@code ATRIUM_DATA}, else {@code ./data}. */
public final class DataDirectory {

    private DataDirectory() {
    }

    public static Path of(BundleContext context) {
        String data = context.getProperty("atrium.data");
        if (data == null || data.isBlank()) {
            data = System.getenv("ATRIUM_DATA");
        }
        return Path.of(data == null || data.isBlank() ? "data" : data).toAbsolutePath();
    }
}
