package dev.atrium.apps.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.storage.api.FileHandlerSource;
import java.util.ArrayList;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The file handlers of a workspace's deployed apps, offered to storage: the {@code file_handler} rows of its groups'
 * inventories, read from the database each time, so every server lists what the last apply wrote.
 */
@Component(service = FileHandlerSource.class)
public class AppFileHandlers implements FileHandlerSource {

    private final AppStore store;

    @Activate
    public AppFileHandlers(@Reference AppStore store) {
        this.store = store;
    }

    @Override
    public List<FileHandler> handlers(String spaceId) {
        List<FileHandler> out = new ArrayList<>();
        for (AppStore.PlacedObject p : store.objectsInSpace(spaceId, GroupReconciler.FILE_HANDLER)) {
            JsonNode d = p.object().detail();
            if (!d.path("url").isTextual()) {
                continue; // recorded by an apply that had not reached it
            }
            List<String> types = new ArrayList<>();
            d.path("mime_types").forEach(t -> types.add(t.asText()));
            List<String> extensions = new ArrayList<>();
            // the manifest writes them with their dot (".md"), storage's built-in handlers without ("md")
            d.path("extensions").forEach(e -> extensions.add(e.asText().replaceFirst("^\\.", "")));
            out.add(new FileHandler(
                    "app-" + p.groupName() + "-" + p.object().key(),
                    p.object().key(),
                    p.appId(),
                    types,
                    extensions,
                    d.path("url").asText()));
        }
        return out;
    }
}
