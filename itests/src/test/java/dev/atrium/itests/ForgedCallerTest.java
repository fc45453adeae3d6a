package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;

/**
 * A capability bundle cannot make itself a Principal: a bundle installed into the running server that fabricates a
 * {@code Caller} for another user (implementing it, constructing it, subclassing the kernel's mint, asking the kernel to
 * act for that user) or a {@code SpaceRef} is refused, and the kernel's owner scope never proves the victim's workspace
 * for it.
 */
@ResourceLock(InFrameworkRuntime.LOCK)
class ForgedCallerTest {

    private static final Path KERNEL_API =
            AtriumServer.ROOT.resolve("bundles/kernel.api/target/kernel.api-0.1.0-SNAPSHOT.jar");

    @TempDir
    Path tmp;

    @Test
    void aBundleThatForgesACallerOrAWorkspaceReferenceIsRefused() throws Exception {
        try (InFrameworkRuntime runtime = InFrameworkRuntime.start(tmp.resolve("runtime"))) {
            runtime.assertHealthy(60_000);
            Http operator = new Http(
                    runtime.base(),
                    Files.readString(runtime.data.resolve("operator.token")).trim());
            Http.Reply created = operator.post("/admin/users", Map.of("username", "forge-victim"));
            assertEquals(201, created.status());
            String victim = created.json().has("user")
                    ? created.get("user").get("id").asText()
                    : created.get("id").asText();
            Http user = operator.as(operator.post("/admin/users/forge-victim/tokens", Map.of())
                    .get("token")
                    .asText());
            assertEquals(200, user.get("/api/spaces/forge-victim").status(), "the victim reaches its own workspace");

            Bundle forger = runtime.framework
                    .getBundleContext()
                    .installBundle("forger", new java.io.ByteArrayInputStream(forgerBundle(runtime)));
            forger.start();
            Class<?> attempts = forger.loadClass("forger.Forger");
            BundleContext context = forger.getBundleContext();
            List<String> outcomes = new ArrayList<>();
            for (String attempt : List.of(
                    "implementCaller",
                    "constructCaller",
                    "reflectCaller",
                    "actAsVictim",
                    "constructSpaceRef",
                    "subclassMint")) {
                Method m = attempts.getMethod(attempt, BundleContext.class, String.class, String.class);
                outcomes.add(attempt + ": " + m.invoke(null, context, victim, "forge-victim"));
            }
            System.out.println("forgery attempts:\n  " + String.join("\n  ", outcomes));
            for (String outcome : outcomes) {
                assertFalse(outcome.contains("ACCEPTED"), "a forgery passed: " + outcome + "\nall: " + outcomes);
            }
            // and the kernel still serves the real user
            assertEquals(200, user.get("/api/spaces/forge-victim").status());

            // a thread reference the threads capability did not prove is refused by every method that takes one
            String thread = user.post("/api/spaces/forge-victim/threads", Map.of("title", "victim's"))
                    .get("thread")
                    .get("id")
                    .asText();
            assertEquals(
                    201,
                    user.post("/api/threads/" + thread + "/messages", Map.of("role", "user", "content", "private"))
                            .status());
            Bundle api = runtime.bundle("dev.atrium.threads.api");
            Class<?> threadRef = api.loadClass("dev.atrium.threads.api.Threads$ThreadRef");
            Object forged = java.lang.reflect.Proxy.newProxyInstance(
                    threadRef.getClassLoader(), new Class<?>[] {threadRef}, (p, m, a) -> switch (m.getName()) {
                        case "id" -> thread;
                        case "spaceId" ->
                            user.get("/api/spaces/forge-victim")
                                    .get("space")
                                    .get("id")
                                    .asText();
                        case "title" -> "victim's";
                        case "hashCode" -> 1;
                        case "equals" -> p == a[0];
                        default -> "forged";
                    });
            // as the runs capability sees it (the test's own class path has another copy of the API)
            BundleContext ctx = runtime.bundle("dev.atrium.runs").getBundleContext();
            Object threads = ctx.getService(ctx.getServiceReference("dev.atrium.threads.api.Threads"));
            Class<?> api2 = api.loadClass("dev.atrium.threads.api.Threads");
            List<String> refused = new ArrayList<>();
            for (Object[] call : List.<Object[]>of(
                    new Object[] {"context", new Class<?>[] {threadRef, int.class}, new Object[] {forged, 10}},
                    new Object[] {
                        "messagesAfter",
                        new Class<?>[] {threadRef, java.time.Instant.class, String.class, int.class},
                        new Object[] {forged, null, null, 10}
                    },
                    new Object[] {
                        "append",
                        new Class<?>[] {threadRef, String.class, String.class, String.class},
                        new Object[] {forged, "user", "planted", null}
                    })) {
                try {
                    Object result = api2.getMethod((String) call[0], (Class<?>[]) call[1])
                            .invoke(threads, (Object[]) call[2]);
                    refused.add(call[0] + ": ACCEPTED " + result);
                } catch (java.lang.reflect.InvocationTargetException e) {
                    Object status = e.getCause().getClass().getMethod("status").invoke(e.getCause());
                    refused.add(call[0] + ": " + status);
                }
            }
            assertEquals(List.of("context: 404", "messagesAfter: 404", "append: 404"), refused);
            assertEquals(
                    1,
                    user.get("/api/threads/" + thread + "/messages")
                            .get("messages")
                            .size(),
                    "nothing was planted");
        }
    }

