package dev.atrium.resource.secret.internal;

import dev.atrium.kernel.api.KeyFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * The operator's AES-256 keys for secret values: one file per key in {@code <data>/keys/secret-ref}, named
 * {@code <id>.key} (the id is the time it was made, so the newest sorts last), holding the key in base64. The newest
 * encrypts; every older one still decrypts what it encrypted. An operator rotates by {@link #rotate()} (the admin route)
 * or by dropping in a newer file; a key file is removed only once no value uses it (values move to the newest key as they
 * are read).
 */
final class SecretKeys {

    private static final Pattern ID = Pattern.compile("k\\d{8}T\\d{9}Z");
    private static final DateTimeFormatter STAMP =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmssSSS'Z'").withZone(ZoneOffset.UTC);

    record Key(String id, SecretKey key) {}

    private final Path directory;

    SecretKeys(Path directory) {
        this.directory = directory;
    }

    /** The newest key, made first if there is none. */
    synchronized Key current() throws IOException {
        Optional<String> newest = ids().stream().reduce((a, b) -> b);
        return newest.isPresent() ? read(newest.get()).orElseThrow() : make();
    }

    /** A new key, which encrypts from now on. */
    synchronized Key rotate() throws IOException {
        return make();
    }

    /** The key with {@code id}, if its file is there. */
    Optional<Key> byId(String id) throws IOException {
        return ID.matcher(id).matches() ? read(id) : Optional.empty();
    }

    /** The ids of the keys there are, oldest first. */
    List<String> ids() throws IOException {
        if (!Files.isDirectory(directory)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".key"))
                    .map(n -> n.substring(0, n.length() - 4))
                    .filter(id -> ID.matcher(id).matches())
                    .sorted()
                    .toList();
        }
    }

    private Optional<Key> read(String id) throws IOException {
        Path file = directory.resolve(id + ".key");
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        return Optional.of(new Key(id, new SecretKeySpec(KeyFile.read(file), "AES")));
    }

    private Key make() throws IOException {
        String id = "k" + STAMP.format(Instant.now());
        List<String> existing = ids();
        // never reuse or sort before an existing id (two rotations in one millisecond, a clock set back)
        if (!existing.isEmpty() && id.compareTo(existing.get(existing.size() - 1)) <= 0) {
            Instant last = STAMP.parse(existing.get(existing.size() - 1).substring(1), Instant::from);
            id = "k" + STAMP.format(last.plusMillis(1));
        }
        return new Key(id, new SecretKeySpec(KeyFile.make(directory.resolve(id + ".key")), "AES"));
    }
}
