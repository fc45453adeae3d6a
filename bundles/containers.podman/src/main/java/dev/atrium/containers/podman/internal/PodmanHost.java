package dev.atrium.containers.podman.internal;

import dev.atrium.runner.api.RunnerException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one podman service of this bundle, shared by the job runner ({@link PodmanRunner}) and the container-services
 * provider ({@link PodmanDeployer}): two services on one storage would step on each other. A component of its own so
 * that either user can go and come without stopping the other's containers; its service type is internal, so only
 * this bundle sees it. Deactivated (the bundle stopping), it removes every container and stops the service.
 */
@Component(service = PodmanHost.class, configurationPid = "dev.atrium.containers.podman")
// the one metatype of the pid: the runner and the deployer read the same configuration
@Designate(ocd = PodmanConfig.class)
public class PodmanHost {

    private static final Logger LOG = LoggerFactory.getLogger(PodmanHost.class);

    private final PodmanService service;
    private final Thread leftovers;

    @Activate
    public PodmanHost(PodmanConfig config) {
        this(new PodmanService(
                home(config.binary()),
                Path.of(home(config.dataDirectory())).toAbsolutePath().resolve("runner-podman")));
    }

    PodmanHost(PodmanService service) {
        this.service = service;
        // a previous process ran containers here and may have died with them running: starting the service now
        // removes them, rather than at the next job or deployment, which may be days away
        if (Files.isDirectory(service.directory().resolve("storage"))) {
            leftovers = new Thread(this::removeLeftovers, "atrium-podman-leftovers");
            leftovers.start();
        } else {
            leftovers = null;
        }
    }

    private void removeLeftovers() {
        if (!service.availability().ready()) {
            return;
        }
        try {
            service.api();
        } catch (RunnerException e) {
            LOG.info("containers a previous process left were not removed at start: {}", e.getMessage());
        }
    }

    /** {@code ~/…} against the user's home directory, as the defaults are written. */
    static String home(String path) {
        return path.startsWith("~/") ? System.getProperty("user.home") + path.substring(1) : path;
    }

    PodmanService service() {
        return service;
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        service.close();
        if (leftovers != null) {
            leftovers.join(30_000);
        }
    }
}
