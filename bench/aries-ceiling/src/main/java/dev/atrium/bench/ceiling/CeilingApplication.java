package dev.atrium.bench.ceiling;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

import javax.ws.rs.core.Application;

import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsApplicationBase;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsName;

/**
 * What bench/run.sh compares Atrium's API with: a JAX-RS application of its own at /bench, in the same runtime
 * (Jetty, HTTP whiteboard, Aries JAX-RS/CXF), serving {@link CeilingResource} at /bench/ceiling. An application
 * of its own because the kernel's extension (authentication, error mapping) is registered in the default
 * application and CXF applies it to every resource there, selected or not.
 */
@Component(service = Application.class)
@JaxrsApplicationBase("bench")
@JaxrsName("bench-ceiling")
public class CeilingApplication extends Application {

    private final Set<Object> singletons;

    @Activate
    public CeilingApplication(BundleContext context) {
        // bench/run.sh writes the body Atrium answered into the data dir before it deploys this bundle
        Path file = Path.of(context.getProperty("atrium.data"), "bench-ceiling.json");
        try {
            singletons = Set.of(new CeilingResource(Files.readAllBytes(file)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Set<Object> getSingletons() {
        return singletons;
    }
}
