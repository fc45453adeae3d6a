package dev.atrium.containers.podman.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A container-image artifact that names an image instead of carrying it: the JSON document {@code {"image":
 * "<name>[:tag|@sha256:digest]"}}, pulled from the configured registry. A name without a registry host is the
 * registry's; a name with another host is refused, so a deployment never makes the server's podman contact a host an
 * operator did not name.
 */
final class ImageReference {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Docker's reference grammar, simplified: lower-case path components, a tag or a sha256 digest. */
    private static final Pattern NAME = Pattern.compile("[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
            + "(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[0-9a-f]{64})?");

    private ImageReference() {}

    /** Whether the artifact is a reference document (a tar never starts with '{'). */
    static boolean isReference(byte[] artifact) {
        int i = 0;
        while (i < artifact.length && i < 64 && Character.isWhitespace(artifact[i])) {
            i++;
        }
        return artifact.length < 4096 && i < artifact.length && artifact[i] == '{';
    }

    /** The full reference to pull, {@code <registry>/<name>}, or why not. */
    static String parse(byte[] artifact, String registry) throws ImageArchive.Invalid {
        JsonNode doc;
        try {
            doc = JSON.readTree(artifact);
        } catch (IOException e) {
            throw new ImageArchive.Invalid("an image reference is the JSON {\"image\": \"<name>[:tag]\"}");
        }
        JsonNode image = doc.path("image");
        if (!image.isTextual() || doc.size() != 1) {
            throw new ImageArchive.Invalid(
                    "an image reference is the JSON {\"image\": \"<name>[:tag]\"}, nothing else");
        }
        if (registry == null || registry.isBlank()) {
            throw new ImageArchive.Invalid("this server pulls from no registry (serviceRegistry is not set): upload"
                    + " the image as an OCI or docker archive");
        }
        String name = image.textValue().strip();
        String host = registry.toLowerCase(Locale.ROOT);
        int slash = name.indexOf('/');
        if (slash > 0) {
            String first = name.substring(0, slash);
            if (first.contains(".") || first.contains(":") || first.equals("localhost")) {
                if (!first.toLowerCase(Locale.ROOT).equals(host)) {
                    throw new ImageArchive.Invalid("images are pulled from " + registry + " only, not from " + first);
                }
                name = name.substring(slash + 1);
            }
        }
        if (!NAME.matcher(name).matches()) {
            throw new ImageArchive.Invalid("'" + image.textValue() + "' is not an image name ([registry/]path[:tag]"
                    + " or @sha256:digest, lower-case path)");
        }
        return host + "/" + name;
    }
}
