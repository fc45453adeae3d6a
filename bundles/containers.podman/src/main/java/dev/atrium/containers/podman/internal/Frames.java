package dev.atrium.containers.podman.internal;

import dev.atrium.runner.api.JobContainer.Output;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * Docker's multiplexed stream of an exec without a TTY: frames of an 8-byte header (stream 1 stdout or 2 stderr, three
 * zero bytes, a big-endian length) and that many bytes. A frame's bytes are handed on as they are read, not when the
 * frame is complete: a long frame must not hold back output the caller shows live.
 */
final class Frames {

    private Frames() {}

    /** Copies every frame to {@code output} until the stream ends. */
    static void copy(InputStream in, Output output) throws IOException {
        byte[] header = new byte[8];
        byte[] buffer = new byte[16 * 1024];
        while (true) {
            int got = readHeader(in, header);
            if (got == 0) {
                return;
            }
            if (got < header.length) {
                throw new EOFException("the stream ended in a frame header");
            }
            boolean stderr = header[0] == 2;
            long length = ((header[4] & 0xffL) << 24)
                    | ((header[5] & 0xffL) << 16)
                    | ((header[6] & 0xffL) << 8)
                    | (header[7] & 0xffL);
            while (length > 0) {
                int n = in.read(buffer, 0, (int) Math.min(buffer.length, length));
                if (n < 0) {
                    throw new EOFException("the stream ended in a frame");
                }
                output.write(stderr, buffer, 0, n);
                length -= n;
            }
        }
    }

    /** @return how many header bytes were read: 0 at a clean end of the stream */
    private static int readHeader(InputStream in, byte[] header) throws IOException {
        int got = 0;
        while (got < header.length) {
            int n = in.read(header, got, header.length - got);
            if (n < 0) {
                return got;
            }
            got += n;
        }
        return got;
    }
}
