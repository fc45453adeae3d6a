package dev.atrium.containers.podman.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

@ObjectClassDefinition(name = "Atrium podman job runner and container services")
public @interface PodmanConfig {

    @AttributeDefinition(description = "The podman binary (ATRIUM_PODMAN_BIN): a path, or a name looked up on the PATH")
    String binary() default "podman";

    @AttributeDefinition(
            description = "The data directory (--data, ATRIUM_DATA); podman's socket and storage live in its "
                    + "runner-podman/")
    String dataDirectory() default "data";

    @AttributeDefinition(
            description = "Where the images are (ATRIUM_RUNNER_IMAGES): each <label>.tar is a root filesystem whose "
                    + "runs-on label is its name ('./atrium images' builds busybox.tar and debian.tar)")
    String imagesDirectory() default "~/.cache/atrium/images";

    @AttributeDefinition(
            description = "The label ubuntu-latest, ubuntu-24.04, ubuntu-22.04, linux and self-hosted stand for "
                    + "(empty: debian when debian.tar exists, else busybox)")
    String defaultLabel() default "";

    @AttributeDefinition(description = "A container's memory limit unless the job gives one (bytes; no swap)")
    long memoryBytes() default 1L << 30;

    @AttributeDefinition(description = "The CPUs a container may use unless the job says")
    double cpus() default 1.0;

    @AttributeDefinition(description = "The most processes a container may have unless the job says")
    int pids() default 512;

    @AttributeDefinition(description = "The user commands run as in the container (uid:gid)")
    String user() default "1000:1000";

    @AttributeDefinition(description = "The container's network mode ('none': no network at all)")
    String network() default "none";

    @AttributeDefinition(description = "A container service's memory limit unless its limits.memory_mb says (bytes)")
    long serviceMemoryBytes() default 512L << 20;

    @AttributeDefinition(description = "The CPUs a container service may use unless its limits.millicpus says")
    double serviceCpus() default 1.0;

    @AttributeDefinition(description = "The most processes a container service may have")
    int servicePids() default 256;

    @AttributeDefinition(description = "The port a container service listens on unless its env PORT says")
    int servicePort() default 8080;

    @AttributeDefinition(
            description =
                    "The podman network of container services: a bridge the server reaches each container on at its"
                            + " address, made internal (no route beyond the host) when missing, so that containers reach out"
                            + " only through the egress proxy")
    String serviceNetwork() default "atrium-services";

    @AttributeDefinition(description = "How long a new container service may take until it answers HTTP (s)")
    int serviceStartTimeoutSeconds() default 30;

    @AttributeDefinition(
            description = "How long a replaced container service keeps serving requests already sent to it (ms)")
    long serviceDrainGraceMillis() default 5000;

    @AttributeDefinition(description = "Log lines kept per container service")
    int serviceLogLines() default 10000;

    @AttributeDefinition(
            description = "The registry (host[:port]) container services may be deployed from by image reference, "
                    + "empty: archives only (ATRIUM_CONTAINERS_REGISTRY)")
    String serviceRegistry() default "";

    @AttributeDefinition(
            description = "Whether pulls from that registry verify its TLS certificate; false also allows plain HTTP "
                    + "(ATRIUM_CONTAINERS_REGISTRY_TLS)")
    boolean serviceRegistryTls() default true;
}
