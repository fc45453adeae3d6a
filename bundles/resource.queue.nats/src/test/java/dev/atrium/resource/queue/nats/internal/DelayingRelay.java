package dev.atrium.resource.queue.nats.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A TCP relay on loopback in front of a real server that hands the server's bytes to the client {@code delay} late (in
 * order); the client's bytes go through at once. It stands for a server answering late on a loaded machine.
 */
final class DelayingRelay implements AutoCloseable {

    private record Chunk(long dueNanos, byte[] bytes) {}

    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean open = true;
    private volatile Duration delay;

    DelayingRelay(String host, int port, Duration initialDelay) throws IOException {
        this.delay = initialDelay;
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(
                () -> {
                    while (open) {
                        try {
                            Socket client = listener.accept();
                            Socket server = new Socket(host, port);
                            sockets.add(client);
                            sockets.add(server);
                            start(() -> copy(client.getInputStream(), server.getOutputStream()));
                            LinkedBlockingQueue<Chunk> late = new LinkedBlockingQueue<>();
                            start(() -> {
                                InputStream in = server.getInputStream();
                                byte[] buffer = new byte[65536];
                                for (int n; (n = in.read(buffer)) > 0; ) {
                                    late.add(new Chunk(
                                            System.nanoTime() + this.delay.toNanos(),
                                            java.util.Arrays.copyOf(buffer, n)));
                                }
                            });
                            start(() -> {
                                OutputStream out = client.getOutputStream();
                                while (open) {
                                    Chunk c = late.poll(100, TimeUnit.MILLISECONDS);
                                    if (c != null) {
                                        long wait = c.dueNanos() - System.nanoTime();
                                        if (wait > 0) {
                                            TimeUnit.NANOSECONDS.sleep(wait);
                                        }
                                        out.write(c.bytes());
                                        out.flush();
                                    }
                                }
                            });
                        } catch (IOException e) {
                            return;
                        }
                    }
                },
                "delaying-relay");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** From now on, what the server sends reaches the client {@code delay} late (bytes already under way keep theirs). */
    void delay(Duration delay) {
        this.delay = delay;
    }

    int port() {
        return listener.getLocalPort();
    }

    private interface Work {
        void run() throws Exception;
    }

    private void start(Work work) {
        Thread t = new Thread(
                () -> {
                    try {
                        work.run();
                    } catch (Exception closed) {
                        // the relay or one side closed
                    }
                },
                "delaying-relay-copy");
        t.setDaemon(true);
        t.start();
    }

    private static void copy(InputStream in, OutputStream out) throws IOException {
        byte[] buffer = new byte[65536];
        for (int n; (n = in.read(buffer)) > 0; ) {
            out.write(buffer, 0, n);
            out.flush();
        }
    }

    @Override
    public void close() throws IOException {
        open = false;
        listener.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
