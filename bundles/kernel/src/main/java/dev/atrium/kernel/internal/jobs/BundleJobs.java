package dev.atrium.kernel.internal.jobs;

import dev.atrium.kernel.api.Jobs;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ServiceScope;

/**
 * The {@link Jobs} of one bundle (bundle-scoped: the using bundle is who started a job). When that bundle releases the
 * service (it stops, or is updated), its jobs still running fail: their threads went with it.
 */
@Component(service = Jobs.class, scope = ServiceScope.BUNDLE)
public class BundleJobs implements Jobs {

    private static final int MAX_TEXT = 200;

    private final JobBoard board;
    private final String bundle;
    private final List<JobBoard.Entry> started = new CopyOnWriteArrayList<>();

    @Activate
    public BundleJobs(@Reference JobBoard board, ComponentContext context) {
        this.board = board;
        this.bundle = context.getUsingBundle().getSymbolicName();
    }

    @Deactivate
    void deactivate() {
        for (JobBoard.Entry e : started) {
            e.failed("the capability stopped");
        }
        started.clear();
    }

    @Override
    public Job start(String kind, String title) {
        if (kind == null || kind.isBlank() || kind.length() > MAX_TEXT) {
            throw new IllegalArgumentException("a job's kind must be 1 to " + MAX_TEXT + " characters");
        }
        JobBoard.Entry e = board.start(kind, title == null ? kind : title, bundle);
        // the finished ones need no watching: drop them as new ones start, so a long-lived bundle keeps no list
        started.removeIf(j -> !j.isRunning());
        started.add(e);
        return e;
    }
}
