package dev.atrium.itests;

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
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.startlevel.BundleStartLevel;

/**
 * The full runtime booted inside the test JVM from exactly the bundles the exported {@code atrium.jar} launches,
 * so a test can look at bundles, DS components, threads and class loaders directly.
 */
final class InFrameworkRuntime implements AutoCloseable {

    /**
     * Held by every test class that boots this runtime: one framework at a time in the test JVM, so a class that counts
     * threads, open files or reachable classes of its framework sees no other framework's.
     */
    static final String LOCK = "atrium.in-jvm-framework";

    private static final int UNSATISFIED_CONFIGURATION = 1;
    private static final int UNSATISFIED_REFERENCE = 2;
    private static final int FAILED_ACTIVATION = 16;

    final Framework framework;
    final List<Bundle> installed;
    final int port;
    final Path data;
    private final TestDatabase db;
    private final ClassLoader testLoader;

    private InFrameworkRuntime(
            Framework framework, List<Bundle> installed, int port, Path data, TestDatabase db, ClassLoader testLoader) {
        this.framework = framework;
        this.installed = installed;
        this.port = port;
        this.data = data;
        this.db = db;
        this.testLoader = testLoader;
    }

    static InFrameworkRuntime start(Path tmp) throws Exception {
        return start(tmp, Map.of());
    }

    /** As {@link #start(Path)}, with extra framework properties (settings bundles read with {@code BundleContext.getProperty}). */
    static InFrameworkRuntime start(Path tmp, Map<String, String> properties) throws Exception {
        Path jar = Path.of(System.getProperty("atrium.jar"));
        List<Path> bundles = new ArrayList<>();
        Properties launch = new Properties();
        try (JarFile exported = new JarFile(jar.toFile())) {
            try (InputStream in = exported.getInputStream(exported.getEntry("launcher.properties"))) {
                launch.load(in);
            }
            for (String entry : launch.getProperty("launch.bundles").split(",")) {
                Path target = tmp.resolve("bundles")
                        .resolve(Path.of(entry.trim()).getFileName().toString());
                Files.createDirectories(target.getParent());
                try (InputStream in = exported.getInputStream(exported.getEntry(entry.trim()))) {
                    Files.copy(in, target);
                }
                bundles.add(target);
            }
        }
        TestDatabase db = TestDatabase.create();
        int port = AtriumServer.freePort();
        Path data = tmp.resolve("data");
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
        config.put("atrium.data", data.toString());
        config.put(
                "felix.fileinstall.dir",
                Files.createDirectories(data.resolve("deploy")).toString());
        config.put("atrium.db.url", db.url());
        config.putAll(properties);

        // Framework threads inherit this thread's context class loader; give them none of the test's classes,
        // as the real launcher does (CXF serves nothing otherwise).
        ClassLoader testLoader = Thread.currentThread().getContextClassLoader();
        Thread.currentThread().setContextClassLoader(ClassLoader.getPlatformClassLoader());
        Framework framework = new FrameworkFactory().newFramework(config);
        framework.init();
        BundleContext context = framework.getBundleContext();
        List<Bundle> installed = new ArrayList<>();
        for (Path b : bundles) {
            installed.add(context.installBundle(b.toUri().toString()));
        }
        // resolved up front as the launcher does: a feature that is off is then RESOLVED, though never started
        framework.adapt(org.osgi.framework.wiring.FrameworkWiring.class).resolveBundles(installed);
        // the start levels the launcher gives them (the database before the capabilities, the whiteboard last)
        Map<String, Integer> levels = new HashMap<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("([\\w.\\-]+);version=\"[^\"]*\";startlevel=(\\d+)")
                .matcher(launch.getProperty("launch.runbundles.attrs", ""));
        while (m.find()) {
            levels.put(m.group(1), Integer.parseInt(m.group(2)));
        }
        for (Bundle b : installed) {
            if (b.getHeaders().get(Constants.FRAGMENT_HOST) == null) {
                b.adapt(BundleStartLevel.class).setStartLevel(levels.getOrDefault(b.getSymbolicName(), 10));
                b.start();
            }
        }
        framework.start();
        return new InFrameworkRuntime(framework, installed, port, data, db, testLoader);
    }

