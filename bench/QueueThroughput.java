import java.lang.annotation.Annotation;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import org.osgi.framework.BundleContext;
import org.postgresql.ds.PGSimpleDataSource;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.resource.api.QueueFacet;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.TestResourceContext;
import dev.atrium.resource.queue.internal.PostgresQueue;
import dev.atrium.resource.queue.nats.internal.NatsQueue;
import dev.atrium.resource.queue.nats.internal.NatsQueueConfig;
import io.nats.client.JetStream;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;

/**
 * bench/resources-queue.sh, in-process part: queue messages per second through the provider API (QueueFacet, no
 * HTTP), each message sent, received (batches of BATCH) and acked, with PRODUCERS senders and CONSUMERS receivers
 * running together for SECONDS, on PostgreSQL and on NATS JetStream; then the same pipeline on jnats directly (a
 * work-queue stream, pull fetch, ack) as the reference for the NATS figure.
 *
 *   java -cp <classpath> bench/QueueThroughput.java <nats-url> <jdbc-url> <producers> <consumers> <seconds> <batch> <body-bytes>
 */
public class QueueThroughput {

    public static void main(String[] args) throws Exception {
        String natsUrl = args[0];
        String jdbcUrl = args[1];
        int producers = Integer.parseInt(args[2]);
        int consumers = Integer.parseInt(args[3]);
        int seconds = Integer.parseInt(args[4]);
        int batch = Integer.parseInt(args[5]);
        byte[] body = new byte[Integer.parseInt(args[6])];

        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(jdbcUrl);
        PostgresQueue postgres = new PostgresQueue(new Pooled(dataSource, producers + consumers).proxy(), migrations(dataSource), noBundle());
        measure("postgres", postgres, new TestResourceContext(dataSource, null, postgres.configSchema().validate(Map.of())),
                producers, consumers, seconds, batch, body);

        String run = UUID.randomUUID().toString().substring(0, 8);
        NatsQueue nats = new NatsQueue(natsConfig(natsUrl, run));
        TestResourceContext r = new TestResourceContext(null, null, nats.configSchema().validate(Map.of()));
        nats.provision(r);
        try {
            measure("nats", nats, r, producers, consumers, seconds, batch, body);
        } finally {
            nats.deprovision(r);
            java.lang.reflect.Method close = NatsQueue.class.getDeclaredMethod("close");
            close.setAccessible(true);
            close.invoke(nats);
        }
        jnats(natsUrl, run, producers, consumers, seconds, batch, body);
    }

    private interface Worker {
        void run() throws Exception;
    }

