package dev.atrium.storage.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The download body written from the blob's file: exactly the bytes of the range asked for, across window
 * boundaries, whether it goes to the container's own stream as mapped buffers or, when a wrapper or the container
 * stands in the way, through CXF's stream as before. The servlet chain here has the shape of the server's: JAX-RS's
 * injected wrapper, the kernel's pass-through wrappers, Felix's javax wrapper, the container's Jakarta response.
 */
class FileBodyTest {

    private static final int WINDOW = 1000;

    @TempDir
    Path dir;

    /** The container's stream: keeps what it is given, noting whether each buffer came as is (direct: mapped). */
    static final class ContainerStream extends jakarta.servlet.ServletOutputStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final List<Integer> buffers = new ArrayList<>();
        boolean allDirect = true;

        @Override
        public void write(ByteBuffer buffer) {
            allDirect &= buffer.isDirect();
            buffers.add(buffer.remaining());
            byte[] b = new byte[buffer.remaining()];
            buffer.get(b);
            bytes.write(b, 0, b.length);
        }

        @Override
        public void write(int b) {
            bytes.write(b);
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setWriteListener(jakarta.servlet.WriteListener listener) {
            throw new UnsupportedOperationException();
        }
    }

    /** A container stream that leaves write(ByteBuffer) to the Servlet API's default (an array per buffer). */
    static final class ArrayOnlyStream extends jakarta.servlet.ServletOutputStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        @Override
        public void write(int b) {
            bytes.write(b);
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setWriteListener(jakarta.servlet.WriteListener listener) {
            throw new UnsupportedOperationException();
        }
    }

    /** CXF's stream: counts what JAX-RS writes, the zero-byte first write that sets the headers included. */
    static final class CxfStream extends OutputStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int writes;

