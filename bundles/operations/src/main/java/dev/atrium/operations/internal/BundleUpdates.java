package dev.atrium.operations.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Jobs;
import dev.atrium.kernel.api.ServerReadiness;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.framework.wiring.FrameworkWiring;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replaces a bundle with a new jar at run time and checks the result: the bundle must become ACTIVE and every
 * Declarative Services component of it satisfied, within a bound. Otherwise the previous revision, kept
 * as a jar before the update, is put back and the failure is reported. Requests to the capability are held
 * by the kernel's update gate meanwhile, so clients see no failure either way.
 * <p>
 * Bundles wired to the old revision (users of an API bundle's packages) are refreshed with it, so they are
 * re-wired to the new revision and the old one's class loader can go; they must come back ACTIVE and
 * satisfied too.
 */
@Component(service = BundleUpdates.class)
public class BundleUpdates {

    private static final Logger LOG = LoggerFactory.getLogger(BundleUpdates.class);
    /** The capability the kernel's own bundles declare (their bnd.bnd): replaced by a restart, never under their own feet. */
    static final String KERNEL_NAMESPACE = "atrium.kernel";

    private static final long VERIFY_MILLIS = 15_000;
    private static final long REFRESH_MILLIS = 30_000;
    /** The steps of an update a job counts: storing, updating, refreshing, verifying, waiting for the server. */
    private static final long STEPS = 5;

    private final BundleContext context;
    private final ServiceComponentRuntime scr;
    private final ServerReadiness readiness;
    private final Jobs jobs;

    @Activate
    public BundleUpdates(
            BundleContext context,
            @Reference ServiceComponentRuntime scr,
            @Reference ServerReadiness readiness,
            @Reference Jobs jobs) {
        this.context = context;
        this.scr = scr;
        this.readiness = readiness;
        this.jobs = jobs;
    }

    /** Updates the bundle {@code symbolicName} to {@code jar}; 409 with the reason when it had to be rolled back. */
    public synchronized Map<String, Object> update(String symbolicName, byte[] jar) {
        String jarName = symbolicNameOf(jar);
        if (!symbolicName.equals(jarName)) {
            throw ApiException.badRequest("the jar's Bundle-SymbolicName is " + jarName + ", not " + symbolicName);
        }
        Bundle bundle = find(symbolicName);
        if (isKernel(bundle)) {
            throw ApiException.conflict(symbolicName + " is part of the kernel: upgrade it with a restart");
        }
        // a job from here on: what was refused above never started
        try (Jobs.Job job = jobs.start("bundle-update", "Update of " + symbolicName + " to " + versionOf(jar))) {
            try {
                Map<String, Object> m = update(bundle, jar, job);
                job.succeeded("updated from " + m.get("previous_version") + " to " + m.get("version"));
                return m;
            } catch (RuntimeException e) {
                job.failed(e.getMessage() == null ? e.toString() : e.getMessage());
                throw e;
            }
        }
    }

    private Map<String, Object> update(Bundle bundle, byte[] jar, Jobs.Job job) {
        String symbolicName = bundle.getSymbolicName();
        String previousVersion = bundle.getVersion().toString();
        job.progress(0, STEPS, "storing the previous revision");
        byte[] previous = snapshot(bundle);
        boolean wasActive = bundle.getState() == Bundle.ACTIVE || bundle.getState() == Bundle.STARTING;
        FrameworkWiring wiring = context.getBundle(0).adapt(FrameworkWiring.class);
        // the bundles wired to the current revision that run now: refreshed with it, they must run again after
        // the update and after a rollback alike
        List<Bundle> dependants = new ArrayList<>();
        for (Bundle b : wiring.getDependencyClosure(List.of(bundle))) {
            if (b.getBundleId() != bundle.getBundleId() && b.getState() == Bundle.ACTIVE) {
                dependants.add(b);
            }
        }
        String problem = apply(wiring, bundle, jar, wasActive, dependants, job::progress);
        if (problem != null) {
            LOG.warn("update of {} failed ({}); rolling back to {}", symbolicName, problem, previousVersion);
            job.progress(0, STEPS, "rolling back to " + previousVersion + ": " + problem);
            String rollback = apply(wiring, bundle, previous, wasActive, dependants, Steps.NONE);
            job.progress(0, STEPS, rollback == null ? "rolled back to " + previousVersion : "the rollback failed");
            throw ApiException.conflict(
                    "the update of " + symbolicName + " failed and was rolled back to " + previousVersion + ": "
                            + problem + (rollback == null ? "" : "; the rollback also failed: " + rollback));
        }
        LOG.info("updated {} from {} to {}", symbolicName, previousVersion, bundle.getVersion());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("symbolic_name", symbolicName);
        m.put("version", bundle.getVersion().toString());
        m.put("previous_version", previousVersion);
        m.put("state", OperationsResource.state(bundle.getState()));
        return m;
    }

    /** Where a job reports the steps of {@link #apply}; a rollback reports none (its job shows "rolling back"). */
    private interface Steps {
        Steps NONE = (done, total, step) -> {};

        void progress(long done, long total, String step);
    }

    private static List<String> names(List<Bundle> bundles) {
        return bundles.stream().map(Bundle::getSymbolicName).toList();
    }

    private static String versionOf(byte[] jar) {
        try (JarInputStream in = new JarInputStream(new ByteArrayInputStream(jar))) {
            Manifest m = in.getManifest();
            String v = m == null ? null : m.getMainAttributes().getValue("Bundle-Version");
            return v == null ? "0.0.0" : v.trim();
        } catch (IOException e) {
            return "?";
        }
    }

    /** Whether the installed bundle declares the {@code atrium.kernel} capability. */
    static boolean isKernel(Bundle bundle) {
        BundleRevision revision = bundle.adapt(BundleRevision.class);
        return revision != null
                && !revision.getDeclaredCapabilities(KERNEL_NAMESPACE).isEmpty();
    }

    private Bundle find(String symbolicName) {
        for (Bundle b : context.getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        throw ApiException.notFound("no bundle named " + symbolicName);
    }

    /**
     * Installs {@code jar} as the bundle's new revision, refreshes the bundles wired to the old one and waits for
     * all of them to run; returns what went wrong, or null. The bundle stays stopped from before the update until
     * the refresh is done, so readiness (and with it the kernel's update gate) cannot report ready in between,
     * and the new revision is started once, on its final wiring.
     */
    private String apply(
            FrameworkWiring wiring,
            Bundle bundle,
            byte[] jar,
            boolean wasActive,
            List<Bundle> dependants,
            Steps steps) {
        try {
            steps.progress(1, STEPS, "updating");
            if (bundle.getState() == Bundle.ACTIVE || bundle.getState() == Bundle.STARTING) {
                bundle.stop(Bundle.STOP_TRANSIENT);
            }
            bundle.update(new ByteArrayInputStream(jar));
            steps.progress(2, STEPS, "refreshing dependants" + (dependants.isEmpty() ? "" : " " + names(dependants)));
            String refreshed = refresh(wiring, bundle);
            if (refreshed != null) {
                return refreshed;
            }
            if (!wasActive) {
                return null;
            }
            bundle.start();
        } catch (BundleException | IllegalStateException e) {
            return e.getMessage();
        }
        // the refresh restarts the dependants it stopped; one it could not start before (a rollback after a
        // failed update) is started here
        for (Bundle d : dependants) {
            if (d.getState() != Bundle.ACTIVE && d.getState() != Bundle.STARTING) {
                try {
                    d.start();
                } catch (BundleException | IllegalStateException e) {
                    return d.getSymbolicName() + " (wired to it) does not start: " + e.getMessage();
                }
            }
        }
        steps.progress(3, STEPS, "verifying components");
        long deadline = System.currentTimeMillis() + VERIFY_MILLIS;
        List<String> problems = problems(bundle, dependants);
        while (!problems.isEmpty() && System.currentTimeMillis() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
            problems = problems(bundle, dependants);
        }
        if (!problems.isEmpty()) {
            return String.join("; ", problems);
        }
        steps.progress(4, STEPS, "waiting for the server to serve again");
        // done when the server serves again: ready, and the kernel no longer holding requests (an update right after
        // would otherwise close the gate again before the held requests flowed); another bundle's trouble is not
        // this update's failure, so a timeout here is only logged
        while ((!readiness.notReady().isEmpty() || readiness.holdsRequests())
                && System.currentTimeMillis() < deadline) {
            try {
                Thread.sleep(25);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        }
        if (!readiness.notReady().isEmpty()) {
            LOG.warn("{} runs, but the server is not ready: {}", bundle.getSymbolicName(), readiness.notReady());
        }
        return null;
    }

    /** Refreshes {@code bundle} and everything wired to it, waiting (bounded) until the framework is done; null when it was. */
    private static String refresh(FrameworkWiring wiring, Bundle bundle) {
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Throwable> error = new AtomicReference<>();
        wiring.refreshBundles(List.of(bundle), event -> {
            if (event.getType() == FrameworkEvent.ERROR) {
                error.compareAndSet(null, event.getThrowable());
            } else if (event.getType() == FrameworkEvent.PACKAGES_REFRESHED) {
                done.countDown();
            }
        });
        try {
            if (!done.await(REFRESH_MILLIS, TimeUnit.MILLISECONDS)) {
                return "the bundles wired to it were not refreshed within " + REFRESH_MILLIS + " ms";
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
        // an ERROR during the refresh (a dependant that failed to start again) shows in the checks that follow
        if (error.get() != null) {
            LOG.warn(
                    "refreshing the bundles wired to {} reported: {}",
                    bundle.getSymbolicName(),
                    error.get().toString());
        }
        return null;
    }

    private List<String> problems(Bundle bundle, List<Bundle> dependants) {
        List<String> out = problems(bundle);
        for (Bundle d : dependants) {
            for (String p : problems(d)) {
                out.add(d.getSymbolicName() + " (wired to it): " + p);
            }
        }
        return out;
    }

    private List<String> problems(Bundle bundle) {
        List<String> out = new ArrayList<>();
        if (bundle.getState() != Bundle.ACTIVE) {
            out.add("the bundle is not active");
            return out;
        }
        for (ComponentDescriptionDTO d : scr.getComponentDescriptionDTOs(bundle)) {
            for (ComponentConfigurationDTO c : scr.getComponentConfigurationDTOs(d)) {
                if (c.state == ComponentConfigurationDTO.FAILED_ACTIVATION) {
                    out.add("component " + d.name + " failed to activate"
                            + (c.failure == null ? "" : ": " + firstLine(c.failure)));
                } else if (c.state != ComponentConfigurationDTO.ACTIVE
                        && c.state != ComponentConfigurationDTO.SATISFIED) {
                    List<String> refs = new ArrayList<>();
                    for (var u : c.unsatisfiedReferences) {
                        refs.add(u.name);
                    }
                    out.add("component " + d.name + " is not satisfied"
                            + (refs.isEmpty() ? "" : " (waiting for " + refs + ")"));
                }
            }
        }
        return out;
    }

    private static String firstLine(String s) {
        int n = s.indexOf('\n');
        return n < 0 ? s : s.substring(0, n);
    }

    static String symbolicNameOf(byte[] jar) {
        try (JarInputStream in = new JarInputStream(new ByteArrayInputStream(jar))) {
            Manifest m = in.getManifest();
            String bsn = m == null ? null : m.getMainAttributes().getValue("Bundle-SymbolicName");
            if (bsn == null) {
                throw ApiException.badRequest(
                        "the body is not an OSGi bundle jar (no Bundle-SymbolicName in its manifest)");
            }
            return bsn.split(";")[0].trim();
        } catch (IOException e) {
            throw ApiException.badRequest("the body is not a readable jar: " + e.getMessage());
        }
    }

    /** The bundle's current revision as a jar, to put back if the update fails. */
    private static byte[] snapshot(Bundle bundle) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (InputStream mf = bundle.getEntry("META-INF/MANIFEST.MF").openStream();
                    JarOutputStream out = new JarOutputStream(bytes, new Manifest(mf))) {
                Enumeration<URL> entries = bundle.findEntries("/", "*", true);
                for (URL url : entries == null ? List.<URL>of() : Collections.list(entries)) {
                    String path = url.getPath().startsWith("/") ? url.getPath().substring(1) : url.getPath();
                    if (path.endsWith("/") || path.equals("META-INF/MANIFEST.MF")) {
                        continue;
                    }
                    out.putNextEntry(new JarEntry(path));
                    try (InputStream in = url.openStream()) {
                        in.transferTo(out);
                    }
                    out.closeEntry();
                }
            }
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot keep a copy of " + bundle.getSymbolicName() + ": " + e.getMessage(), e);
        }
    }
}
