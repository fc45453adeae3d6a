package dev.atrium.itests;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/** Bundle jars for update tests. */
final class Jars {

    private Jars() {}

    /** {@code jar} with the Bundle-Version 0.1.0.{@code qualifier}, so that each update installs a new revision. */
    static byte[] withQualifier(Path jar, String qualifier) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JarInputStream in = new JarInputStream(Files.newInputStream(jar))) {
            Manifest manifest = new Manifest(in.getManifest());
            manifest.getMainAttributes().putValue("Bundle-Version", "0.1.0." + qualifier);
            try (JarOutputStream out = new JarOutputStream(bytes, manifest)) {
                for (JarEntry e = in.getNextJarEntry(); e != null; e = in.getNextJarEntry()) {
                    out.putNextEntry(new JarEntry(e.getName()));
                    out.write(in.readAllBytes());
                    out.closeEntry();
                }
            }
        }
        return bytes.toByteArray();
    }
}
