package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;

/**
 * Boots the full runtime in this JVM, from exactly the bundles the exported {@code atrium.jar} launches, and
 * fails if any bundle is not ACTIVE or any Declarative Services component is not satisfied.
 */
@ResourceLock(InFrameworkRuntime.LOCK)
class RuntimeBootTest {

    @Test
    void everyBundleIsActiveAndEveryComponentSatisfied(@TempDir Path tmp) throws Exception {
        try (InFrameworkRuntime runtime = InFrameworkRuntime.start(tmp)) {
            assertTrue(runtime.installed.size() > 20, "the runtime has its bundles: " + runtime.installed);
            List<String> problems = List.of("not checked yet");
            long deadline = System.currentTimeMillis() + 60_000;
            while (System.currentTimeMillis() < deadline && !problems.isEmpty()) {
                Thread.sleep(200);
                problems = runtime.problems();
            }
            assertEquals(List.of(), problems, "every bundle ACTIVE, every DS component satisfied");
            HttpResponse<String> health = runtime.awaitHealthy(60_000);
            assertEquals(200, health.statusCode(), health.body());

            Bundle memories = runtime.bundle("dev.atrium.memories");
            memories.stop(Bundle.STOP_TRANSIENT); // as if it had failed: it is still meant to run
            HttpResponse<String> degraded = runtime.health();
            assertEquals(503, degraded.statusCode(), degraded.body());
            assertTrue(
                    degraded.body().contains("\"SERVICE_UNAVAILABLE\"")
                            && degraded.body().contains("dev.atrium.memories is not active"),
                    degraded.body());
            memories.start();
            health = runtime.awaitHealthy(30_000);
            assertEquals(200, health.statusCode(), health.body());

            // readiness is worked out on change, not per probe: a service event alone (an Atrium resource that needs a
            // missing extension) must show on the very next probe, and its removal likewise
            Bundle threads = runtime.bundle("dev.atrium.threads");
            ServiceRegistration<Object> unservable = threads.getBundleContext()
                    .registerService(
                            Object.class,
                            new Object(),
                            new Hashtable<>(Map.of(
                                    "osgi.jaxrs.resource",
                                    "true",
                                    "component.name",
                                    "unservable-probe",
                                    "osgi.jaxrs.extension.select",
                                    "(osgi.jaxrs.name=no-such-extension)")));
            degraded = runtime.health();
            assertEquals(503, degraded.statusCode(), degraded.body());
            // the whiteboard may still be taking it in (then it says so); then it names the resource
            for (long until = System.currentTimeMillis() + 2_000;
                    System.currentTimeMillis() < until && !degraded.body().contains("unservable-probe");
                    Thread.sleep(20)) {
                degraded = runtime.health();
                assertEquals(503, degraded.statusCode(), degraded.body());
            }
            assertTrue(degraded.body().contains("unservable-probe is not served"), degraded.body());
            unservable.unregister();
            health = runtime.awaitHealthy(30_000);
            assertEquals(200, health.statusCode(), health.body());

            // a resource the whiteboard neither serves nor lists as failed (here: one aimed at another whiteboard) is
            // registered again by readiness once the whiteboard has been quiet for its grace time
            String reminders = "dev.atrium.reminders.internal.ReminderResource";
            BundleContext context = runtime.framework.getBundleContext();
            ServiceReference<?> cmRef =
                    context.getAllServiceReferences("org.osgi.service.cm.ConfigurationAdmin", null)[0];
            Object cm = context.getService(cmRef);
            Object config = invoke(cm, "getConfiguration", reminders, "?");
            invoke(
                    config,
                    "update",
                    new Hashtable<>(Map.of("osgi.jaxrs.whiteboard.target", "(atrium.no.such=whiteboard)")));
            long first = -1;
            for (long until = System.currentTimeMillis() + 10_000;
                    System.currentTimeMillis() < until && first < 0;
                    Thread.sleep(50)) {
                ServiceReference<?>[] refs = context.getAllServiceReferences(
                        null, "(&(component.name=" + reminders + ")(osgi.jaxrs.whiteboard.target=*))");
                first = refs == null ? -1 : (Long) refs[0].getProperty("service.id");
            }
            assertTrue(first >= 0, "the reminders resource was registered for another whiteboard");
            long current = first;
            for (long until = System.currentTimeMillis() + 15_000;
                    System.currentTimeMillis() < until && current == first;
                    Thread.sleep(100)) {
                degraded = runtime.health();
                assertEquals(503, degraded.statusCode(), degraded.body());
                ServiceReference<?>[] refs =
                        context.getAllServiceReferences(null, "(component.name=" + reminders + ")");
                current = refs == null ? first : (Long) refs[0].getProperty("service.id");
            }
            assertTrue(
                    current != first,
                    "readiness registered the unlisted resource again (service " + first + " stayed)");
            invoke(config, "delete");
            context.ungetService(cmRef);
            health = runtime.awaitHealthy(30_000);
            assertEquals(200, health.statusCode(), health.body());
        }
    }

    /** Calls a method of a framework-side object by name and argument count (its API is not on this class path). */
    private static Object invoke(Object target, String name, Object... args) throws Exception {
        for (java.lang.reflect.Method m : target.getClass().getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == args.length) {
                m.setAccessible(true);
                return m.invoke(target, args);
            }
        }
        throw new IllegalStateException(target.getClass() + " has no " + name + "/" + args.length);
    }
}
