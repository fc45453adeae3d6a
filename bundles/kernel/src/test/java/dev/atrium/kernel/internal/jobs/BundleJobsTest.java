package dev.atrium.kernel.internal.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.atrium.kernel.api.Jobs;
import java.lang.reflect.Proxy;
import org.junit.jupiter.api.Test;
import org.osgi.framework.Bundle;
import org.osgi.service.component.ComponentContext;

class BundleJobsTest {

    private final JobBoard board = new JobBoard();

    @Test
    void aJobIsTheUsingBundlesAndFailsWhenThatBundleReleasesTheService() {
        BundleJobs jobs = new BundleJobs(board, usedBy("dev.atrium.repos"));
        Jobs.Job running = jobs.start("repository-maintenance", "Maintenance of every repository");
        running.progress(1, 4, "repository 2 of 4");
        Jobs.Job done = jobs.start("repository-maintenance", "Maintenance of repository r");
        done.succeeded("collected");

        jobs.deactivate();

        Jobs.Snapshot stopped = running.snapshot();
        assertEquals("dev.atrium.repos", stopped.bundle());
        assertEquals(Jobs.FAILED, stopped.state());
        assertEquals("the capability stopped", stopped.reason());
        assertEquals(1, stopped.done());
        assertEquals(Jobs.SUCCEEDED, done.snapshot().state(), "a finished job keeps its end");
    }

    @Test
    void aJobWithoutAKindIsAProgrammingError() {
        BundleJobs jobs = new BundleJobs(board, usedBy("dev.atrium.x"));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> jobs.start(" ", "t"));
    }

    /** The context DS gives a bundle-scoped component: only the using bundle's name matters here. */
    private static ComponentContext usedBy(String symbolicName) {
        Bundle bundle = (Bundle) Proxy.newProxyInstance(
                Bundle.class.getClassLoader(),
                new Class<?>[] {Bundle.class},
                (p, m, args) -> m.getName().equals("getSymbolicName") ? symbolicName : null);
        return (ComponentContext) Proxy.newProxyInstance(
                ComponentContext.class.getClassLoader(),
                new Class<?>[] {ComponentContext.class},
                (p, m, args) -> m.getName().equals("getUsingBundle") ? bundle : null);
    }
}
