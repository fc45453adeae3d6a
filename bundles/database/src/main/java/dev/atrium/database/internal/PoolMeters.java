package dev.atrium.database.internal;

import com.zaxxer.hikari.HikariPoolMXBean;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToIntFunction;

/** The connection pool's figures for the metrics capability: connections in use, idle, waited for, and waits that failed. */
final class PoolMeters implements MeterBinder {

    private final WatchedPool pool;
    private final String kind;

    PoolMeters(WatchedPool pool, String kind) {
        this.pool = pool;
        this.kind = kind;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        gauge(
                registry,
                "atrium.db.pool.connections.active",
                "Connections in use",
                HikariPoolMXBean::getActiveConnections);
        gauge(
                registry,
                "atrium.db.pool.connections.idle",
                "Connections idle in the pool",
                HikariPoolMXBean::getIdleConnections);
        gauge(
                registry,
                "atrium.db.pool.connections.open",
                "Connections the pool holds open",
                HikariPoolMXBean::getTotalConnections);
        gauge(
                registry,
                "atrium.db.pool.connections.waiting",
                "Threads waiting for a connection",
                HikariPoolMXBean::getThreadsAwaitingConnection);
        FunctionCounter.builder("atrium.db.pool.connection.timeouts", pool, WatchedPool::timeouts)
                .description("Waits for a connection that ended without one")
                .tag("database", kind)
                .register(registry);
    }

    private void gauge(
            MeterRegistry registry, String name, String description, ToIntFunction<HikariPoolMXBean> figure) {
        Gauge.builder(name, pool, p -> {
                    HikariPoolMXBean b = p.figures();
                    return b == null ? Double.NaN : figure.applyAsInt(b);
                })
                .description(description)
                .tag("database", kind)
                .register(registry);
    }
}
