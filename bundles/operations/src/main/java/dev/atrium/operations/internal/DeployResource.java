package dev.atrium.operations.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import javax.ws.rs.GET;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;

/**
 * {@code GET /admin/deploy} (operator): what {@code <data>/deploy/} holds, FileInstall's directory. Names, sizes and
 * times only, never a file's contents: an operator's configuration file may hold secrets. A jar is matched to the
 * bundle FileInstall installed from it by the bundle's location (the file's URI).
 */
@Component(
        service = DeployResource.class,
        configurationPid = "dev.atrium.operations",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@KernelResource
@javax.ws.rs.Path("/admin/deploy")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class DeployResource {

    /** More files than any deploy directory should hold; the rest are counted, not listed. */
    private static final int MAX_FILES = 1_000;

    private final BundleContext context;
    private final Path deploy;

    @Activate
    public DeployResource(BundleContext context, FeatureSwitch.Config config) {
        this.context = context;
        this.deploy =
                Path.of(config.dataDirectory()).toAbsolutePath().normalize().resolve("deploy");
    }

    @GET
    @JsonShape(OperationsJson.DeployDirectory.class)
    public Map<String, Object> list() {
        List<Path> files = new ArrayList<>();
        long total = 0;
        if (Files.isDirectory(deploy)) {
            try (Stream<Path> entries = Files.list(deploy)) {
                for (Path p :
                        entries.sorted(Comparator.comparing(Path::toString)).toList()) {
                    total++;
                    if (files.size() < MAX_FILES) {
                        files.add(p);
                    }
                }
            } catch (IOException e) {
                throw ApiException.unavailable("the deploy directory " + deploy + " cannot be read: " + e.getMessage());
            }
        }
        Map<Path, Bundle> installed = installedFromFiles();
        List<Map<String, Object>> out = new ArrayList<>();
        for (Path p : files) {
            Map<String, Object> entry = entry(p, installed);
            if (entry != null) {
                out.add(entry);
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("directory", deploy.toString());
        m.put("files", out);
        m.put("more", Math.max(0, total - files.size()));
        return m;
    }

    /** A file of the directory, or null when it went away meanwhile. */
    private Map<String, Object> entry(Path p, Map<Path, Bundle> installed) {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(p, BasicFileAttributes.class);
        } catch (IOException gone) {
            return null;
        }
        String name = p.getFileName().toString();
        String lower = name.toLowerCase(Locale.ROOT);
        String kind = attributes.isDirectory()
                ? "directory"
                : lower.endsWith(".jar")
                        ? "bundle"
                        : lower.endsWith(".config") || lower.endsWith(".cfg") ? "configuration" : "other";
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("kind", kind);
        m.put("size", attributes.isDirectory() ? null : attributes.size());
        m.put("modified", attributes.lastModifiedTime().toInstant().toString());
        // FileInstall names a configuration by its file: <pid>.config, or <factoryPid>-<name>.config for a factory's
        m.put("pid", kind.equals("configuration") ? name.substring(0, name.lastIndexOf('.')) : null);
        Bundle b = kind.equals("bundle") ? installed.get(real(p)) : null;
        m.put("bundle_id", b == null ? null : b.getBundleId());
        m.put("symbolic_name", b == null ? null : b.getSymbolicName());
        m.put("version", b == null ? null : b.getVersion().toString());
        m.put("state", b == null ? null : OperationsResource.state(b.getState()));
        return m;
    }

    /** The bundles installed from a file of the deploy directory, by the file's real path. */
    private Map<Path, Bundle> installedFromFiles() {
        Map<Path, Bundle> out = new HashMap<>();
        for (Bundle b : context.getBundles()) {
            String location = b.getLocation();
            if (location == null || !location.startsWith("file:")) {
                continue;
            }
            int query = location.indexOf('?');
            try {
                Path file = real(Path.of(URI.create(query < 0 ? location : location.substring(0, query))));
                if (file.startsWith(real(deploy))) {
                    out.put(file, b);
                }
            } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException notAFile) {
                // a location FileInstall did not write
            }
        }
        return out;
    }

    /** The real path when the file is there (the data directory may be reached through a link), else as given. */
    private static Path real(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }
}
