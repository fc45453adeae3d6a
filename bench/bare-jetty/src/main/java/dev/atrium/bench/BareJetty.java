package dev.atrium.bench;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Baseline for bench/run.sh: a plain Jetty 12 server on 127.0.0.1 whose single handler answers every request
 * with 200, {@code Content-Type: application/json} and the bytes of a file (the body Atrium sent for the
 * benchmarked request). Usage: {@code java -jar bare-jetty.jar PORT BODY_FILE}.
 *
 * <p>The connector mirrors what Atrium's Felix Jetty logs at start (1 acceptor, 1 selector, 8..200 threads,
 * no Server header), so the difference measured is what Atrium does per request, not connector tuning.
 */
public final class BareJetty {

    private BareJetty() {
    }

    /** Answers every request with the same bytes. */
    static final class FixedBodyHandler extends Handler.Abstract {
        private final byte[] body;

        FixedBodyHandler(byte[] body) {
            this.body = body;
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            response.setStatus(200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            response.write(true, ByteBuffer.wrap(body), callback);
            return true;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: java -jar bare-jetty.jar PORT BODY_FILE");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        byte[] body = Files.readAllBytes(Path.of(args[1]));

        QueuedThreadPool threads = new QueuedThreadPool(200, 8);
        threads.setName("bare-jetty");
        Server server = new Server(threads);

        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        ServerConnector connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        server.addConnector(connector);

        server.setHandler(new FixedBodyHandler(body));
        server.setStopAtShutdown(true); // SIGTERM stops the server cleanly
        server.start();
        System.out.println("bare-jetty: serving " + body.length + " bytes on http://127.0.0.1:" + port + "/");
        server.join();
    }
}
