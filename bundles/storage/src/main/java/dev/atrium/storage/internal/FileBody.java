package dev.atrium.storage.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.function.Consumer;
import javax.servlet.ServletResponse;
import javax.servlet.ServletResponseWrapper;
import javax.ws.rs.core.StreamingOutput;

/**
 * A download's bytes straight from the blob's file: read-only windows of it mapped into memory and handed as they are
 * to the container's {@code ServletOutputStream.write(ByteBuffer)} (Servlet 6.1), which Jetty writes to the socket
 * without a copy. The one copy left is the kernel's, from the page cache into the socket; a stream copied each byte
 * twice more in user space (mapped page to array, array to the JDK's temporary direct buffer inside the socket write).
 *
 * <p>JAX-RS still answers the request: the kernel's filters have run (authentication, scopes, owner scope), and CXF
 * sets the status and headers (on its stream's first write, of no bytes). Only the body's bytes go past CXF's stream
 * and the javax filters' wrappers, and only when none of those wrappers serves a stream of its own (it would count,
 * buffer or capture the bytes): the javax stream the wrappers give must be Felix's pass-through to the Jakarta
 * response's. Otherwise, or when the container's stream does not implement {@code write(ByteBuffer)} itself (the
 * Servlet default copies each buffer into a new array), the windows are copied through CXF's stream as before.
 */
final class FileBody implements StreamingOutput {

    /** Bytes mapped and written at a time: few writes, and the mapping of a window is released once it is collected. */
    static final long WINDOW = 16L * 1024 * 1024;

    private static final int COPY_BUFFER = 256 * 1024;
    private static final byte[] NOTHING = new byte[0];

    /** Where the windows go when the container's stream takes them. */
    interface BufferSink {
        void write(ByteBuffer bytes) throws IOException;
    }

    private final FileChannel file;
    private final long first;
    private final long length;
    private final ServletResponse response;
    private final long window;
    private final Consumer<String> copying;

    /**
     * @param file     the blob's file; closed once written
     * @param first    the first byte to send
     * @param length   how many
     * @param response the servlet response JAX-RS injected for this request (null: copy)
     * @param window   bytes mapped at a time
     * @param copying  told why, when the bytes are copied through CXF's stream instead
     */
    FileBody(
            FileChannel file,
            long first,
            long length,
            ServletResponse response,
            long window,
            Consumer<String> copying) {
        this.file = file;
        this.first = first;
        this.length = length;
        this.response = response;
        this.window = window;
        this.copying = copying;
    }

    @Override
    public void write(OutputStream out) throws IOException {
        try (FileChannel f = file) {
            // CXF puts the status and headers on the servlet response at its stream's first write; Jetty sends nothing
            // yet
            out.write(NOTHING, 0, 0);
            StringBuilder why = new StringBuilder();
            BufferSink direct = direct(response, why);
            long end = first + length;
            if (direct != null) {
                for (long at = first; at < end; ) {
                    long n = Math.min(window, end - at);
                    direct.write(f.map(FileChannel.MapMode.READ_ONLY, at, n));
                    at += n;
                }
                return;
            }
            copying.accept(why.toString());
            byte[] buffer = new byte[COPY_BUFFER];
            for (long at = first; at < end; ) {
                ByteBuffer mapped = f.map(FileChannel.MapMode.READ_ONLY, at, Math.min(window, end - at));
                while (mapped.hasRemaining()) {
                    int n = Math.min(buffer.length, mapped.remaining());
                    mapped.get(buffer, 0, n);
                    out.write(buffer, 0, n);
                }
                at += mapped.capacity();
            }
        }
    }

    /**
     * The container's own stream under {@code injected} (JAX-RS's wrapper of the response CXF writes to), when
     * writing to it is the same as writing through the wrappers and it takes buffers as they are; else null, with
     * the reason in {@code why}.
     */
    static BufferSink direct(ServletResponse injected, StringBuilder why) throws IOException {
        if (injected == null) {
            why.append("no servlet response was injected");
            return null;
        }
        // JAX-RS wraps the response it injects, to note writes the resource makes itself; CXF writes below that wrapper
        ServletResponse served = injected instanceof ServletResponseWrapper w ? w.getResponse() : injected;
        try {
            return Jakarta.sink(served, why);
        } catch (LinkageError e) {
            why.append("the HTTP service is not Felix's with Servlet 6.1 (")
                    .append(e)
                    .append(')');
            return null;
        }
    }

    /** What needs Felix's javax wrappers and the Servlet 6.1 API, both optional imports: loaded only when used. */
    private static final class Jakarta {
        static BufferSink sink(ServletResponse served, StringBuilder why) throws IOException {
            javax.servlet.ServletOutputStream stream = served.getOutputStream();
            if (!(stream instanceof org.apache.felix.http.javaxwrappers.ServletOutputStreamWrapper)) {
                why.append("a servlet response wrapper serves its own stream (")
                        .append(stream.getClass().getName())
                        .append(')');
                return null;
            }
            ServletResponse r = served;
            while (r instanceof ServletResponseWrapper w) {
                r = w.getResponse();
            }
            if (!(r instanceof org.apache.felix.http.javaxwrappers.ServletResponseWrapper felix)) {
                why.append("the response under the wrappers is not Felix's (")
                        .append(r.getClass().getName())
                        .append(')');
                return null;
            }
            jakarta.servlet.ServletOutputStream own = felix.getResponse().getOutputStream();
            try {
                if (own.getClass().getMethod("write", ByteBuffer.class).getDeclaringClass()
                        == jakarta.servlet.ServletOutputStream.class) {
                    why.append("the container's stream copies buffers into arrays (")
                            .append(own.getClass().getName())
                            .append(')');
                    return null;
                }
            } catch (NoSuchMethodException e) {
                why.append("the Servlet API is older than 6.1");
                return null;
            }
            return own::write;
        }
    }
}
