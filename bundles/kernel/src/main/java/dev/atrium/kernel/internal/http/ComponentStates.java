package dev.atrium.kernel.internal.http;

import java.util.ArrayList;
import java.util.List;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;

/** What keeps Atrium's bundles and their components from running: the part of readiness that is not the whiteboard. */
final class ComponentStates {

    private static final String ATRIUM = "dev.atrium.";

    private ComponentStates() {}

    /**
     * Every Atrium bundle that should run (persistently started, not a fragment) and is not active; when they all are,
     * every enabled component of theirs that is neither satisfied nor active. The bundles are looked at first: while
     * one is not active, the component DTOs (the costlier walk) are not asked for.
     */
    static List<String> problems(BundleContext context, ServiceComponentRuntime scr) {
        List<String> problems = new ArrayList<>();
        List<Bundle> atrium = new ArrayList<>();
        for (Bundle b : context.getBundles()) {
            // a bundle the operator stopped (a disabled feature) is not persistently started and is not expected to run
            if (b.getSymbolicName() != null
                    && b.getSymbolicName().startsWith(ATRIUM)
                    && b.getHeaders().get("Fragment-Host") == null
                    && b.adapt(BundleStartLevel.class).isPersistentlyStarted()) {
                atrium.add(b);
                if (b.getState() != Bundle.ACTIVE) {
                    problems.add(b.getSymbolicName() + " is not active");
                }
            }
        }
        if (!problems.isEmpty()) {
            return problems;
        }
        for (Bundle b : atrium) {
            for (ComponentDescriptionDTO d : scr.getComponentDescriptionDTOs(b)) {
                if (!scr.isComponentEnabled(d)) {
                    continue;
                }
                var configs = scr.getComponentConfigurationDTOs(d);
                // a component that requires a configuration nobody gave (the S3 BlobStore, unconfigured) was not asked
                // for
                if (configs.isEmpty() && !"require".equals(d.configurationPolicy)) {
                    problems.add(d.name + " has no configuration");
                }
                for (ComponentConfigurationDTO c : configs) {
                    if (c.state != ComponentConfigurationDTO.ACTIVE && c.state != ComponentConfigurationDTO.SATISFIED) {
                        StringBuilder why = new StringBuilder(d.name).append(" is not satisfied");
                        for (var u : c.unsatisfiedReferences) {
                            why.append(" (waiting for ").append(u.name).append(')');
                        }
                        problems.add(why.toString());
                    }
                }
            }
        }
        return problems;
    }
}
