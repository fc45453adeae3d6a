package dev.atrium.actions.internal;

import dev.atrium.runner.api.JobRunner;
import java.util.Set;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * The job runner Actions uses now, if any: a runner bundle may come, go or be replaced while runs wait; jobs queue
 * with the reason in their run until one can start them.
 */
@Component(service = RunnerLink.class)
public class RunnerLink {

    /** What {@code runs-on} may name when no runner is installed to say (workflows are still checked for the rest). */
    static final Set<String> USUAL_LABELS =
            Set.of("ubuntu-latest", "ubuntu-24.04", "ubuntu-22.04", "linux", "self-hosted", "busybox", "debian");

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile JobRunner runner;

    JobRunner runner() {
        return runner;
    }

    Set<String> labels() {
        JobRunner r = runner;
        return r == null ? USUAL_LABELS : r.labels();
    }

    /** Why jobs cannot start now, or null when they can. */
    String unavailable() {
        JobRunner r = runner;
        if (r == null) {
            return "no job runner is installed: enable the actions feature's runner (podman)";
        }
        JobRunner.Availability a = r.availability();
        return a.ready() ? null : r.name() + ": " + a.reason();
    }
}
