package com.example.atrium.fileskv;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import org.osgi.service.component.annotations.Component;

import dev.atrium.resource.api.ConfigSchema;
import dev.atrium.resource.api.KvFacet;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;

/**
 * A {@code kv} backend on plain files: one file per key in the resource's private directory
 * ({@link ResourceContext#dataDirectory()}), named by the hex of the key's UTF-8 bytes (so hex order is key order),
 * holding an 8-byte expiry (epoch milliseconds, 0 for never) followed by the value. Writes go to a temporary file that
 * is renamed into place, so a reader sees the old value or the new one.
 *
 * <p>Register it as {@code atrium.resource.type=kv}, {@code atrium.resource.backend=files}; clients pick it with
 * {@code "backend": "files"} when they create a resource.
 */
@Component(service = ResourceProvider.class)
@ResourceProviderType(type = "kv", backend = "files")
public class FilesKv implements ResourceProvider, KvFacet {

    private static final HexFormat HEX = HexFormat.of();

    /** This build's version (from fileskv.properties, filtered by Maven). */
    private final String version;

    public FilesKv() {
        java.util.Properties p = new java.util.Properties();
        try (java.io.InputStream in = FilesKv.class.getResourceAsStream("/fileskv.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // the version is informative only
        }
        version = p.getProperty("version", "unknown");
    }

    private static final ConfigSchema SCHEMA =
            ConfigSchema.builder().integer("max_value_bytes", "the largest value this resource accepts", 1, 1 << 20, 65_536).build();

    /** A resource's configuration, as {@link ConfigSchema#read} reads it: {@code maxValueBytes} is max_value_bytes. */
    private record Settings(long maxValueBytes) {}

    @Override
    public ConfigSchema configSchema() {
        return SCHEMA;
    }

    @Override
    public Map<String, Object> provision(ResourceContext ctx) throws ResourceException {
        ctx.dataDirectory();
        return Map.of("layout", "hex-named files");
    }

    @Override
    public void update(ResourceContext ctx, Map<String, Object> newConfig) {
        // the limit is read on every put: nothing to migrate
    }

    @Override
    public void deprovision(ResourceContext ctx) throws ResourceException {
        // the core deletes the resource's private directory after this call too; the entries go here, so that a
        // repeated call, or one whose directory removal failed, leaves no entry behind (the SPI's kv contract)
        try (Stream<Path> files = Files.list(ctx.dataDirectory())) {
            for (Path file : files.toList()) {
                Files.deleteIfExists(file);
            }
        } catch (java.nio.file.NoSuchFileException e) {
            // already gone
        } catch (IOException e) {
            throw ResourceException.unavailable("the entries could not be deleted", e);
        }
    }

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) {
        // which version of this plugin serves the resource: visible proof of an in-place upgrade
        return Map.of("backend", "files", "provider_version", version);
    }

    @Override
    public Health health(ResourceContext ctx) {
        try {
            return Files.isWritable(ctx.dataDirectory()) ? Health.ok() : Health.failing("the data directory is not writable");
        } catch (ResourceException e) {
            return Health.failing(e.getMessage());
        }
    }

    @Override
    public KvPage list(ResourceContext ctx, String prefix, String cursor, int limit) throws ResourceException {
        String after = cursor == null ? null : cursor;
        if (after != null && !after.matches("[0-9a-f]*")) {
            throw ResourceException.badInput("cursor is not one this listing returned");
        }
        String hexPrefix = hex(prefix);
        List<KvKey> keys = new ArrayList<>();
        String next = null;
        try (Stream<Path> files = Files.list(ctx.dataDirectory())) {
            List<String> names = files.map(p -> p.getFileName().toString()).filter(n -> n.matches("[0-9a-f]+"))
                    .filter(n -> n.startsWith(hexPrefix)).filter(n -> after == null || n.compareTo(after) > 0).sorted().toList();
            for (String name : names) {
                Optional<Instant> expiry = expiry(ctx.dataDirectory().resolve(name));
                if (expiry == null) {
                    continue; // expired or gone meanwhile
                }
                if (keys.size() == limit) {
                    next = keys.isEmpty() ? null : hex(keys.get(keys.size() - 1).name());
                    break;
                }
                keys.add(new KvKey(new String(HEX.parseHex(name), StandardCharsets.UTF_8), expiry.orElse(null)));
            }
        } catch (IOException e) {
            throw ResourceException.unavailable("the files cannot be listed", e);
        }
        ctx.usage().record("reads", 1);
        return new KvPage(keys, next);
    }

    @Override
    public Optional<KvEntry> get(ResourceContext ctx, String key) throws ResourceException {
        ctx.usage().record("reads", 1);
        byte[] stored = read(ctx.dataDirectory().resolve(hex(key)));
        if (stored == null) {
            return Optional.empty();
        }
        long expires = ByteBuffer.wrap(stored).getLong();
        if (expires != 0 && expires <= System.currentTimeMillis()) {
            return Optional.empty();
        }
        byte[] value = new byte[stored.length - 8];
        System.arraycopy(stored, 8, value, 0, value.length);
        return Optional.of(new KvEntry(key, value, expires == 0 ? null : Instant.ofEpochMilli(expires)));
    }

    @Override
    public void put(ResourceContext ctx, String key, byte[] value, Duration ttl) throws ResourceException {
        long max = SCHEMA.read(ctx.config(), Settings.class).maxValueBytes();
        if (value.length > max) {
            throw new ResourceException(ResourceException.Kind.TOO_LARGE, "this resource takes values of at most " + max + " bytes");
        }
        long expires = ttl == null ? 0 : System.currentTimeMillis() + ttl.toMillis();
        Path dir = ctx.dataDirectory();
        Path target = dir.resolve(hex(key));
        try {
            Path tmp = Files.createTempFile(dir, ".put-", ".tmp");
            try {
                Files.write(tmp, ByteBuffer.allocate(8 + value.length).putLong(expires).put(value).array());
                try {
                    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw ResourceException.unavailable("the value could not be written", e);
        }
        ctx.usage().record("writes", 1);
    }

    @Override
    public boolean delete(ResourceContext ctx, String key) throws ResourceException {
        Path file = ctx.dataDirectory().resolve(hex(key));
        boolean live = get(ctx, key).isPresent();
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw ResourceException.unavailable("the value could not be deleted", e);
        }
        ctx.usage().record("writes", 1);
        return live;
    }

    private static String hex(String key) {
        return HEX.formatHex(key.getBytes(StandardCharsets.UTF_8));
    }

    /** The entry's expiry (empty for never), or null when it is expired or gone. */
    private static Optional<Instant> expiry(Path file) {
        byte[] stored = read(file);
        if (stored == null || stored.length < 8) {
            return null;
        }
        long expires = ByteBuffer.wrap(stored, 0, 8).getLong();
        if (expires != 0 && expires <= System.currentTimeMillis()) {
            return null;
        }
        return expires == 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(expires));
    }

    private static byte[] read(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
