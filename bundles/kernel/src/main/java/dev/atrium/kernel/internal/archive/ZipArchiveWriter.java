package dev.atrium.kernel.internal.archive;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.WorkspaceArchivePart.ArchiveWriter;
import dev.atrium.kernel.api.WorkspaceArchivePart.Lines;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.HashSet;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/** One part's view of the archive being streamed: its entries go under its folder, one open at a time. */
final class ZipArchiveWriter implements ArchiveWriter {

    private final ZipOutputStream zip;
    private final String folder;
    private final ObjectMapper json;
    private final Set<String> written = new HashSet<>();
    private EntryStream open;

    ZipArchiveWriter(ZipOutputStream zip, String folder, ObjectMapper json) {
        this.zip = zip;
        this.folder = folder;
        this.json = json;
    }

    @Override
    public OutputStream entry(String name) throws IOException {
        String path = WorkspaceArchive.entryPath(folder, name);
        if (!written.add(path)) {
            throw new IllegalArgumentException("entry " + path + " was already written");
        }
        finish();
        zip.putNextEntry(new ZipEntry(path));
        open = new EntryStream(zip);
        return open;
    }

    @Override
    public Lines lines(String name) throws IOException {
        OutputStream out = entry(name);
        return value -> {
            out.write(json.writeValueAsBytes(value));
            out.write('\n');
        };
    }

    /** Ends the open entry, if any (the part returned without closing it). */
    void finish() throws IOException {
        if (open != null) {
            open.close();
            open = null;
        }
    }

    /** An entry's stream: closing it ends the entry, never the archive; writing after that fails. */
    private static final class EntryStream extends FilterOutputStream {

        private final ZipOutputStream zip;
        private boolean closed;

        EntryStream(ZipOutputStream zip) {
            super(zip);
            this.zip = zip;
        }

        @Override
        public void write(int b) throws IOException {
            check();
            zip.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            check();
            zip.write(b, off, len);
        }

        @Override
        public void flush() {
            // the response is flushed by the archive, not per entry
        }

        @Override
        public void close() throws IOException {
            if (!closed) {
                closed = true;
                zip.closeEntry();
            }
        }

        private void check() throws IOException {
            if (closed) {
                throw new IOException("this archive entry is closed");
            }
        }
    }
}
