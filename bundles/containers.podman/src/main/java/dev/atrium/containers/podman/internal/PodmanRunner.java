package dev.atrium.containers.podman.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.runner.api.ContainerSpec;
import dev.atrium.runner.api.JobContainer;
import dev.atrium.runner.api.JobRunner;
import dev.atrium.runner.api.RunnerException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The podman job runner: each job in a fresh container of a supervised podman service ({@link PodmanService}), made
 * from a root-filesystem tar by label ({@link Images}), with no network, limited memory, CPUs and processes, no
 * capabilities, and the job's workspace as its only mount. Activation starts nothing: the service starts with the
 * first job. Deactivation (an update, an uninstall, the server stopping) removes every container and stops the
 * service.
 */
@Component(
        service = JobRunner.class,
        configurationPid = "dev.atrium.containers.podman",
        property = JobRunner.NAME + "=podman")
public class PodmanRunner implements JobRunner {

    /** Every container of this runner carries it, as a label. */
    static final String LABEL = "atrium.runner";

    private static final Logger LOG = LoggerFactory.getLogger(PodmanRunner.class);
    private static final Pattern NUMERIC_USER = Pattern.compile("(\\d+)(?::(\\d+))?");
    /** An image made from a root filesystem has no environment: a PATH for the commands. */
    private static final String PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    /** What the configuration says, resolved. */
    record Settings(
            String binary,
            Path directory,
            Path imagesDirectory,
            String defaultLabel,
            long memoryBytes,
            double cpus,
            int pids,
            String user,
            String network) {}

    private final Settings settings;
    private final PodmanService service;
    private final Images images;
    private final ObjectMapper json = new ObjectMapper();
    private final SecureRandom random = new SecureRandom();

    /** The job containers this runner started, removed when it is deactivated (the shared service runs on). */
    private final Set<String> started = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** The host whose service this runner shares; null when the runner owns its service (tests). */
    private final PodmanHost host;

    @Activate
    public PodmanRunner(PodmanConfig config, @Reference PodmanHost host) {
        this(settings(config), host);
    }

    /** A runner owning a service of its own (the tests'): deactivating it stops the service. */
    PodmanRunner(Settings settings) {
        this(settings, null);
    }

    private PodmanRunner(Settings settings, PodmanHost host) {
        this.settings = settings;
        this.host = host == null ? new PodmanHost(new PodmanService(settings.binary(), settings.directory())) : host;
        this.service = this.host.service();
        this.images = new Images(settings.imagesDirectory(), settings.defaultLabel());
        this.ownsHost = host == null;
    }

    private final boolean ownsHost;

    private static Settings settings(PodmanConfig config) {
        return new Settings(
                PodmanHost.home(config.binary()),
                Path.of(PodmanHost.home(config.dataDirectory()))
                        .toAbsolutePath()
                        .resolve("runner-podman"),
                Path.of(PodmanHost.home(config.imagesDirectory())).toAbsolutePath(),
                config.defaultLabel(),
                config.memoryBytes(),
                config.cpus(),
                config.pids(),
                config.user(),
                config.network());
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        if (ownsHost) {
            host.deactivate();
            return;
        }
        // the service is shared with container services: only this runner's job containers go
        for (String id : List.copyOf(started)) {
            try {
                service.api().remove(id);
            } catch (IOException | RunnerException e) {
                LOG.warn("cannot remove job container {}: {}", id, e.getMessage());
            }
            service.forget(id);
        }
        started.clear();
    }

    PodmanService service() {
        return service;
    }

    @Override
    public String name() {
        return "podman";
    }

    @Override
    public Availability availability() {
        return service.availability();
    }

    @Override
    public Set<String> labels() {
        return images.labels();
    }