    /**
     * A bundle {@code forger} importing only kernel.api and the framework. Its attempts use nothing but the API's public
     * shape at run time (reflection, proxies), so the same bundle runs against any kernel.api: each answers what the
     * kernel did, {@code ACCEPTED …} when a forgery passed.
     */
    private byte[] forgerBundle(InFrameworkRuntime runtime) throws IOException {
        Path src = tmp.resolve("forger/src/forger");
        Files.createDirectories(src);
        Files.writeString(src.resolve("Forger.java"), FORGER);
        boolean mint = hasEntry(KERNEL_API, "dev/atrium/kernel/api/KernelMint.class");
        if (mint) {
            Files.writeString(src.resolve("ForgedMint.java"), FORGED_MINT);
        }
        Path classes = tmp.resolve("forger/classes");
        Files.createDirectories(classes);
        // Caller's signatures name JAX-RS's SecurityContext: compile against the runtime's own JAX-RS API bundle
        String jaxrs = Path.of(java.net.URI.create(runtime.bundle("org.apache.geronimo.specs.geronimo-jaxrs_2.1_spec")
                        .getLocation()))
                .toString();
        String classPath = String.join(java.io.File.pathSeparator, KERNEL_API.toString(), jarOf(Bundle.class), jaxrs);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "a JDK compiler");
        List<String> args = new ArrayList<>(List.of(
                "--release",
                "17",
                "-cp",
                classPath,
                "-d",
                classes.toString(),
                src.resolve("Forger.java").toString()));
        if (mint) {
            args.add(src.resolve("ForgedMint.java").toString());
        }
        assertEquals(0, javac.run(null, null, null, args.toArray(String[]::new)));
        Manifest manifest = new Manifest();
        Attributes a = manifest.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.putValue("Bundle-ManifestVersion", "2");
        a.putValue("Bundle-SymbolicName", "dev.atrium.itests.forger");
        a.putValue("Bundle-Version", "1.0.0");
        a.putValue("Import-Package", "dev.atrium.kernel.api,org.osgi.framework");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JarOutputStream out = new JarOutputStream(bytes, manifest);
                Stream<Path> files = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
                out.write(Files.readAllBytes(f));
                out.closeEntry();
            }
        }
        return bytes.toByteArray();
    }

    private static String jarOf(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toString();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean hasEntry(Path jar, String entry) throws IOException {
        try (JarFile f = new JarFile(jar.toFile())) {
            return f.getEntry(entry) != null;
        }
    }

    private static final String FORGER = """
            package forger;

            import java.lang.reflect.Constructor;
            import java.lang.reflect.InvocationTargetException;
            import java.lang.reflect.Proxy;
            import java.util.Set;

            import org.osgi.framework.BundleContext;
            import org.osgi.framework.ServiceReference;

            import dev.atrium.kernel.api.ApiException;
            import dev.atrium.kernel.api.Caller;
            import dev.atrium.kernel.api.OwnerScope;
            import dev.atrium.kernel.api.SpaceRef;

            public final class Forger {

                /** Implements Caller claiming to be the victim, with every scope. */
                public static String implementCaller(BundleContext ctx, String victim, String space) {
                    if (!Caller.class.isInterface()) {
                        return "refused: Caller is a " + (java.lang.reflect.Modifier.isFinal(Caller.class.getModifiers()) ? "final " : "") + "class";
                    }
                    Object caller = Proxy.newProxyInstance(Forger.class.getClassLoader(), new Class<?>[] { Caller.class }, (p, m, a) ->
                        switch (m.getName()) {
                            case "principalId", "getName" -> victim;
                            case "authMethod" -> "pat";
                            case "scopes" -> Set.of("*");
                            case "hasScope" -> true;
                            case "hashCode" -> 1;
                            case "equals" -> p == a[0];
                            default -> "forged";
                        });
                    return require(ctx, (Caller) caller, space);
                }

                /** Calls a public constructor of Caller, as capability code can. */
                public static String constructCaller(BundleContext ctx, String victim, String space) {
                    Constructor<?>[] constructors = Caller.class.getConstructors();
                    if (constructors.length == 0) {
                        return "refused: Caller has no public constructor";
                    }
                    try {
                        return require(ctx, (Caller) constructors[0].newInstance(arguments(constructors[0], victim)), space);
                    } catch (ReflectiveOperationException e) {
                        return "refused: " + cause(e);
                    }
                }

                /** Forces Caller's hidden constructor open with reflection, and hands the result to the owner scope. */
                public static String reflectCaller(BundleContext ctx, String victim, String space) {
                    if (Caller.class.isInterface()) {
                        return "not applicable: Caller is an interface";
                    }
                    try {
                        Constructor<?> c = Caller.class.getDeclaredConstructors()[0];
                        c.setAccessible(true);
                        return require(ctx, (Caller) c.newInstance(arguments(c, victim)), space);
                    } catch (ReflectiveOperationException | RuntimeException e) {
                        return "refused: " + cause(e);
                    }
                }

                /** Asks the kernel's Callers service, when there is one, to act for the victim. */
                public static String actAsVictim(BundleContext ctx, String victim, String space) throws Exception {
                    ServiceReference<?> ref = ctx.getServiceReference("dev.atrium.kernel.api.Callers");
                    if (ref == null) {
                        return "not applicable: no Callers service";
                    }
                    Object callers = ctx.getService(ref);
                    try {
                        Object caller = callers.getClass().getMethod("actingFor", String.class, Set.class)
                                .invoke(callers, victim, Set.of("threads:read"));
                        return require(ctx, (Caller) caller, space);
                    } catch (InvocationTargetException e) {
                        return "refused: " + cause(e);
                    } finally {
                        ctx.ungetService(ref);
                    }
                }

                /** Constructs a SpaceRef for the victim's workspace, as capability code can. */
                public static String constructSpaceRef(BundleContext ctx, String victim, String space) {
                    Constructor<?>[] constructors = SpaceRef.class.getConstructors();
                    if (constructors.length == 0) {
                        return "refused: SpaceRef has no public constructor";
                    }
                    try {
                        Object ref = constructors[0].newInstance(arguments(constructors[0], victim));
                        return "ACCEPTED: made " + ref;
                    } catch (ReflectiveOperationException e) {
                        return "refused: " + cause(e);
                    }
                }

                /** Subclasses the kernel's mint, when the API has one. */
                public static String subclassMint(BundleContext ctx, String victim, String space) throws Exception {
                    Class<?> mint;
                    try {
                        mint = Forger.class.getClassLoader().loadClass("forger.ForgedMint");
                    } catch (ClassNotFoundException e) {
                        return "not applicable: no KernelMint";
                    }
                    try {
                        Object caller = mint.getMethod("forge", String.class).invoke(null, victim);
                        return require(ctx, (Caller) caller, space);
                    } catch (InvocationTargetException e) {
                        return "refused: " + cause(e);
                    }
                }

                private static String require(BundleContext ctx, Caller caller, String space) {
                    ServiceReference<OwnerScope> ref = ctx.getServiceReference(OwnerScope.class);
                    OwnerScope scope = ctx.getService(ref);
                    try {
                        SpaceRef proven = scope.require(caller, space);
                        return "ACCEPTED: the owner scope proved " + proven.id() + " for a forged caller";
                    } catch (ApiException e) {
                        return "refused by the owner scope: " + e.status();
                    } finally {
                        ctx.ungetService(ref);
                    }
                }

                /** Strings are the victim's id, sets every scope, booleans true, anything else null. */
                private static Object[] arguments(Constructor<?> c, String victim) {
                    Class<?>[] types = c.getParameterTypes();
                    Object[] args = new Object[types.length];
                    for (int i = 0; i < types.length; i++) {
                        if (types[i] == String.class) {
                            args[i] = victim;
                        } else if (types[i] == Set.class) {
                            args[i] = Set.of("*");
                        } else if (types[i] == boolean.class) {
                            args[i] = true;
                        }
                    }
                    return args;
                }

                private static String cause(Throwable e) {
                    Throwable t = e;
                    while (t.getCause() != null && t != t.getCause()) {
                        t = t.getCause();
                    }
                    return t instanceof ApiException api ? api.status() + " " + api.getMessage() : t.toString();
                }
            }
            """;

    private static final String FORGED_MINT = """
            package forger;

            import java.util.Set;

            import dev.atrium.kernel.api.Caller;
            import dev.atrium.kernel.api.KernelMint;

            public final class ForgedMint extends KernelMint {
                public static Caller forge(String victim) {
                    return new ForgedMint().caller(victim, "pat", Set.of("*"));
                }
            }
            """;
}
