package dev.atrium.kernel.internal.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.framework.startlevel.FrameworkStartLevel;

/** Readiness on a real Felix framework whose start is held at level 2 of its beginning level 3. */
class ReadinessWhileStartingTest {

    static final CountDownLatch RELEASE = new CountDownLatch(1);

    public static final class Held implements BundleActivator {
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
    void whileTheFrameworkRaisesItsStartLevelReadinessSaysSoAndWalksNothing() throws Exception {
        Framework framework = new FrameworkFactory()
                .newFramework(Map.of(
                        Constants.FRAMEWORK_STORAGE,
                        tmp.resolve("cache").toString(),
                        Constants.FRAMEWORK_STORAGE_CLEAN,
                        Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT,
                        Constants.FRAMEWORK_BUNDLE_PARENT,
                        Constants.FRAMEWORK_BUNDLE_PARENT_APP,
                        Constants.FRAMEWORK_BOOTDELEGATION,
                        Held.class.getPackageName(),
                        Constants.FRAMEWORK_BEGINNING_STARTLEVEL,
                        "3"));
        framework.init();
        Bundle held = framework
                .getBundleContext()
                .installBundle(bundle("held").toUri().toString());
        held.adapt(BundleStartLevel.class).setStartLevel(2);
        held.start();
        Thread starting = new Thread(() -> {
            try {
                framework.start();
            } catch (org.osgi.framework.BundleException e) {
                throw new IllegalStateException(e);
            }
        });
        starting.start();
        FrameworkStartLevel level = framework.adapt(FrameworkStartLevel.class);
        try {
            waitFor(() -> level.getStartLevel() == 2 && held.getState() == Bundle.STARTING);
            // no component runtime and no whiteboard: a walk would have to say so, or fail
            Readiness readiness = new Readiness(framework.getBundleContext(), null);
            assertEquals(List.of("the framework is starting (start level 2 of 3)"), readiness.notReady());

            RELEASE.countDown();
            waitFor(() -> level.getStartLevel() == 3 && framework.getState() == Bundle.ACTIVE);
            waitFor(() -> !readiness.notReady().get(0).startsWith("the framework is starting"));
            assertEquals(List.of("the JAX-RS whiteboard is not running"), readiness.notReady());
            readiness.deactivate();
        } finally {
            RELEASE.countDown();
            starting.join(10_000);
            framework.stop();
            framework.waitForStop(10_000);
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out");
            Thread.sleep(10);
        }
    }

    /** A bundle that is only a manifest naming {@link Held} as its activator. */
    private Path bundle(String name) throws Exception {
        Path jar = tmp.resolve(name + ".jar");
        Manifest manifest = new Manifest();
        Attributes a = manifest.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.putValue(Constants.BUNDLE_MANIFESTVERSION, "2");
        a.putValue(Constants.BUNDLE_SYMBOLICNAME, name);
        a.putValue(Constants.BUNDLE_ACTIVATOR, Held.class.getName());
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream j = new JarOutputStream(out, manifest)) {
            // a manifest is all the bundle has
        }
        return jar;
    }
}
