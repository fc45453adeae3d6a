package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;

/**
 * A reset of the operator's only property of a PID, one the environment (here a framework property) also sets, answers
 * with the environment's value. FileInstall deletes the configuration and dev.atrium.config makes it again when
 * ConfigAdmin tells it so, on ConfigAdmin's event thread; a busy machine delays that. This test holds the event thread,
 * so the answer would show the component's default if it did not wait for the configuration made again.
 */
@ResourceLock(InFrameworkRuntime.LOCK)
class ConfigurationResetTest {

    private static final String PID = "dev.atrium.threads";
    private static final String PROPERTY = "shareDelayMaxSeconds";
    private static final String HOLD_PID = "itest.hold-configuration-events";

    @Test
    void resettingThePropertyTheEnvironmentAlsoSetsAnswersWithTheEnvironmentsValue(@TempDir Path tmp) throws Exception {
        try (InFrameworkRuntime runtime =
                InFrameworkRuntime.start(tmp.resolve("runtime"), Map.of("atrium.threads." + PROPERTY, "30"))) {
            runtime.assertHealthy(60_000);
            Http operator = new Http(
                    runtime.base(),
                    Files.readString(runtime.data.resolve("operator.token")).trim());
            assertSource(operator.get("/admin/config/" + PID), "environment", 30);
            Http.Reply put = operator.put("/admin/config/" + PID, Map.of("properties", Map.of(PROPERTY, 40)));
            assertEquals(200, put.status(), put.body());
            assertSource(put, "operator", 40);

            // a ConfigAdmin client of the runtime's own (the test's class path has another copy of the API)
            Bundle config = runtime.bundle("dev.atrium.config");
            BundleContext context = config.getBundleContext();
            Class<?> listenerType = config.loadClass("org.osgi.service.cm.ConfigurationListener");
            Class<?> adminType = config.loadClass("org.osgi.service.cm.ConfigurationAdmin");
            Class<?> configurationType = config.loadClass("org.osgi.service.cm.Configuration");
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Object listener = Proxy.newProxyInstance(
                    listenerType.getClassLoader(), new Class<?>[] {listenerType}, (proxy, method, args) -> {
                        switch (method.getName()) {
                            case "configurationEvent" -> {
                                Object pid =
                                        args[0].getClass().getMethod("getPid").invoke(args[0]);
                                if (HOLD_PID.equals(pid)) {
                                    holding.countDown();
                                    release.await(20, TimeUnit.SECONDS);
                                }
                                return null;
                            }
                            case "hashCode" -> {
                                return System.identityHashCode(proxy);
                            }
                            case "equals" -> {
                                return proxy == args[0];
                            }
                            default -> {
                                return "configuration events held";
                            }
                        }
                    });
            ServiceRegistration<?> registration =
                    context.registerService(listenerType.getName(), listener, new Hashtable<>());
            ServiceReference<?> adminReference = context.getServiceReference(adminType.getName());
            Object admin = context.getService(adminReference);
            Object hold = adminType
                    .getMethod("getConfiguration", String.class, String.class)
                    .invoke(admin, HOLD_PID, "?");
            try {
                // ConfigAdmin sends its events one after another from one thread: this one holds those behind it
                configurationType
                        .getMethod("update", java.util.Dictionary.class)
                        .invoke(hold, new Hashtable<>(Map.of("held", "yes")));
                assertTrue(holding.await(10, TimeUnit.SECONDS), "the event thread is held");
                Thread releaser = new Thread(() -> {
                    try {
                        Thread.sleep(2_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    release.countDown();
                });
                releaser.start();
                long started = System.nanoTime();
                Http.Reply reset = operator.delete("/admin/config/" + PID + "/" + PROPERTY);
                long tookMillis = (System.nanoTime() - started) / 1_000_000;
                assertEquals(200, reset.status(), reset.body());
                assertSource(reset, "environment", 30);
                assertTrue(tookMillis >= 1_000, "the answer waited for the configuration made again: " + tookMillis);
                releaser.join();
            } finally {
                release.countDown();
                registration.unregister();
                configurationType.getMethod("delete").invoke(hold);
                context.ungetService(adminReference);
            }
            assertSource(operator.get("/admin/config/" + PID), "environment", 30);
        }
    }

    private static void assertSource(Http.Reply reply, String source, long value) {
        assertEquals(200, reply.status(), reply.body());
        JsonNode property = null;
        for (JsonNode p : reply.get("config").get("properties")) {
            if (PROPERTY.equals(p.path("name").asText())) {
                property = p;
            }
        }
        assertTrue(property != null, reply.body());
        assertEquals(source, property.path("source").asText(), property.toString());
        assertEquals(value, property.path("value").asLong(), property.toString());
    }
}
