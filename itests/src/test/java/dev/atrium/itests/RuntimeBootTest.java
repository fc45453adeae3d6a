package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.jar.JarFile;

import org.apache.felix.framework.FrameworkFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.startlevel.BundleStartLevel;

/**
 * Boots the full runtime in this JVM, from exactly the bundles the exported {@code atrium.jar} launches, and
 * fails if any bundle is not ACTIVE or any Declarative Services component is not satisfied.
 */
class RuntimeBootTest {

    private static final int UNSATISFIED_CONFIGURATION = 1;
    private static final int UNSATISFIED_REFERENCE = 2;
    private static final int FAILED_ACTIVATION = 16;

    @Test
    void everyBundleIsActiveAndEveryComponentSatisfied(@TempDir Path tmp) throws Exception {
        Path jar = Path.of(System.getProperty("atrium.jar"));
        List<Path> bundles = new ArrayList<>();
        Properties launch = new Properties();
        try (JarFile exported = new JarFile(jar.toFile())) {
            try (InputStream in = exported.getInputStream(exported.getEntry("launcher.properties"))) {
                launch.load(in);
            }
            for (String entry : launch.getProperty("launch.bundles").split(",")) {
                Path target = tmp.resolve("bundles").resolve(Path.of(entry.trim()).getFileName().toString());
                Files.createDirectories(target.getParent());
                try (InputStream in = exported.getInputStream(exported.getEntry(entry.trim()))) {
                    Files.copy(in, target);
                }
                bundles.add(target);
            }
        }
        assertTrue(bundles.size() > 20, "the runtime has its bundles: " + bundles);

        try (TestDatabase db = TestDatabase.create()) {
            int port = AtriumServer.freePort();
            Map<String, String> config = new HashMap<>();
            for (String key : launch.stringPropertyNames()) {
                if (!key.startsWith("launch.")) {
                    config.put(key, launch.getProperty(key));
                }
            }
            config.put(Constants.FRAMEWORK_STORAGE, tmp.resolve("cache").toString());
            config.put(Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT);
            config.put(Constants.FRAMEWORK_BEGINNING_STARTLEVEL, "20");
            config.put("org.osgi.service.http.port", "" + port);
            config.put("atrium.data", tmp.resolve("data").toString());
            config.put("felix.fileinstall.dir", Files.createDirectories(tmp.resolve("data/deploy")).toString());
            config.put("atrium.db.url", db.url());

            // Framework threads inherit this thread's context class loader; give them none of the test's classes,
            // as the real launcher does.
            ClassLoader testLoader = Thread.currentThread().getContextClassLoader();
            Thread.currentThread().setContextClassLoader(ClassLoader.getPlatformClassLoader());
            Framework framework = new FrameworkFactory().newFramework(config);
            framework.init();
            BundleContext context = framework.getBundleContext();
            List<Bundle> installed = new ArrayList<>();
            for (Path b : bundles) {
                installed.add(context.installBundle(b.toUri().toString()));
            }
            for (Bundle b : installed) {
                if (b.getHeaders().get(Constants.FRAGMENT_HOST) == null) {
                    b.adapt(BundleStartLevel.class).setStartLevel(b.getSymbolicName().startsWith("slf4j.") ? 1 : 10);
                    b.start();
                }
            }
            framework.start();
            try {
                List<String> problems = List.of("not checked yet");
                long deadline = System.currentTimeMillis() + 60_000;
                while (System.currentTimeMillis() < deadline && !problems.isEmpty()) {
                    Thread.sleep(200);
                    problems = problems(context);
                }
                assertEquals(List.of(), problems, "every bundle ACTIVE, every DS component satisfied");

                HttpResponse<String> health = null;
                while (System.currentTimeMillis() < deadline && (health == null || health.statusCode() != 200)) {
                    Thread.sleep(100);
                    health = HttpClient.newHttpClient().send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build(),
                            HttpResponse.BodyHandlers.ofString());
                }
                assertEquals(200, health.statusCode(), health.body());

                Bundle memories = installed.stream().filter(b -> b.getSymbolicName().equals("dev.atrium.memories")).findFirst().orElseThrow();
                memories.stop(Bundle.STOP_TRANSIENT); // as if it had failed: it is still meant to run
                HttpResponse<String> degraded = health(port);
                assertEquals(503, degraded.statusCode(), degraded.body());
                assertTrue(degraded.body().contains("\"SERVICE_UNAVAILABLE\"") && degraded.body().contains("dev.atrium.memories is not active"),
                        degraded.body());
                memories.start();
                health = health(port);
                while (System.currentTimeMillis() < deadline + 30_000 && health.statusCode() != 200) {
                    Thread.sleep(100);
                    health = health(port);
                }
                assertEquals(200, health.statusCode(), health.body());
            } finally {
                framework.stop();
                framework.waitForStop(30_000);
                Thread.currentThread().setContextClassLoader(testLoader);
            }
        }
    }

    private static HttpResponse<String> health(int port) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Bundles that are not ACTIVE (fragments: not RESOLVED) and DS components that are not satisfied or active. */
    private static List<String> problems(BundleContext context) throws Exception {
        List<String> problems = new ArrayList<>();
        for (Bundle b : context.getBundles()) {
            boolean fragment = b.getHeaders().get(Constants.FRAGMENT_HOST) != null;
            int expected = fragment ? Bundle.RESOLVED : Bundle.ACTIVE;
            if (b.getState() != expected) {
                problems.add("bundle " + b.getSymbolicName() + " is in state " + b.getState());
            }
        }
        // getAll…: the test's class space shares no SCR API with the framework, so skip the assignability filter
        ServiceReference<?>[] scrRefs = context.getAllServiceReferences("org.osgi.service.component.runtime.ServiceComponentRuntime", null);
        ServiceReference<?> ref = scrRefs == null ? null : scrRefs[0];
        if (ref == null) {
            problems.add("no ServiceComponentRuntime");
            return problems;
        }
        // SCR's API classes live in the framework, not on this test's class path: read its DTOs reflectively.
        Object scr = context.getService(ref);
        try {
            Object descriptions = method(scr, "getComponentDescriptionDTOs").invoke(scr, (Object) new Bundle[0]);
            for (Object d : (Iterable<?>) descriptions) {
                String name = (String) d.getClass().getField("name").get(d);
                if (!(Boolean) method(scr, "isComponentEnabled").invoke(scr, d)) {
                    problems.add("component " + name + " is disabled");
                    continue;
                }
                Iterable<?> configurations = (Iterable<?>) method(scr, "getComponentConfigurationDTOs").invoke(scr, d);
                boolean any = false;
                for (Object c : configurations) {
                    any = true;
                    int state = c.getClass().getField("state").getInt(c);
                    if (state == UNSATISFIED_CONFIGURATION || state == UNSATISFIED_REFERENCE || state == FAILED_ACTIVATION) {
                        Object unsatisfied = c.getClass().getField("unsatisfiedReferences").get(c);
                        List<String> refs = new ArrayList<>();
                        for (int i = 0; i < Array.getLength(unsatisfied); i++) {
                            Object u = Array.get(unsatisfied, i);
                            refs.add((String) u.getClass().getField("name").get(u));
                        }
                        problems.add("component " + name + " is in state " + state + " " + refs);
                    }
                }
                if (!any) {
                    problems.add("component " + name + " has no configuration");
                }
            }
        } finally {
            context.ungetService(ref);
        }
        return problems;
    }

    private static Method method(Object target, String name) {
        for (Method m : target.getClass().getMethods()) {
            if (m.getName().equals(name)) {
                return m;
            }
        }
        throw new IllegalStateException(target.getClass() + " has no " + name);
    }
}
