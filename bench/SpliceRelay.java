import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * bench/SpliceRelay.java LISTEN_PORT TARGET_PORT: a TCP relay on one selector thread that copies bytes between each
 * client connection and a connection of its own to the target, parsing nothing. bench/workers.sh puts it in front of
 * workerd to measure what a proxy that splices a routed connection (decides once, then only copies) could reach on
 * this machine, beside Atrium's per-request proxy (issue 34). Not part of the server.
 */
public final class SpliceRelay {

    private record Pair(SocketChannel from, SocketChannel to, ByteBuffer buffer) {}

    public static void main(String[] args) throws IOException {
        int listen = Integer.parseInt(args[0]);
        InetSocketAddress target = new InetSocketAddress("127.0.0.1", Integer.parseInt(args[1]));
        Selector selector = Selector.open();
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", listen), 1024);
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
        System.out.println("relay listening on " + listen + " -> " + target.getPort());
        while (true) {
            selector.select();
            for (SelectionKey key : selector.selectedKeys()) {
                if (!key.isValid()) {
                    continue;
                }
                if (key.isAcceptable()) {
                    SocketChannel client = server.accept();
                    if (client == null) {
                        continue;
                    }
                    SocketChannel upstream = SocketChannel.open(target);
                    for (SocketChannel c : new SocketChannel[] {client, upstream}) {
                        c.configureBlocking(false);
                        c.socket().setTcpNoDelay(true);
                    }
                    client.register(selector, SelectionKey.OP_READ, new Pair(client, upstream, ByteBuffer.allocateDirect(64 << 10)));
                    upstream.register(selector, SelectionKey.OP_READ, new Pair(upstream, client, ByteBuffer.allocateDirect(64 << 10)));
                } else if (key.isReadable()) {
                    Pair p = (Pair) key.attachment();
                    try {
                        int n = p.from().read(p.buffer());
                        if (n < 0) {
                            p.from().close();
                            p.to().close();
                            continue;
                        }
                        p.buffer().flip();
                        while (p.buffer().hasRemaining()) {
                            p.to().write(p.buffer()); // small answers on loopback: the peer's buffer has room
                        }
                        p.buffer().clear();
                    } catch (IOException e) {
                        p.from().close();
                        p.to().close();
                    }
                }
            }
            selector.selectedKeys().clear();
        }
    }
}
