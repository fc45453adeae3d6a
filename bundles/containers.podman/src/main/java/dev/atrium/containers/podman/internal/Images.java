package dev.atrium.containers.podman.internal;

import dev.atrium.runner.api.RunnerException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The images, by label: each {@code <label>.tar} of the images directory is a root filesystem, imported on first use
 * as {@code localhost/atrium-<label>:<12 hex of its SHA-256>}, so a rebuilt tar is imported again and an unchanged one
 * never (the image stays in podman's storage across restarts). No registry is involved.
 */
final class Images {

    /** The {@code runs-on} labels of hosted runners a job may name, run on the default label's image. */
    static final List<String> ALIASES =
            List.of("ubuntu-latest", "ubuntu-24.04", "ubuntu-22.04", "linux", "self-hosted");

    private static final Logger LOG = LoggerFactory.getLogger(Images.class);
    /** Labels become part of an image name: lower case, as image names must be. */
    private static final Pattern LABEL = Pattern.compile("[a-z0-9][a-z0-9._-]{0,62}");

    private final Path directory;
    private final String defaultLabel;
    /** A tar's hash, by path, valid while its size and modification time are the same. */
    private final Map<Path, Hash> hashes = new ConcurrentHashMap<>();
    /** One import at a time per reference. */
    private final Map<String, Object> importing = new ConcurrentHashMap<>();

    private record Hash(long size, long modified, String hex) {}

    /** @param defaultLabel what the aliases stand for; blank: {@code debian} when it has a tar, else {@code busybox} */
    Images(Path directory, String defaultLabel) {
        this.directory = directory;
        this.defaultLabel = defaultLabel == null ? "" : defaultLabel.strip();
    }

    Path directory() {
        return directory;
    }

    /** The labels with a tar, and the aliases when the default label has one. */
    Set<String> labels() {
        Set<String> labels = new TreeSet<>();
        if (Files.isDirectory(directory)) {
            try (DirectoryStream<Path> tars = Files.newDirectoryStream(directory, "*.tar")) {
                for (Path tar : tars) {
                    String name = tar.getFileName().toString();
                    String label = name.substring(0, name.length() - ".tar".length());
                    if (LABEL.matcher(label).matches() && Files.isRegularFile(tar)) {
                        labels.add(label);
                    }
                }
            } catch (IOException e) {
                LOG.warn("cannot list the images in {}: {}", directory, e.toString());
            }
        }
        if (labels.contains(defaultLabel())) {
            labels.addAll(ALIASES);
        }
        return labels;
    }

    String defaultLabel() {
        if (!defaultLabel.isEmpty()) {
            return defaultLabel;
        }
        return Files.isRegularFile(directory.resolve("debian.tar")) ? "debian" : "busybox";
    }

    /** The label whose tar a job's label runs on: itself, or the default label for an alias. */
    String resolve(String label) {
        return ALIASES.contains(label) ? defaultLabel() : label;
    }

    /**
     * The image of {@code label}, imported first if podman does not have it.
     *
     * @throws RunnerException when the label has no tar, or the import fails
     */
    String image(String label, DockerApi api) throws RunnerException {
        String resolved = resolve(label);
        Path tar = LABEL.matcher(resolved).matches() ? directory.resolve(resolved + ".tar") : null;
        if (tar == null || !Files.isRegularFile(tar)) {
            throw new RunnerException("no image for runs-on label '" + label + "': no " + resolved + ".tar in "
                    + directory + " (./atrium images builds busybox.tar and debian.tar; labels here: " + labels()
                    + ")");
        }
        String reference;
        try {
            reference = "localhost/atrium-" + resolved + ":" + hash(tar);
        } catch (IOException e) {
            throw new RunnerException("cannot read the image " + tar + ": " + e.getMessage(), e);
        }
        synchronized (importing.computeIfAbsent(reference, r -> new Object())) {
            try {
                if (!api.imageExists(reference)) {
                    long started = System.nanoTime();
                    api.importImage(tar, reference);
                    LOG.info("imported {} as {} in {} ms", tar, reference, (System.nanoTime() - started) / 1_000_000);
                }
            } catch (IOException e) {
                throw new RunnerException("cannot import the image " + tar + ": " + e.getMessage(), e);
            }
        }
        return reference;
    }

    /** The first 12 hex digits of the tar's SHA-256, computed again only when its size or time changed. */
    String hash(Path tar) throws IOException {
        long size = Files.size(tar);
        long modified = Files.getLastModifiedTime(tar).toMillis();
        Hash known = hashes.get(tar);
        if (known != null && known.size() == size && known.modified() == modified) {
            return known.hex();
        }
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = Files.newInputStream(tar)) {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                sha256.update(buffer, 0, n);
            }
        }
        String hex = HexFormat.of().formatHex(sha256.digest()).substring(0, 12);
        hashes.put(tar, new Hash(size, modified, hex));
        return hex;
    }
}