    @Override
    public JobContainer start(ContainerSpec spec) throws RunnerException {
        Path workspace = spec.workspace().toAbsolutePath().normalize();
        if (!Files.isDirectory(workspace)) {
            throw new RunnerException("the workspace " + workspace + " is not a directory");
        }
        if (workspace.toString().contains(":") || workspace.toString().contains(",")) {
            // a bind's source cannot hold the separators of its own syntax
            throw new RunnerException("the workspace path " + workspace + " has a ':' or ','");
        }
        DockerApi api = service.api();
        String image = images.image(spec.label(), api);
        chown(workspace);
        String name = "atrium-job-" + HexFormat.of().formatHex(bytes());
        ObjectNode body = create(spec, image, workspace);
        long t0 = System.nanoTime();
        String id;
        try {
            id = api.createContainer(name, body);
        } catch (IOException e) {
            throw new RunnerException("cannot create a container of " + image + ": " + e.getMessage(), e);
        }
        service.track(id);
        started.retainAll(service.tracked()); // closed jobs' containers: the service forgot them
        started.add(id);
        PodmanContainer container = new PodmanContainer(id, name, spec.env(), api, service);
        try {
            api.startContainer(id);
        } catch (IOException e) {
            container.close();
            throw new RunnerException("cannot start a container of " + image + ": " + e.getMessage(), e);
        }
        LOG.debug("container {} of {} created and started in {} ms", name, image, (System.nanoTime() - t0) / 1_000_000);
        return container;
    }

    private byte[] bytes() {
        byte[] b = new byte[6];
        random.nextBytes(b);
        return b;
    }

    private ObjectNode create(ContainerSpec spec, String image, Path workspace) {
        ObjectNode body = json.createObjectNode();
        body.put("Image", image);
        // the container only waits for execs; Init reaps what they leave behind
        body.putArray("Cmd").add("sleep").add("2147483647");
        body.put("User", settings.user());
        body.put("WorkingDir", ContainerSpec.WORKSPACE);
        ArrayNode env = body.putArray("Env");
        if (!spec.env().containsKey("PATH")) {
            env.add(PATH);
        }
        spec.env().forEach((k, v) -> env.add(k + "=" + v));
        Map<String, String> labels = new LinkedHashMap<>(spec.labels());
        labels.put(LABEL, "podman");
        ObjectNode labelNode = body.putObject("Labels");
        labels.forEach(labelNode::put);
        long memory = spec.memoryBytes() > 0 ? spec.memoryBytes() : settings.memoryBytes();
        double cpus = spec.cpus() > 0 ? spec.cpus() : settings.cpus();
        int pids = spec.pids() > 0 ? spec.pids() : settings.pids();
        ObjectNode host = body.putObject("HostConfig");
        host.put("Init", true);
        host.put("NetworkMode", settings.network());
        host.put("Memory", memory);
        host.put("MemorySwap", memory); // the same as Memory: no swap
        host.put("NanoCpus", Math.round(cpus * 1e9));
        host.put("PidsLimit", pids);
        host.putArray("CapDrop").add("ALL");
        host.putArray("SecurityOpt").add("no-new-privileges");
        host.putArray("Binds").add(workspace + ":" + ContainerSpec.WORKSPACE + ":rw");
        return body;
    }

    /**
     * Gives the workspace to the container's user: the service runs as root, the commands as {@code user}, and the
     * checkout the caller made is root's.
     */
    private void chown(Path workspace) throws RunnerException {
        Matcher m = NUMERIC_USER.matcher(settings.user());
        if (!m.matches()) {
            return; // a user name: its ids are the image's to know
        }
        int uid = Integer.parseInt(m.group(1));
        int gid = m.group(2) == null ? uid : Integer.parseInt(m.group(2));
        try (Stream<Path> files = Files.walk(workspace)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.setAttribute(f, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
                Files.setAttribute(f, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
            }
        } catch (IOException | UnsupportedOperationException e) {
            throw new RunnerException(
                    "cannot give the workspace " + workspace + " to " + settings.user() + ": " + e.getMessage(), e);
        }
    }
}
