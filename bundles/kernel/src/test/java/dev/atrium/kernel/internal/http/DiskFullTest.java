package dev.atrium.kernel.internal.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystemException;
import javax.servlet.ServletException;
import org.junit.jupiter.api.Test;

class DiskFullTest {

    @Test
    void enospcAndEdquotAreFoundAnywhereInTheCauseChainAndNothingElseIs() {
        assertNotNull(DiskFull.find(new IOException("No space left on device")));
        assertNotNull(
                DiskFull.find(new FileSystemException("/data/blobs/.tmp/x.part", null, "No space left on device")));
        assertNotNull(DiskFull.find(new UncheckedIOException(new IOException("Disk quota exceeded"))));
        assertNotNull(DiskFull.find(new RuntimeException(new IOException(
                "writing the blob failed: No space left on device", new IOException("No space left on device")))));
        assertNotNull(DiskFull.find(new ServletException("wrapped", new IOException("No space left on device"))));
        assertNull(DiskFull.find(new IOException("Broken pipe")));
        assertNull(
                DiskFull.find(new IllegalStateException("No space left on device")),
                "only an I/O failure says the disk is full");
        assertEquals("INSUFFICIENT_STORAGE", ErrorBody.codeFor(DiskFull.STATUS));
    }
}
