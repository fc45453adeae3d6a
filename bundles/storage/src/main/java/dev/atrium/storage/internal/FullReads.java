package dev.atrium.storage.internal;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * A request body read in full buffers: the servlet stream hands out what one network read brought (a few KiB), and
 * every such piece would otherwise be one hash update and one file write in the BlobStore. Filling the caller's
 * buffer makes those few and large.
 */
final class FullReads extends FilterInputStream {

    FullReads(InputStream in) {
        super(in);
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        int filled = 0;
        while (filled < len) {
            int n = in.read(b, off + filled, len - filled);
            if (n < 0) {
                return filled == 0 ? -1 : filled;
            }
            filled += n;
        }
        return filled;
    }
}
