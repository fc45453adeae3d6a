package dev.atrium.containers.podman.internal;

import java.nio.file.Path;

/** The runner the tests use: podman on the PATH, the images {@code ./atrium images} builds. */
final class Podman {

    private Podman() {}

    static Path images() {
        String configured = System.getenv("ATRIUM_RUNNER_IMAGES");
        return configured != null && !configured.isBlank()
                ? Path.of(configured)
                : Path.of(System.getProperty("user.home"), ".cache", "atrium", "images");
    }

    /** A runner whose data directory is {@code data} (its podman storage: {@code data/runner-podman}). */
    static PodmanRunner runner(Path data) {
        return new PodmanRunner(new PodmanRunner.Settings(
                "podman",
                data.toAbsolutePath().resolve("runner-podman"),
                images(),
                "busybox", // the aliases' image: debian.tar, when ./atrium images built it, takes seconds to import
                1L << 30,
                1.0,
                512,
                "1000:1000",
                "none"));
    }
}
