package dev.atrium.streams.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** An event's SSE bytes, made once for all the stream's subscribers. */
final class Frame {
    static final Frame HEARTBEAT = new Frame(": heartbeat\n\n".getBytes(StandardCharsets.US_ASCII));
    private static final byte[] CRLF = {'\r', '\n'};
    final byte[] text;
    private volatile ByteBuffer chunk;

    Frame(byte[] text) {
        this.text = text;
    }

    static Frame of(long id, String type, String json) {
        return new Frame(
                ("id: " + id + "\nevent: " + type + "\ndata: " + json + "\n\n").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The frame as one HTTP/1.1 chunk, in direct memory so that a socket write copies nothing; each call a view of its
     * own (a write moves the view's position), the bytes shared.
     */
    ByteBuffer chunk() {
        ByteBuffer c = chunk;
        if (c == null) {
            byte[] size = (Integer.toHexString(text.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
            ByteBuffer b = ByteBuffer.allocateDirect(size.length + text.length + CRLF.length);
            b.put(size).put(text).put(CRLF).flip();
            chunk = c = b.asReadOnlyBuffer(); // made twice at worst, by two lanes at once: the same bytes
        }
        return c.duplicate();
    }
}