        @Override
        public void write(int b) {
            writes++;
            bytes.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            writes++;
            bytes.write(b, off, len);
        }
    }

    private static jakarta.servlet.http.HttpServletResponse container(jakarta.servlet.ServletOutputStream stream) {
        return (jakarta.servlet.http.HttpServletResponse) Proxy.newProxyInstance(
                FileBodyTest.class.getClassLoader(),
                new Class<?>[] {jakarta.servlet.http.HttpServletResponse.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getOutputStream" -> stream;
                    case "isCommitted" -> false;
                    default -> null;
                });
    }

    /** The server's chain over {@code container}: JAX-RS's injected wrapper over two pass-through filter wrappers over Felix's. */
    private static javax.servlet.http.HttpServletResponse served(jakarta.servlet.http.HttpServletResponse container) {
        javax.servlet.http.HttpServletResponse felix =
                new org.apache.felix.http.javaxwrappers.HttpServletResponseWrapper(container);
        javax.servlet.http.HttpServletResponse filters = new javax.servlet.http.HttpServletResponseWrapper(
                new javax.servlet.http.HttpServletResponseWrapper(felix) {});
        return new javax.servlet.http.HttpServletResponseWrapper(filters) {
            @Override
            public javax.servlet.ServletOutputStream getOutputStream() {
                throw new AssertionError("the injected wrapper's stream is the resource's own, never CXF's");
            }
        };
    }

    private Path file(byte[] bytes) throws IOException {
        return Files.write(dir.resolve("blob"), bytes);
    }

    private static byte[] random(int size) {
        byte[] b = new byte[size];
        new Random(size).nextBytes(b);
        return b;
    }

    private static final long[][] RANGES = {
        {0, 10_500}, {0, 1}, {999, 2}, {1000, 1000}, {1500, 3000}, {10_499, 1}, {4000, 6500}, {0, 0}
    };

    @Test
    void theContainersStreamGetsMappedWindowsHoldingExactlyTheRange() throws Exception {
        byte[] bytes = random(10_500);
        Path blob = file(bytes);
        for (long[] r : RANGES) {
            ContainerStream container = new ContainerStream();
            CxfStream cxf = new CxfStream();
            List<String> copying = new ArrayList<>();
            FileChannel channel = FileChannel.open(blob, StandardOpenOption.READ);
            new FileBody(channel, r[0], r[1], served(container(container)), WINDOW, copying::add).write(cxf);
            String what = "bytes " + r[0] + "+" + r[1];
            assertArrayEquals(
                    Arrays.copyOfRange(bytes, (int) r[0], (int) (r[0] + r[1])), container.bytes.toByteArray(), what);
            assertEquals(List.of(), copying, what);
            assertEquals(1, cxf.writes, what + ": CXF's stream is written once, to set the headers");
            assertEquals(0, cxf.bytes.size(), what);
            assertTrue(container.allDirect, what + ": the buffers are the mapped file's, not copies");
            assertEquals((r[1] + WINDOW - 1) / WINDOW, container.buffers.size(), what + ": one write per window");
            assertTrue(container.buffers.stream().allMatch(n -> n <= WINDOW), what);
            assertFalse(channel.isOpen(), what + ": the file is closed once written");
        }
    }

    @Test
    void aWrapperWithAStreamOfItsOwnGetsTheBytesThroughCxfsStream() throws Exception {
        byte[] bytes = random(10_500);
        Path blob = file(bytes);
        ContainerStream container = new ContainerStream();
        javax.servlet.ServletOutputStream capturing = new javax.servlet.ServletOutputStream() {
            @Override
            public void write(int b) {
                throw new AssertionError();
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(javax.servlet.WriteListener listener) {
                throw new UnsupportedOperationException();
            }
        };
        javax.servlet.http.HttpServletResponse capture =
                new javax.servlet.http.HttpServletResponseWrapper(
                        new org.apache.felix.http.javaxwrappers.HttpServletResponseWrapper(container(container))) {
                    @Override
                    public javax.servlet.ServletOutputStream getOutputStream() {
                        return capturing; // like the kernel's error capture once a status >= 400 was set
                    }
                };
        javax.servlet.http.HttpServletResponse injected = new javax.servlet.http.HttpServletResponseWrapper(capture);
        for (long[] r : RANGES) {
            CxfStream cxf = new CxfStream();
            List<String> copying = new ArrayList<>();
            new FileBody(FileChannel.open(blob, StandardOpenOption.READ), r[0], r[1], injected, WINDOW, copying::add)
                    .write(cxf);
            assertArrayEquals(Arrays.copyOfRange(bytes, (int) r[0], (int) (r[0] + r[1])), cxf.bytes.toByteArray());
            assertEquals(0, container.bytes.size(), "nothing went past the wrapper");
            assertEquals(1, copying.size());
            assertTrue(copying.get(0).contains("serves its own stream"), copying.get(0));
        }
    }

    @Test
    void aContainerStreamWithoutItsOwnBufferWriteGetsTheBytesThroughCxfsStream() throws Exception {
        byte[] bytes = random(5000);
        Path blob = file(bytes);
        ArrayOnlyStream container = new ArrayOnlyStream();
        CxfStream cxf = new CxfStream();
        List<String> copying = new ArrayList<>();
        new FileBody(
                        FileChannel.open(blob, StandardOpenOption.READ),
                        123,
                        4000,
                        served(container(container)),
                        WINDOW,
                        copying::add)
                .write(cxf);
        assertArrayEquals(Arrays.copyOfRange(bytes, 123, 4123), cxf.bytes.toByteArray());
        assertEquals(0, container.bytes.size());
        assertTrue(copying.get(0).contains("copies buffers into arrays"), copying.get(0));

        StringBuilder why = new StringBuilder();
        assertNull(FileBody.direct(null, why));
        cxf = new CxfStream();
        new FileBody(FileChannel.open(blob, StandardOpenOption.READ), 0, 5000, null, WINDOW, copying::add).write(cxf);
        assertArrayEquals(bytes, cxf.bytes.toByteArray(), "no servlet response: copied");
    }
}
