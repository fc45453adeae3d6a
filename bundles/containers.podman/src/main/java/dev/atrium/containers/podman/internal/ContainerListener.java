package dev.atrium.containers.podman.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listener on the host for container services' containers ({@link BindingRelay}, {@link EgressProxy}): on every
 * address, from the first {@link #port} call on (the bridge's own address exists only while a container is on it,
 * and a container's env must name the port before it starts); a connection from an address it does not
 * {@link #accepts} is closed unread, each other one served on a thread of its own.
 */
abstract class ContainerListener implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ContainerListener.class);

    private final String name;
    private final ExecutorService pool;
    private ServerSocket server;
    private Thread acceptor;
    private volatile boolean closed;

    ContainerListener(String name, int maxThreads) {
        this.name = name;
        AtomicInteger n = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(0, maxThreads, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Whether a connection from {@code address} is served. */
    abstract boolean accepts(String address);

    /** Serves one accepted connection; closes it. */
    abstract void serve(Socket client);

    /** The port, listening from the first call on. */
    final synchronized int port() throws IOException {
        if (closed) {
            throw new IOException("the " + name + " is closed");
        }
        if (server == null) {
            ServerSocket s = new ServerSocket();
            s.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0), 128);
            server = s;
            acceptor = new Thread(this::accept, name);
            acceptor.setDaemon(true);
            acceptor.start();
        }
        return server.getLocalPort();
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("the {} stopped accepting: {}", name, e.toString());
                }
                return;
            }
            if (!accepts(client.getInetAddress().getHostAddress())) {
                BindingRelay.quietly(client);
                continue;
            }
            try {
                pool.execute(() -> serve(client));
            } catch (java.util.concurrent.RejectedExecutionException busy) {
                BindingRelay.quietly(client);
            }
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            if (server != null) {
                try {
                    server.close();
                } catch (IOException e) {
                    LOG.debug("closing the {}: {}", name, e.toString());
                }
            }
        }
        pool.shutdownNow();
        try {
            if (acceptor != null) {
                acceptor.join(2_000);
            }
            pool.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** For the log: where it listens, or that it does not yet. */
    @Override
    public synchronized String toString() {
        return server == null ? name + " (not listening)" : name + " on port " + server.getLocalPort();
    }
}
