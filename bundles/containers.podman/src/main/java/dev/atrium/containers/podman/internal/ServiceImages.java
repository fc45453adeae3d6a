package dev.atrium.containers.podman.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.deploy.api.Deployment;
import dev.atrium.deploy.api.DeploymentException;
import dev.atrium.deploy.api.DeploymentException.Kind;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a container service's image comes from: an uploaded archive, read here first ({@link ImageArchive}) and loaded
 * into podman unless it has the image; or a reference to the configured registry ({@link ImageReference}), pulled.
 * Either way the image is known by podman's id, so that it runs, is shared and is removed the same way.
 */
final class ServiceImages {

    private static final Logger LOG = LoggerFactory.getLogger(ServiceImages.class);

    /** podman's API, or why it is not there. */
    interface Api {
        DockerApi get() throws DeploymentException;
    }

    /** A deployment's image, and the registry reference it was pulled by (null for an uploaded archive). */
    record Source(ImageArchive image, String pulled) {}

    private final Api api;
    private final String registry;
    private final boolean registryTls;

    ServiceImages(Api api, String registry, boolean registryTls) {
        this.api = api;
        this.registry = registry;
        this.registryTls = registryTls;
    }

    /** The image of {@code d}: its archive read, or its reference pulled. */
    Source source(Deployment d) throws DeploymentException {
        if (ImageReference.isReference(d.artifact())) {
            String reference;
            try {
                reference = ImageReference.parse(d.artifact(), registry);
            } catch (ImageArchive.Invalid e) {
                throw new DeploymentException(Kind.INVALID, e.getMessage());
            }
            return new Source(pull(reference), reference);
        }
        try {
            return new Source(ImageArchive.read(d.artifact()), null);
        } catch (ImageArchive.Invalid e) {
            throw new DeploymentException(Kind.INVALID, e.getMessage());
        }
    }

    /**
     * Pulls {@code reference} from the configured registry (podman's libpod pull: the registry's TLS as configured) and
     * answers the image by the id podman gives it.
     */
    private ImageArchive pull(String reference) throws DeploymentException {
        DockerApi podman = api.get();
        try {
            long t0 = System.nanoTime();
            podman.pullImage(reference, registryTls);
            JsonNode info = podman.inspectImage(reference)
                    .orElseThrow(
                            () -> new DeploymentException(Kind.INVALID, "the pull of " + reference + " left no image"));
            String id = info.path("Id").asText().replaceFirst("^sha256:", "");
            JsonNode config = info.path("Config");
            if (config.path("Cmd").isEmpty() && config.path("Entrypoint").isEmpty()) {
                throw new DeploymentException(Kind.INVALID, "the image " + reference + " has no Cmd nor Entrypoint");
            }
            LOG.info("pulled {} ({}) in {} ms", reference, id, (System.nanoTime() - t0) / 1_000_000);
            return new ImageArchive(id, config);
        } catch (ApiException e) {
            throw new DeploymentException(Kind.INVALID, "podman cannot pull " + reference + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new DeploymentException(
                    Kind.UNAVAILABLE, "podman failed pulling " + reference + ": " + e.getMessage(), e);
        }
    }

    /** Makes sure podman has the image, known by its id whatever the archive names it. */
    void load(Source source, Deployment d) throws DeploymentException {
        DockerApi podman = api.get();
        ImageArchive image = source.image();
        try {
            if (podman.imageExists(image.reference())) {
                return;
            }
            if (source.pulled() != null) {
                // removed when its last deployment stopped; a tag that moved since is refused, never run as another
                // image
                pull(source.pulled());
                if (!podman.imageExists(image.reference())) {
                    throw new DeploymentException(
                            Kind.INVALID, source.pulled() + " is no longer the image " + image.id() + " it was");
                }
                return;
            }
            long t0 = System.nanoTime();
            podman.loadImage(d.artifact());
            if (!podman.imageExists(image.reference())) {
                throw new DeploymentException(Kind.INVALID, "the archive loaded no image with the id " + image.id());
            }
            LOG.info("loaded image {} in {} ms", image.id(), (System.nanoTime() - t0) / 1_000_000);
        } catch (ApiException e) {
            throw new DeploymentException(Kind.INVALID, "podman cannot load the image: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new DeploymentException(Kind.UNAVAILABLE, "podman failed loading the image: " + e.getMessage(), e);
        }
    }
}
