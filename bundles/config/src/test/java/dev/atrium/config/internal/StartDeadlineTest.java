package dev.atrium.config.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.launch.Framework;

/** On a real Felix framework: a start that blocks inside an activator, and one that finishes. */
class StartDeadlineTest {

    static final CountDownLatch RELEASE = new CountDownLatch(1);

    public static final class Stuck implements BundleActivator {
        @Override
        public void start(BundleContext context) throws InterruptedException {
            RELEASE.await(30, TimeUnit.SECONDS);
        }

        @Override
        public void stop(BundleContext context) {}
    }

    @TempDir
    Path tmp;

    @Test
    void aStartThatBlocksInAnActivatorEndsTheProcessWithItsStatusNamingWhereItWaits() throws Exception {
        CompletableFuture<Integer> exited = new CompletableFuture<>();
        CompletableFuture<String> threads = new CompletableFuture<>();
        Framework framework = framework(true);
        StartDeadline deadline =
                new StartDeadline(1, () -> StartDeadline.started(framework.getBundleContext()), status -> {
                    threads.complete(StartDeadline.threads());
                    exited.complete(status);
                });
        framework.getBundleContext().addFrameworkListener(deadline);
        Thread starting = new Thread(() -> {
            try {
                framework.start();
            } catch (org.osgi.framework.BundleException e) {
                throw new IllegalStateException(e);
            }
        });
        starting.start();
        try {
            assertEquals(StartWatch.EXIT_STATUS, exited.get(20, TimeUnit.SECONDS));
            String dump = threads.get();
            assertTrue(dump.startsWith("\"FelixStartLevel\""), "the start-level thread comes first:\n" + dump);
            assertTrue(dump.contains(Stuck.class.getName() + ".start"), "the blocking activator is named:\n" + dump);
        } finally {
            RELEASE.countDown();
            deadline.close();
            starting.join(10_000);
            framework.stop();
            framework.waitForStop(10_000);
        }
    }

    @Test
    void aStartThatFinishesDisarmsTheDeadline() throws Exception {
        CompletableFuture<Integer> exited = new CompletableFuture<>();
        Framework framework = framework(false);
        StartDeadline deadline =
                new StartDeadline(1, () -> StartDeadline.started(framework.getBundleContext()), exited::complete);
        framework.getBundleContext().addFrameworkListener(deadline);
        framework.start();
        try {
            Thread.sleep(2_000);
            assertFalse(exited.isDone(), "a framework that started is left alone");
        } finally {
            deadline.close();
            framework.stop();
            framework.waitForStop(10_000);
        }
    }

    @Test
    void theDeadlineIsTheFrameworkPropertyElseTheEnvironmentElseThreeMinutes() {
        assertEquals(30, StartDeadline.seconds("30", "60"));
        assertEquals(60, StartDeadline.seconds(null, "60"));
        assertEquals(0, StartDeadline.seconds(" 0 ", null));
        assertEquals(StartDeadline.DEFAULT_SECONDS, StartDeadline.seconds("soon", null));
        assertEquals(180, StartDeadline.seconds(null, ""));
    }

    private Framework framework(boolean withStuckBundle) throws Exception {
        Framework framework = TestFrameworks.initialised(tmp);
        if (withStuckBundle) {
            TestFrameworks.installStarted(framework, tmp, "stuck", Stuck.class);
        }
        return framework;
    }
}
