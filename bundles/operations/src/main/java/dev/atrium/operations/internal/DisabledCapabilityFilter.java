package dev.atrium.operations.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.JsonMappers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.FilterConfig;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardContextSelect;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterAsyncSupported;
import org.osgi.service.http.whiteboard.propertytypes.HttpWhiteboardFilterPattern;

/** Answers every route of a disabled capability with 404 naming it, before any servlet sees the request. */
@Component(service = Filter.class)
@HttpWhiteboardFilterPattern("/api/*")
@HttpWhiteboardFilterAsyncSupported
@HttpWhiteboardContextSelect("(osgi.http.whiteboard.context.name=*)")
public class DisabledCapabilityFilter implements Filter {

    private static final ObjectMapper JSON = JsonMappers.create();

    private final FeatureSwitch features;

    @Activate
    public DisabledCapabilityFilter(@Reference FeatureSwitch features) {
        this.features = features;
    }

    @Override
    public void init(FilterConfig config) {
        // nothing to set up
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        Optional<Feature> disabled = features.disabledOwner(request.getRequestURI());
        if (disabled.isEmpty()) {
            chain.doFilter(req, res);
            return;
        }
        byte[] body = JSON.writeValueAsString(Map.of(
                        "error",
                        Map.of(
                                "code",
                                "NOT_FOUND",
                                "message",
                                "the " + disabled.get().name() + " capability is disabled on this server")))
                .getBytes(StandardCharsets.UTF_8);
        HttpServletResponse response = (HttpServletResponse) res;
        response.setStatus(404);
        response.setContentType("application/json");
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    @Override
    public void destroy() {
        // nothing held
    }
}
