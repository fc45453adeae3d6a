package dev.atrium.config.internal;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.FrameworkListener;
import org.slf4j.LoggerFactory;

/**
 * A start that stops moving ends the process with the reason. {@link StartWatch} covers a bundle whose start throws; a
 * start that blocks (the start-level thread waiting for ever inside an activator: bench/run.sh once saw a server with no
 * listener for 120 s after Aries' whiteboard began to start) would otherwise leave a process that is up and answers
 * nothing. When the framework has not reported STARTED within the deadline, every thread's stack goes to the log, the
 * start-level thread's first, and the JVM exits with {@value StartWatch#EXIT_STATUS}, so a supervisor starts it again.
 */
final class StartDeadline implements FrameworkListener, AutoCloseable {

    /** The framework property (or environment variable {@code ATRIUM_START_DEADLINE_SECONDS}); 0 turns it off. */
    static final String PROPERTY = "atrium.start.deadline.seconds";
    /** Nine times a start under three busy loops on 2 cores (about 20 s). */
    static final long DEFAULT_SECONDS = 180;

    private final IntConsumer exit;
    private final long seconds;
    private final java.util.function.BooleanSupplier started;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "atrium-start-deadline");
        t.setDaemon(true);
        return t;
    });
    private final ScheduledFuture<?> expiry;

    /**
     * @param started whether the start is over, asked at every start-level change: bnd's launcher starts the framework
     *     at a low level (STARTED then) and raises it afterwards, so STARTED alone does not say the bundles started
     */
    StartDeadline(long seconds, java.util.function.BooleanSupplier started, IntConsumer exit) {
        this.exit = exit;
        this.seconds = seconds;
        this.started = started;
        this.expiry = seconds > 0 ? timer.schedule(this::expired, seconds, TimeUnit.SECONDS) : null;
    }

    /** The deadline named by {@code property} (a framework property), else {@code env}, else the default. */
    static long seconds(String property, String env) {
        for (String value : new String[] {property, env}) {
            if (value != null && !value.isBlank()) {
                try {
                    return Long.parseLong(value.trim());
                } catch (NumberFormatException e) {
                    LoggerFactory.getLogger(StartDeadline.class)
                            .warn(
                                    "{} is not a number of seconds: '{}'; the deadline is {} s",
                                    PROPERTY,
                                    value,
                                    DEFAULT_SECONDS);
                }
            }
        }
        return DEFAULT_SECONDS;
    }

    @Override
    public void frameworkEvent(FrameworkEvent event) {
        if ((event.getType() == FrameworkEvent.STARTED || event.getType() == FrameworkEvent.STARTLEVEL_CHANGED)
                && started.getAsBoolean()) {
            close();
        }
    }

    @Override
    public void close() {
        if (expiry != null) {
            expiry.cancel(false);
        }
        timer.shutdownNow();
    }

    private void expired() {
        LoggerFactory.getLogger(StartDeadline.class)
                .error(
                        "the server cannot start: the framework did not finish starting within {} s ({} to change it);"
                                + " where every thread was:\n{}exiting with {}",
                        seconds,
                        PROPERTY,
                        threads(),
                        StartWatch.EXIT_STATUS);
        exit.accept(StartWatch.EXIT_STATUS);
    }

    /**
     * Whether the framework's start level has reached the highest of its bundles' (so every bundle that is to start
     * has been started), or it stops.
     */
    static boolean started(org.osgi.framework.BundleContext context) {
        try {
            int highest = 0;
            for (org.osgi.framework.Bundle b : context.getBundles()) {
                org.osgi.framework.startlevel.BundleStartLevel level =
                        b.adapt(org.osgi.framework.startlevel.BundleStartLevel.class);
                if (level != null) {
                    highest = Math.max(highest, level.getStartLevel());
                }
            }
            org.osgi.framework.Bundle system = context.getBundle(0);
            boolean running = system.getState() == org.osgi.framework.Bundle.STARTING
                    || system.getState() == org.osgi.framework.Bundle.ACTIVE;
            int level = system.adapt(org.osgi.framework.startlevel.FrameworkStartLevel.class)
                    .getStartLevel();
            return !running || level >= highest;
        } catch (IllegalStateException stopping) {
            return true;
        }
    }

    /** Every thread's whole stack and the locks it waits for, the start-level thread's first. */
    static String threads() {
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        StringBuilder first = new StringBuilder();
        StringBuilder rest = new StringBuilder();
        for (ThreadInfo info : bean.dumpAllThreads(true, true)) {
            StringBuilder out = info.getThreadName().equals("FelixStartLevel") ? first : rest;
            out.append('"').append(info.getThreadName()).append("\" ").append(info.getThreadState());
            if (info.getLockName() != null) {
                out.append(" on ").append(info.getLockName());
            }
            if (info.getLockOwnerName() != null) {
                out.append(" held by \"").append(info.getLockOwnerName()).append('"');
            }
            out.append('\n');
            for (StackTraceElement frame : info.getStackTrace()) {
                out.append("    at ").append(frame).append('\n');
            }
        }
        long[] deadlocked = bean.findDeadlockedThreads();
        if (deadlocked != null) {
            first.insert(0, "deadlocked threads: " + deadlocked.length + "\n");
        }
        return first.append(rest).toString();
    }
}