    /** Runs producers and consumers together; prints acked messages/s (and sends/s). */
    private static void report(String name, int producers, int consumers, int seconds, Worker produce, Worker consume, LongAdder sent, LongAdder acked)
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < producers + consumers; i++) {
            Worker w = i < producers ? produce : consume;
            Thread t = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        w.run();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            threads.add(t);
        }
        // one second of warm-up, then the measured window
        threads.forEach(Thread::start);
        Thread.sleep(1000);
        long sent0 = sent.sum(), acked0 = acked.sum(), t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        long sent1 = sent.sum(), acked1 = acked.sum(), t1 = System.nanoTime();
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException(name + " failed", failures.get(0));
        }
        double s = (t1 - t0) / 1e9;
        System.out.printf("queue %s sent/s %.0f acked/s %.0f%n", name, (sent1 - sent0) / s, (acked1 - acked0) / s);
    }

    private static void measure(String backend, Object provider, TestResourceContext r, int producers, int consumers, int seconds, int batch,
            byte[] body) throws Exception {
        QueueFacet q = (QueueFacet) provider;
        LongAdder sent = new LongAdder();
        LongAdder acked = new LongAdder();
        report(backend, producers, consumers, seconds, () -> {
            q.send(r, body, null);
            sent.increment();
        }, () -> {
            List<QueueFacet.QueueMessage> got = q.receive(r, batch, Duration.ofSeconds(60));
            for (QueueFacet.QueueMessage m : got) {
                if (q.ack(r, m.receipt())) {
                    acked.increment();
                }
            }
            if (got.isEmpty()) {
                Thread.sleep(1);
            }
        }, sent, acked);
        ((ResourceProvider) provider).deprovision(r);
    }

    /** The reference: the same pipeline on jnats directly (publish, pull fetch, ack), no provider in between. */
    private static void jnats(String url, String run, int producers, int consumers, int seconds, int batch, byte[] body) throws Exception {
        try (io.nats.client.Connection nc = Nats.connect(url)) {
            JetStreamManagement jsm = nc.jetStreamManagement();
            String stream = "ATRIUM_BENCH_" + run;
            String subject = "atrium-bench." + run;
            jsm.addStream(StreamConfiguration.builder().name(stream).subjects(subject).retentionPolicy(RetentionPolicy.WorkQueue)
                    .storageType(StorageType.File).build());
            try {
                JetStream js = nc.jetStream();
                LongAdder sent = new LongAdder();
                LongAdder acked = new LongAdder();
                PullSubscribeOptions options = PullSubscribeOptions.builder().durable("bench").build();
                ThreadLocal<JetStreamSubscription> subs = ThreadLocal.withInitial(() -> {
                    try {
                        return js.subscribe(subject, options);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                report("jnats", producers, consumers, seconds, () -> {
                    js.publish(subject, body);
                    sent.increment();
                }, () -> {
                    for (Message m : subs.get().fetch(batch, Duration.ofMillis(100))) {
                        m.ackSync(Duration.ofSeconds(5));
                        acked.increment();
                    }
                }, sent, acked);
            } finally {
                jsm.deleteStream(stream);
            }
        }
    }

    private static NatsQueueConfig natsConfig(String url, String run) {
        return new NatsQueueConfig() {
            public Class<? extends Annotation> annotationType() { return NatsQueueConfig.class; }
            public String url() { return url; }
            public int timeoutMillis() { return 5000; }
            public String streamPrefix() { return "ATRIUM_BENCH_Q_" + run + "_"; }
            public String subjectPrefix() { return "atrium-bench-q." + run + "."; }
            public int ackWaitSeconds() { return 30; }
        };
    }

    private static SchemaMigrations migrations(PGSimpleDataSource dataSource) {
        return bundle -> {
            try (java.io.InputStream in = PostgresQueue.class.getResourceAsStream("/db/migration/V1__queue.sql");
                    Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                return 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }

    private static BundleContext noBundle() {
        return (BundleContext) Proxy.newProxyInstance(QueueThroughput.class.getClassLoader(), new Class<?>[] { BundleContext.class },
                (proxy, method, a) -> null);
    }

    /** A fixed pool of connections (the server has one too; a connection per call would measure connecting). */
    static final class Pooled {
        private final java.util.concurrent.BlockingQueue<Connection> idle;

        Pooled(PGSimpleDataSource target, int size) throws Exception {
            idle = new java.util.concurrent.ArrayBlockingQueue<>(size);
            for (int i = 0; i < size; i++) {
                idle.add(target.getConnection());
            }
        }

        javax.sql.DataSource proxy() {
            return (javax.sql.DataSource) Proxy.newProxyInstance(QueueThroughput.class.getClassLoader(), new Class<?>[] { javax.sql.DataSource.class },
                    (p, method, args) -> {
                        if (!method.getName().equals("getConnection")) {
                            throw new UnsupportedOperationException(method.getName());
                        }
                        Connection c = idle.take();
                        return Proxy.newProxyInstance(QueueThroughput.class.getClassLoader(), new Class<?>[] { Connection.class },
                                (proxy, m, a) -> {
                                    if (m.getName().equals("close")) {
                                        idle.add(c);
                                        return null;
                                    }
                                    try {
                                        return m.invoke(c, a);
                                    } catch (java.lang.reflect.InvocationTargetException e) {
                                        throw e.getCause();
                                    }
                                });
                    });
        }
    }
}
