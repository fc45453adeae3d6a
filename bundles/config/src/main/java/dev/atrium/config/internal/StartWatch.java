package dev.atrium.config.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleException;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.FrameworkListener;
import org.slf4j.LoggerFactory;

/**
 * A start either finishes or ends the process with a reason. A bundle whose start failed while the framework started
 * (its activator threw: Aries' whiteboard once did, with a {@code ConcurrentModificationException}, on a machine at
 * load 10-20) is started again, {@value #ATTEMPTS} times at most, once the framework has reached its start level; one
 * that still does not start ends the JVM with {@value #EXIT_STATUS} after naming it, so a supervisor restarts the server
 * instead of keeping one that answers 503 for ever. The shutdown hook ({@link StopOnSignal}) stops the rest cleanly.
 */
final class StartWatch implements FrameworkListener {

    static final int ATTEMPTS = 3;
    /** EX_SOFTWARE of sysexits.h: the server could not start what it is made of. */
    static final int EXIT_STATUS = 70;

    private final IntConsumer exit;
    private final long pauseMillis;
    /** The bundles whose start failed, with the last failure, until the framework has started. */
    private final Map<Bundle, Throwable> failed = new LinkedHashMap<>();

    private boolean started;

    /**
     * @param exit        ends the process with a status ({@code System::exit})
     * @param pauseMillis how long to wait after a failed attempt, for what raced the start to settle
     */
    StartWatch(IntConsumer exit, long pauseMillis) {
        this.exit = exit;
        this.pauseMillis = pauseMillis;
    }

    @Override
    public void frameworkEvent(FrameworkEvent event) {
        if (event.getType() == FrameworkEvent.ERROR
                && event.getBundle() != null
                && event.getBundle().getBundleId() != 0) {
            synchronized (this) {
                if (!started) {
                    failed.put(event.getBundle(), event.getThrowable());
                }
            }
        } else if (event.getType() == FrameworkEvent.STARTED) {
            Map<Bundle, Throwable> again;
            synchronized (this) {
                started = true;
                again = new LinkedHashMap<>(failed);
                failed.clear();
            }
            if (!again.isEmpty()) {
                // not on the event thread, which the bundles started again need for their own events
                Thread retry = new Thread(() -> startAgain(again), "atrium-start-watch");
                retry.setDaemon(true);
                retry.start();
            }
        }
    }

    void startAgain(Map<Bundle, Throwable> failures) {
        List<Bundle> left = new ArrayList<>(failures.keySet());
        for (int attempt = 1; attempt <= ATTEMPTS && !left.isEmpty(); attempt++) {
            List<Bundle> still = new ArrayList<>();
            for (Bundle b : left) {
                if (b.getState() == Bundle.ACTIVE || b.getState() == Bundle.UNINSTALLED) {
                    continue;
                }
                LoggerFactory.getLogger(StartWatch.class)
                        .warn(
                                "{} did not start ({}); starting it again, attempt {} of {}",
                                b.getSymbolicName(),
                                failures.get(b),
                                attempt,
                                ATTEMPTS);
                try {
                    b.start();
                } catch (BundleException | IllegalStateException | SecurityException e) {
                    failures.put(b, e.getCause() != null ? e.getCause() : e);
                    still.add(b);
                }
            }
            left = still;
            if (!left.isEmpty() && attempt < ATTEMPTS) {
                try {
                    Thread.sleep(pauseMillis);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
        if (!left.isEmpty()) {
            StringBuilder why = new StringBuilder();
            for (Bundle b : left) {
                why.append(why.length() == 0 ? "" : "; ")
                        .append(b.getSymbolicName())
                        .append(": ")
                        .append(failures.get(b));
            }
            LoggerFactory.getLogger(StartWatch.class)
                    .error(
                            "the server cannot start: {} did not start after {} attempts ({}); exiting with {}",
                            left.size() == 1 ? "a bundle" : left.size() + " bundles",
                            ATTEMPTS,
                            why,
                            EXIT_STATUS);
            exit.accept(EXIT_STATUS);
        }
    }
}
