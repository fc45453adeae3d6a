package dev.atrium.storage.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.storage.api.WorkspaceFiles;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@link WorkspaceFiles} on the storage the routes use: the same path rules, limits and quota. */
@Component(service = WorkspaceFiles.class)
public class WorkspaceFilesService implements WorkspaceFiles {

    private final Storage storage;

    @Activate
    public WorkspaceFilesService(@Reference Storage storage) {
        this.storage = storage;
    }

    @Override
    public StoredFile write(String spaceId, String path, byte[] content, String contentType) throws IOException {
        try {
            String normal = Paths.normalise("path", path, false);
            Entry file = storage.write(
                    spaceId,
                    new Storage.Target(Paths.parent(normal), Paths.last(normal)),
                    null,
                    true,
                    new ByteArrayInputStream(content),
                    content.length,
                    contentType,
                    null);
            return new StoredFile(file.id(), file.path(), file.size(), file.sha256());
        } catch (ApiException e) {
            throw new IOException(e.getMessage(), e);
        }
    }
}
