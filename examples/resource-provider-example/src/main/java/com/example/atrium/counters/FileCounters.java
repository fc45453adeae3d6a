package com.example.atrium.counters;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.osgi.service.component.annotations.Component;

import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;

/**
 * A resource type of its own, {@code counter}: one number per resource, kept in a file of the resource's private
 * directory. No facet of the SPI names what a counter does, so its HTTP routes are this plugin's own
 * ({@link CounterRoutes}).
 */
@Component(service = {ResourceProvider.class, FileCounters.class})
@ResourceProviderType(type = "counter", backend = "files")
public class FileCounters implements ResourceProvider {

    static final String TYPE = "counter";

    /** What this server's threads lock a counter's file with (one object per file, kept while the bundle runs). */
    private final Map<Path, Object> locks = new ConcurrentHashMap<>();

    @Override
    public void deprovision(ResourceContext ctx) throws ResourceException {
        try {
            Files.deleteIfExists(file(ctx));
        } catch (IOException e) {
            throw new ResourceException(ResourceException.Kind.UNAVAILABLE, "the counter's file cannot be removed");
        }
    }

    @Override
    public Health health(ResourceContext ctx) {
        try {
            return Files.isWritable(ctx.dataDirectory()) ? Health.ok() : Health.failing("the data directory is not writable");
        } catch (ResourceException e) {
            return Health.failing(e.getMessage());
        }
    }

    long value(ResourceContext ctx) throws ResourceException {
        return change(ctx, 0);
    }

    /**
     * Adds {@code by}, one change after the other: threads of this server by a lock per file (a JVM holds one file lock
     * per file, and a second would throw), servers sharing the directory by the file lock; the new value.
     */
    long change(ResourceContext ctx, long by) throws ResourceException {
        Path file = file(ctx);
        synchronized (locks.computeIfAbsent(file, f -> new Object())) {
            return changeLocked(file, by);
        }
    }

    private static long changeLocked(Path file, long by) throws ResourceException {
        try (FileChannel ch = FileChannel.open(
                        file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
                FileLock lock = ch.lock()) {
            ByteBuffer b = ByteBuffer.allocate(Long.BYTES);
            long value = ch.read(b, 0) == Long.BYTES ? b.flip().getLong() : 0;
            if (by != 0) {
                value += by;
                ch.write(ByteBuffer.allocate(Long.BYTES).putLong(0, value), 0);
                ch.force(false);
            }
            return value;
        } catch (IOException e) {
            throw new ResourceException(ResourceException.Kind.UNAVAILABLE, "the counter cannot be read or written");
        }
    }

    private static Path file(ResourceContext ctx) throws ResourceException {
        return ctx.dataDirectory().resolve("counter");
    }
}
