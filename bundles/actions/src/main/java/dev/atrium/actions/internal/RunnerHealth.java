package dev.atrium.actions.internal;

import dev.atrium.kernel.api.HealthDetail;
import dev.atrium.runner.api.JobRunner;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /healthz} names the job runner Actions uses and whether jobs can start on it now. */
@Component(service = HealthDetail.class)
public class RunnerHealth implements HealthDetail {

    private final RunnerLink runners;

    @Activate
    public RunnerHealth(@Reference RunnerLink runners) {
        this.runners = runners;
    }

    @Override
    public String name() {
        return "actions.runner";
    }

    @Override
    public String detail() {
        JobRunner r = runners.runner();
        if (r == null) {
            return "none: " + runners.unavailable();
        }
        JobRunner.Availability a = r.availability();
        return r.name()
                + (a.ready() ? ": ready" : ": unavailable")
                + (a.reason() == null || a.reason().isBlank() ? "" : " (" + a.reason() + ")");
    }
}