    Bundle bundle(String symbolicName) {
        for (Bundle b : framework.getBundleContext().getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        throw new AssertionError("no bundle " + symbolicName);
    }

    String base() {
        return "http://127.0.0.1:" + port;
    }

    HttpResponse<String> health() throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(base() + "/healthz")).build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    /** Waits up to {@code millis} for /healthz 200; returns the last answer. */
    HttpResponse<String> awaitHealthy(long millis) throws Exception {
        long deadline = System.currentTimeMillis() + millis;
        HttpResponse<String> health = null;
        while (System.currentTimeMillis() < deadline && (health == null || health.statusCode() != 200)) {
            Thread.sleep(100);
            try {
                health = health();
            } catch (java.io.IOException notYet) {
                // not listening yet
            }
        }
        return health;
    }

    /** Waits for {@code /healthz} 200; else fails naming what the server said and what is not running. */
    void assertHealthy(long millis) throws Exception {
        HttpResponse<String> health = awaitHealthy(millis);
        if (health == null || health.statusCode() != 200) {
            org.junit.jupiter.api.Assertions.fail("not healthy after " + millis + " ms: "
                    + (health == null ? "no answer" : health.statusCode() + " " + health.body()) + "; " + problems());
        }
    }

    /**
     * The bundles of features whose file says {@code "atrium-enabled-by-default": false} (e.g. store-pullonly, which
     * conflicts with the default store model): installed and resolved, not started.
     */
    static java.util.Set<String> offByDefault() throws java.io.IOException {
        java.util.Set<String> names = new java.util.HashSet<>();
        try (var files = Files.list(AtriumServer.ROOT.resolve("features"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".json")).toList()) {
                com.fasterxml.jackson.databind.JsonNode feature = Http.JSON.readTree(f.toFile());
                if (feature.path("atrium-enabled-by-default").asBoolean(true)) {
                    continue;
                }
                for (com.fasterxml.jackson.databind.JsonNode bundle : feature.path("bundles")) {
                    String[] gav = bundle.path("id").asText().split(":");
                    if (gav.length >= 2 && gav[0].equals("dev.atrium")) {
                        names.add("dev.atrium." + gav[1]);
                    }
                }
            }
        }
        return names;
    }

    /**
     * Bundles that are not ACTIVE (fragments, and bundles of features off by default: not RESOLVED) and DS components
     * that are not satisfied or active.
     */
    List<String> problems() throws Exception {
        BundleContext context = framework.getBundleContext();
        List<String> problems = new ArrayList<>();
        java.util.Set<String> offByDefault = offByDefault();
        for (Bundle b : context.getBundles()) {
            boolean fragment = b.getHeaders().get(Constants.FRAGMENT_HOST) != null;
            int expected = fragment || offByDefault.contains(b.getSymbolicName()) ? Bundle.RESOLVED : Bundle.ACTIVE;
            if (b.getState() != expected) {
                problems.add("bundle " + b.getSymbolicName() + " is in state " + b.getState());
            }
        }
        // getAll…: the test's class space shares no SCR API with the framework, so skip the assignability filter
        ServiceReference<?>[] scrRefs =
                context.getAllServiceReferences("org.osgi.service.component.runtime.ServiceComponentRuntime", null);
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
                Iterable<?> configurations = (Iterable<?>)
                        method(scr, "getComponentConfigurationDTOs").invoke(scr, d);
                boolean any = false;
                for (Object c : configurations) {
                    any = true;
                    int state = c.getClass().getField("state").getInt(c);
                    if (state == UNSATISFIED_CONFIGURATION
                            || state == UNSATISFIED_REFERENCE
                            || state == FAILED_ACTIVATION) {
                        Object unsatisfied =
                                c.getClass().getField("unsatisfiedReferences").get(c);
                        List<String> refs = new ArrayList<>();
                        for (int i = 0; i < Array.getLength(unsatisfied); i++) {
                            Object u = Array.get(unsatisfied, i);
                            refs.add((String) u.getClass().getField("name").get(u));
                        }
                        problems.add("component " + name + " is in state " + state + " " + refs);
                    }
                }
                // a component that requires a configuration nobody gave (the S3 BlobStore, unconfigured) was not asked
                // for
                if (!any
                        && !"require"
                                .equals(d.getClass()
                                        .getField("configurationPolicy")
                                        .get(d))) {
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

    @Override
    public void close() throws Exception {
        try {
            framework.stop();
            framework.waitForStop(30_000);
        } finally {
            Thread.currentThread().setContextClassLoader(testLoader);
            db.close();
        }
    }
}
