package dev.atrium.config.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.apache.felix.framework.FrameworkFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
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
        Framework framework = new FrameworkFactory()
                .newFramework(Map.of(
                        Constants.FRAMEWORK_STORAGE,
                        tmp.resolve("cache").toString(),
                        Constants.FRAMEWORK_STORAGE_CLEAN,
                        Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT,
                        Constants.FRAMEWORK_BUNDLE_PARENT,
                        Constants.FRAMEWORK_BUNDLE_PARENT_APP,
                        // the activator is this test's class
                        Constants.FRAMEWORK_BOOTDELEGATION,
                        "dev.atrium.config.internal"));
        framework.init();
        framework.getBundleContext().addFrameworkListener(new StartWatch(exit, 100));
        Path jar = tmp.resolve("flaky.jar");
        Manifest manifest = new Manifest();
        Attributes a = manifest.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.putValue(Constants.BUNDLE_MANIFESTVERSION, "2");
        a.putValue(Constants.BUNDLE_SYMBOLICNAME, "flaky");
        a.putValue(Constants.BUNDLE_ACTIVATOR, Flaky.class.getName());
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream j = new JarOutputStream(out, manifest)) {
            // a manifest is all the bundle has
        }
        framework.getBundleContext().installBundle(jar.toUri().toString()).start();
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
