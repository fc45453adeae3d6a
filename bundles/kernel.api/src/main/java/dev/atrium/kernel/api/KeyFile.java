package dev.atrium.kernel.api;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * A 256-bit key kept in a file of the data directory, in base64: made owner-only (0600 in a 0700 directory), written
 * to a temporary file, forced to disk and only then linked into place, so a key is never half written, never lost in
 * a crash after values were sealed with it, and never replaces one another process made meanwhile.
 */
public final class KeyFile {

    private static final SecureRandom RANDOM = new SecureRandom();

    private KeyFile() {}

    /** The key in {@code file}, made first when there is none (a key another process made meanwhile wins). */
    public static byte[] readOrMake(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            try {
                return make(file);
            } catch (FileAlreadyExistsException madeMeanwhile) {
                // that one is the key
            }
        }
        return read(file);
    }

    /**
     * @throws java.nio.file.NoSuchFileException when there is no such file
     * @throws IOException when it holds no base64 256-bit key
     */
    public static byte[] read(Path file) throws IOException {
        byte[] raw;
        try {
            raw = Base64.getDecoder()
                    .decode(Files.readString(file, StandardCharsets.US_ASCII).trim());
        } catch (IllegalArgumentException e) {
            throw new IOException("the key file " + file + " is not base64", e);
        }
        if (raw.length != 32) {
            throw new IOException("the key file " + file + " does not hold a 256-bit key");
        }
        return raw;
    }

    /** A new key in {@code file}. @throws FileAlreadyExistsException when the file is there already */
    public static byte[] make(Path file) throws IOException {
        Path directory = file.toAbsolutePath().getParent();
        Files.createDirectories(directory);
        try {
            Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx------"));
        } catch (UnsupportedOperationException e) {
            // not POSIX: the data directory's own protection applies
        }
        byte[] raw = new byte[32];
        RANDOM.nextBytes(raw);
        Path temp = Files.createTempFile(
                directory,
                ".new-",
                ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.writeString(temp, Base64.getEncoder().encodeToString(raw) + "\n", StandardCharsets.US_ASCII);
            try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                channel.force(true);
            }
            Files.createLink(file, temp);
            try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
                dir.force(true); // the link itself survives a crash
            } catch (IOException e) {
                // a file system that cannot sync a directory: the file's own sync is what there is
            }
        } finally {
            Files.deleteIfExists(temp);
        }
        return raw;
    }
}
