package dev.atrium.config.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.launch.Framework;

/** On a real Felix framework: a bundle whose activator throws while the framework starts. */
class StartWatchTest {

    /** How many more starts of {@link Flaky} throw. */
    static final AtomicInteger FAILURES_LEFT = new AtomicInteger();

    public static final class Flaky implements BundleActivator {
        @Override
        public void start(BundleContext context) {
            if (FAILURES_LEFT.getAndDecrement() > 0) {
                throw new java.util.ConcurrentModificationException("raced the start");
            }
        }

        @Override
        public void stop(BundleContext context) {}
    }

    @TempDir
    Path tmp;

    @Test
    void aBundleWhoseStartFailedWhileTheFrameworkStartedIsStartedAgain() throws Exception {
        FAILURES_LEFT.set(1);
        CompletableFuture<Integer> exited = new CompletableFuture<>();
        Framework framework = start(exited::complete);
        try {
            Bundle flaky = flaky(framework);
            for (long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    flaky.getState() != Bundle.ACTIVE;
                    Thread.sleep(20)) {
                assertTrue(System.nanoTime() < until, "the bundle was not started again");
            }
            assertTrue(!exited.isDone(), "a start that succeeded the second time does not end the process");
        } finally {
            framework.stop();
            framework.waitForStop(10_000);
        }
    }

    @Test
    void aBundleThatNeverStartsEndsTheProcessWithAStatusInsteadOfLeavingAServerThatIsNeverReady() throws Exception {
        FAILURES_LEFT.set(Integer.MAX_VALUE);
        CompletableFuture<Integer> exited = new CompletableFuture<>();
        Framework framework = start(exited::complete);
        try {
            assertEquals(StartWatch.EXIT_STATUS, exited.get(10, TimeUnit.SECONDS));
            assertEquals(Bundle.RESOLVED, flaky(framework).getState());
        } finally {
            framework.stop();
            framework.waitForStop(10_000);
        }
    }

    private Framework start(java.util.function.IntConsumer exit) throws Exception {
        Framework framework = TestFrameworks.initialised(tmp);
        framework.getBundleContext().addFrameworkListener(new StartWatch(exit, 100));
        TestFrameworks.installStarted(framework, tmp, "flaky", Flaky.class);
        framework.start();
        return framework;
    }

    private static Bundle flaky(Framework framework) {
        for (Bundle b : framework.getBundleContext().getBundles()) {
            if ("flaky".equals(b.getSymbolicName())) {
                return b;
            }
        }
        throw new AssertionError("no flaky bundle");
    }
}
