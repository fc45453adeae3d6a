package dev.atrium.blob.fs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.atrium.blob.api.BlobStore;
import dev.atrium.blob.api.BlobStoreContract;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** The filesystem store without O_DIRECT ({@code directWrites=false}, or a filesystem refusing it) passes the contract too. */
class FsBlobStoreBufferedTest extends BlobStoreContract {

    @TempDir
    static Path data;

    private static FsBlobStore store;

    @BeforeAll
    static void open() throws Exception {
        store = new FsBlobStore(data.resolve("blobs"), Duration.ofMinutes(5), false);
        assertFalse(store.writesDirect());
    }

    @AfterAll
    static void close() throws Exception {
        store.close();
    }

    @Override
    protected BlobStore store() {
        return store;
    }

    @Override
    protected void assertNothingLeftBehind() throws Exception {
        try (Stream<Path> temps = Files.list(data.resolve("blobs").resolve(FsBlobStore.TEMP))) {
            assertEquals(List.of(), temps.toList());
        }
    }
}
