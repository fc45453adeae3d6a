package dev.atrium.database.internal;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Comparator;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * A pristine PostgreSQL cluster, as initdb leaves it, kept to be copied into a new data directory instead of
 * running initdb again: initdb costs 1.3 to 2.5 s of a first start, a copy of its ~40 MB some 100 ms.
 * <p>
 * The first fresh start on a machine keeps its cluster here right after initdb, before the server ever runs in it
 * (so it holds no Atrium data); it is written beside and renamed into place, so concurrent starts never see half a
 * template and the first rename wins. A cluster copied from it differs from one made by initdb only in its system
 * identifier, which is shared (it matters to replication, not to an embedded server). Keyed by the PostgreSQL
 * binaries it was made with; a template the server cannot start from is removed and initdb runs as before.
 */
final class ClusterTemplate {

    /** What is not copied: the embedded library's lock, and anything a running server left. */
    private static final Set<String> SKIPPED = Set.of("epg-lock", "postmaster.pid", "postmaster.opts");

    private final Path dir;

    ClusterTemplate(Path dir) {
        this.dir = dir;
    }

    Path dir() {
        return dir;
    }

    boolean exists() {
        return Files.isRegularFile(dir.resolve("postgresql.conf")) && Files.isRegularFile(dir.resolve("PG_VERSION"));
    }

    /** Copies the template into an empty {@code pgData}; false (and {@code pgData} emptied again) when it cannot. */
    boolean copyTo(Path pgData) {
        if (!exists()) {
            return false;
        }
        try {
            copyTree(dir, pgData);
            return true;
        } catch (IOException e) {
            emptyQuietly(pgData);
            return false;
        }
    }

    /** Keeps a cluster initdb has just made (and no server has run in) as the template, unless there is one. */
    void keep(Path freshCluster) throws IOException {
        if (exists()) {
            return;
        }
        Files.createDirectories(dir.getParent());
        Path partial = dir.resolveSibling(dir.getFileName() + ".partial-" + UUID.randomUUID());
        try {
            copyTree(freshCluster, partial);
            try {
                Files.move(partial, dir, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileAlreadyExistsException | java.nio.file.DirectoryNotEmptyException another) {
                // a concurrent first start kept its own: as good as this one
            }
        } finally {
            deleteQuietly(partial);
        }
    }

    /** Removes a template the server could not start from, so the next fresh start makes a new one. */
    void discard() {
        Path doomed = dir.resolveSibling(dir.getFileName() + ".discarded-" + UUID.randomUUID());
        try {
            Files.move(dir, doomed, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException gone) {
            return;
        }
        deleteQuietly(doomed);
    }

    private static void copyTree(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                Path target = to.resolve(from.relativize(d).toString());
                if (!Files.isDirectory(target)) {
                    Files.copy(d, target, StandardCopyOption.COPY_ATTRIBUTES);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                if (!SKIPPED.contains(f.getFileName().toString())) {
                    Files.copy(f, to.resolve(from.relativize(f).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                // PostgreSQL refuses a data directory others can read: the copy keeps initdb's 0700 (and times)
                Files.setPosixFilePermissions(
                        to.resolve(from.relativize(d).toString()), Files.getPosixFilePermissions(d));
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** Deletes everything inside {@code d}, keeping {@code d}. */
    static void emptyQuietly(Path d) {
        try (Stream<Path> inside = Files.list(d)) {
            inside.forEach(ClusterTemplate::deleteQuietly);
        } catch (IOException ignored) {
            // nothing there
        }
    }

    private static void deleteQuietly(Path p) {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> all = Files.walk(p)) {
            all.sorted(Comparator.reverseOrder()).forEach(x -> {
                try {
                    Files.deleteIfExists(x);
                } catch (IOException ignored) {
                    // best effort: a leftover partial copy is harmless, its name never matches a template
                }
            });
        } catch (IOException ignored) {
            // gone meanwhile
        }
    }
}
