import java.lang.annotation.Annotation;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import org.osgi.framework.BundleContext;
import org.postgresql.ds.PGSimpleDataSource;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.resource.api.KvFacet;
import dev.atrium.resource.api.TestResourceContext;
import dev.atrium.resource.kv.internal.PostgresKv;
import dev.atrium.resource.kv.redis.internal.RedisKv;
import dev.atrium.resource.kv.redis.internal.RedisKvConfig;

/**
 * bench/resources.sh, in-process part: kv put and get operations per second through the provider API (KvFacet, no
 * HTTP) on PostgreSQL and on Redis, with THREADS callers for SECONDS each, values of VALUE_BYTES over KEYS keys.
 *
 *   java -cp <classpath> bench/KvThroughput.java <redis-url> <jdbc-url> <threads> <seconds> <value-bytes> <keys>
 */
public class KvThroughput {

    private static int KEYS;

    public static void main(String[] args) throws Exception {
        String redisUrl = args[0];
        String jdbcUrl = args[1];
        int threads = Integer.parseInt(args[2]);
        int seconds = Integer.parseInt(args[3]);
        int valueBytes = Integer.parseInt(args[4]);
        int keys = Integer.parseInt(args[5]);
        KEYS = keys;

        RedisKv redis = new RedisKv(redisConfig(redisUrl, threads));
        try {
            measure("redis", redis, new TestResourceContext(null, null, Map.of()), threads, seconds, valueBytes, keys);
        } finally {
            // the component's @Deactivate method, package-private as DS allows
            java.lang.reflect.Method close = RedisKv.class.getDeclaredMethod("close");
            close.setAccessible(true);
            close.invoke(redis);
        }
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(jdbcUrl);
        PostgresKv postgres = new PostgresKv(new PooledDataSource(dataSource, threads), migrations(dataSource), noBundle());
        measure("postgres", postgres, new TestResourceContext(dataSource, null, Map.of()), threads, seconds, valueBytes, keys);
    }

    private static void measure(String backend, Object provider, TestResourceContext resource, int threads, int seconds, int valueBytes,
            int keys) throws Exception {
        KvFacet kv = (KvFacet) provider;
        byte[] value = new byte[valueBytes];
        ThreadLocalRandom.current().nextBytes(value);
        for (int i = 0; i < keys; i++) {
            kv.put(resource, "key:" + i, value, null);
        }
        // warm-up, not counted
        run(threads, 2, i -> kv.get(resource, "key:" + i));
        double puts = run(threads, seconds, i -> kv.put(resource, "key:" + i, value, null));
        double gets = run(threads, seconds, i -> {
            if (kv.get(resource, "key:" + i).isEmpty()) {
                throw new IllegalStateException("key:" + i + " is missing");
            }
        });
        System.out.printf("inprocess %s put %.0f get %.0f%n", backend, puts, gets);
        ((dev.atrium.resource.api.ResourceProvider) provider).deprovision(resource);
    }

    interface Op {
        void run(int key) throws Exception;
    }

    private static double run(int threads, int seconds, Op op) throws Exception {
        LongAdder done = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch finished = new CountDownLatch(threads);
        List<Throwable> failures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                try {
                    while (!stop.get()) {
                        op.run(random.nextInt(KEYS));
                        done.increment();
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                } finally {
                    finished.countDown();
                }
            });
            worker.start();
        }
        long start = System.nanoTime();
        Thread.sleep(Duration.ofSeconds(seconds).toMillis());
        stop.set(true);
        finished.await();
        double elapsed = (System.nanoTime() - start) / 1e9;
        if (!failures.isEmpty()) {
            throw new IllegalStateException("an operation failed", failures.get(0));
        }
        return done.sum() / elapsed;
    }

    private static RedisKvConfig redisConfig(String url, int pool) {
        return (RedisKvConfig) Proxy.newProxyInstance(KvThroughput.class.getClassLoader(), new Class<?>[] { RedisKvConfig.class },
                (proxy, method, args) -> switch (method.getName()) {
                    case "url" -> url;
                    case "poolSize" -> pool;
                    case "timeoutMillis" -> 5000;
                    case "keyPrefix" -> "atrium-bench:kv:";
                    case "annotationType" -> (Class<? extends Annotation>) RedisKvConfig.class;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private static SchemaMigrations migrations(PGSimpleDataSource dataSource) {
        return bundle -> {
            try (var in = PostgresKv.class.getResourceAsStream("/db/migration/V1__kv.sql");
                    Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                return 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }

    private static BundleContext noBundle() {
        return (BundleContext) Proxy.newProxyInstance(KvThroughput.class.getClassLoader(), new Class<?>[] { BundleContext.class },
                (proxy, method, args) -> null);
    }

    /** A fixed pool of connections, as the server's DataSource is: a new connection per call would measure connecting. */
    static final class PooledDataSource extends PGSimpleDataSource {
        private final java.util.concurrent.BlockingQueue<Connection> idle;

        PooledDataSource(PGSimpleDataSource target, int size) throws Exception {
            idle = new java.util.concurrent.ArrayBlockingQueue<>(size);
            for (int i = 0; i < size; i++) {
                idle.add(target.getConnection());
            }
        }

        @Override
        public Connection getConnection() throws java.sql.SQLException {
            Connection c;
            try {
                c = idle.take();
            } catch (InterruptedException e) {
                throw new java.sql.SQLException(e);
            }
            Connection pooled = c;
            return (Connection) Proxy.newProxyInstance(KvThroughput.class.getClassLoader(), new Class<?>[] { Connection.class },
                    (proxy, method, args) -> {
                        if (method.getName().equals("close")) {
                            idle.add(pooled);
                            return null;
                        }
                        try {
                            return method.invoke(pooled, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    }
}
