package dev.atrium.storage.internal;

import dev.atrium.storage.api.FileHandlerSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.osgi.framework.BundleContext;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.util.tracker.ServiceTracker;

/**
 * Which viewer opens which files: the built-in ones (text, markdown, image, PDF), those of every workspace registered
 * as OSGi services carrying the property {@value #ID} (its handler's id) and optionally {@value #NAME}, {@value
 * #MIME_TYPES} and {@value #EXTENSIONS} (String or String[]) and {@value #APP}, and a workspace's own from each
 * {@link FileHandlerSource} (the app platform's deployed apps): both whiteboards, so storage never imports a package
 * of the bundles that contribute.
 */
@Component(service = FileHandlers.class)
public class FileHandlers {

    static final String ID = "atrium.storage.file.handler";
    static final String NAME = "atrium.storage.file.handler.name";
    static final String MIME_TYPES = "atrium.storage.file.handler.mime.types";
    static final String EXTENSIONS = "atrium.storage.file.handler.extensions";
    static final String APP = "atrium.storage.file.handler.app";

    record Handler(
            String id,
            String name,
            String kind,
            String appId,
            List<String> mimeTypes,
            List<String> extensions,
            String url) {
        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("name", name);
            m.put("kind", kind);
            m.put("app_id", appId);
            m.put("mime_types", mimeTypes);
            m.put("extensions", extensions);
            m.put("url", url);
            return m;
        }
    }

    static final List<Handler> BUILT_IN = List.of(
            new Handler(
                    "text",
                    "Text",
                    "builtin",
                    null,
                    List.of("text/plain", "text/csv", "application/json", "application/yaml", "text/*"),
                    List.of(
                            "txt", "csv", "json", "yaml", "yml", "log", "xml", "js", "ts", "java", "py", "sh", "toml",
                            "ini"),
                    null),
            new Handler(
                    "markdown", "Markdown", "builtin", null, List.of("text/markdown"), List.of("md", "markdown"), null),
            new Handler(
                    "image",
                    "Image",
                    "builtin",
                    null,
                    List.of("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"),
                    List.of("png", "jpg", "jpeg", "gif", "webp", "svg"),
                    null),
            new Handler("pdf", "PDF", "builtin", null, List.of("application/pdf"), List.of("pdf"), null));

    private final ServiceTracker<Object, Object> registered;

    @Reference(
            service = FileHandlerSource.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile List<FileHandlerSource> sources = new CopyOnWriteArrayList<>();

    @Activate
    public FileHandlers(BundleContext context) throws InvalidSyntaxException {
        registered = new ServiceTracker<>(context, FrameworkUtil.createFilter("(" + ID + "=*)"), null);
        registered.open(true);
    }

    @Deactivate
    void deactivate() {
        registered.close();
    }

    /** The handlers of workspace {@code spaceId}, which the caller has proven. */
    List<Handler> all(String spaceId) {
        List<Handler> out = new ArrayList<>(BUILT_IN);
        ServiceReference<Object>[] refs = registered.getServiceReferences();
        if (refs != null) {
            Arrays.sort(refs, (a, b) -> String.valueOf(a.getProperty(ID)).compareTo(String.valueOf(b.getProperty(ID))));
            for (ServiceReference<Object> r : refs) {
                String id = String.valueOf(r.getProperty(ID));
                Object name = r.getProperty(NAME);
                Object app = r.getProperty(APP);
                out.add(new Handler(
                        id,
                        name == null ? id : name.toString(),
                        "app",
                        app == null ? null : app.toString(),
                        strings(r.getProperty(MIME_TYPES)),
                        strings(r.getProperty(EXTENSIONS)),
                        null));
            }
        }
        for (FileHandlerSource source : sources) {
            for (FileHandlerSource.FileHandler h : source.handlers(spaceId)) {
                out.add(new Handler(h.id(), h.name(), "app", h.appId(), h.mimeTypes(), h.extensions(), h.url()));
            }
        }
        return out;
    }

    private static List<String> strings(Object value) {
        if (value == null) {
            return List.of();
        }
        if (value instanceof String[] a) {
            return List.of(a);
        }
        if (value instanceof java.util.Collection<?> c) {
            return c.stream().map(String::valueOf).toList();
        }
        return List.of(value.toString());
    }
}
