package dev.atrium.kernel.api;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one way a bundle makes its threads. They are named, so that a thread dump says whose each one is, and daemon
 * threads, so that one a bundle forgot can never hold the JVM. Repeated work survives a run that fails.
 *
 * <p>Each bundle makes its own executors with these and shuts them down when its component deactivates. No pool is
 * shared across bundles: a pooled thread that ran a task of an updated bundle would keep that revision's class loader
 * reachable, through its context class loader and its thread locals.
 */
public final class NamedThreads {

    private NamedThreads() {}

    /** Daemon threads named {@code name-1}, {@code name-2}, … in the order they are made. */
    public static ThreadFactory factory(String name) {
        AtomicInteger made = new AtomicInteger();
        return work -> {
            Thread t = new Thread(work, name + "-" + made.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** A one-thread scheduler whose cancelled tasks leave its queue at once. */
    public static ScheduledExecutorService scheduler(String name) {
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, factory(name));
        scheduler.setRemoveOnCancelPolicy(true);
        return scheduler;
    }

    /**
     * Runs {@code work} on {@code scheduler} after {@code initialDelay}, then {@code delay} after each run ends. A run
     * that throws goes to the thread's uncaught-exception handler, and the next run still comes: a plain
     * {@code scheduleWithFixedDelay} stops for good at the first exception, and says nothing.
     */
    public static void repeat(
            ScheduledExecutorService scheduler, Runnable work, Duration initialDelay, Duration delay) {
        Runnable guarded = () -> {
            try {
                work.run();
            } catch (RuntimeException | LinkageError e) {
                Thread current = Thread.currentThread();
                current.getUncaughtExceptionHandler().uncaughtException(current, e);
            }
        };
        var unused = scheduler.scheduleWithFixedDelay(
                guarded, initialDelay.toNanos(), delay.toNanos(), TimeUnit.NANOSECONDS);
    }
}
