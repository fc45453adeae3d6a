package dev.atrium.config.internal;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.apache.felix.framework.FrameworkFactory;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.launch.Framework;

/** A real Felix framework for this package's tests, and bundles that are only a manifest naming a test activator. */
final class TestFrameworks {

    private TestFrameworks() {}

    /** An initialised (not started) framework storing its cache under {@code dir}. */
    static Framework initialised(Path dir) throws BundleException {
        Framework framework = new FrameworkFactory()
                .newFramework(Map.of(
                        Constants.FRAMEWORK_STORAGE,
                        dir.resolve("cache").toString(),
                        Constants.FRAMEWORK_STORAGE_CLEAN,
                        Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT,
                        Constants.FRAMEWORK_BUNDLE_PARENT,
                        Constants.FRAMEWORK_BUNDLE_PARENT_APP,
                        // the activators are the tests' classes
                        Constants.FRAMEWORK_BOOTDELEGATION,
                        "dev.atrium.config.internal"));
        framework.init();
        return framework;
    }

    /** Installs and starts (persistently, so at the framework's start) a bundle {@code name} with {@code activator}. */
    static void installStarted(Framework framework, Path dir, String name, Class<? extends BundleActivator> activator)
            throws Exception {
        Path jar = dir.resolve(name + ".jar");
        Manifest manifest = new Manifest();
        Attributes a = manifest.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.putValue(Constants.BUNDLE_MANIFESTVERSION, "2");
        a.putValue(Constants.BUNDLE_SYMBOLICNAME, name);
        a.putValue(Constants.BUNDLE_ACTIVATOR, activator.getName());
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream j = new JarOutputStream(out, manifest)) {
            // a manifest is all the bundle has
        }
        framework.getBundleContext().installBundle(jar.toUri().toString()).start();
    }
}
