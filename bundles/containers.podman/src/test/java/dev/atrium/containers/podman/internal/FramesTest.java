package dev.atrium.containers.podman.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FramesTest {

    private static byte[] frame(int stream, String text) {
        byte[] payload = text.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(stream);
        out.writeBytes(new byte[] {0, 0, 0});
        out.write(payload.length >>> 24);
        out.write(payload.length >>> 16);
        out.write(payload.length >>> 8);
        out.write(payload.length);
        out.writeBytes(payload);
        return out.toByteArray();
    }

    /** An input that hands out at most {@code piece} bytes per read, as a socket may. */
    private static InputStream trickle(byte[] bytes, int piece) {
        return new ByteArrayInputStream(bytes) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, piece));
            }
        };
    }

    @Test
    void stdoutAndStderrFramesReachTheirStreamInOrder() throws Exception {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(frame(1, "out one\n"));
        all.writeBytes(frame(2, "err\n"));
        all.writeBytes(frame(1, "out two\n"));
        List<String> seen = new ArrayList<>();
        Frames.copy(trickle(all.toByteArray(), 3), (stderr, b, off, len) -> {
            String s = new String(b, off, len, StandardCharsets.UTF_8);
            if (!seen.isEmpty() && seen.get(seen.size() - 1).startsWith(stderr ? "E:" : "O:")) {
                seen.set(seen.size() - 1, seen.get(seen.size() - 1) + s);
            } else {
                seen.add((stderr ? "E:" : "O:") + s);
            }
        });
        assertEquals(List.of("O:out one\n", "E:err\n", "O:out two\n"), seen);
    }

    @Test
    void aFramesBytesAreHandedOnBeforeTheFrameIsComplete() throws Exception {
        byte[] f = frame(1, "x".repeat(40_000));
        List<Integer> pieces = new ArrayList<>();
        Frames.copy(trickle(f, 1000), (stderr, b, off, len) -> pieces.add(len));
        assertEquals(40_000, pieces.stream().mapToInt(Integer::intValue).sum());
        assertEquals(true, pieces.size() > 1);
    }

    @Test
    void aStreamCutInAFrameIsAnError() {
        byte[] f = frame(1, "hello");
        byte[] cut = java.util.Arrays.copyOf(f, f.length - 2);
        assertThrows(EOFException.class, () -> Frames.copy(new ByteArrayInputStream(cut), (s, b, o, l) -> {}));
    }

    @Test
    void anEmptyStreamHasNoOutput() throws Exception {
        List<Integer> pieces = new ArrayList<>();
        Frames.copy(new ByteArrayInputStream(new byte[0]), (s, b, o, l) -> pieces.add(l));
        assertEquals(List.of(), pieces);
    }
}
