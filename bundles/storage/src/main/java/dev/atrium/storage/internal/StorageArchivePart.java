package dev.atrium.storage.internal;

import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceArchivePart;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * A workspace's files in a workspace archive: each file's bytes in {@code storage/content/<n>} as they stream from the
 * blob store, then {@code storage/files.jsonl} with every folder and file by path ({@code content} names a file's
 * bytes). The listing is kept until the end (paths and types, not bytes) because the bytes go first: an entry cannot
 * be reopened once the next one starts. An import writes each file as an upload does, under the quota.
 */
@Component(service = WorkspaceArchivePart.class)
public class StorageArchivePart implements WorkspaceArchivePart {

    static final String LISTING = "files.jsonl";
    private static final int PAGE = 500;
    private static final Set<String> KINDS = Set.of("file", "folder");

    private final Storage storage;

    @Activate
    public StorageArchivePart(@Reference Storage storage) {
        this.storage = storage;
    }

    @Override
    public String name() {
        return "storage";
    }

    @Override
    public long export(SpaceRef space, ArchiveWriter out) throws IOException {
        List<Map<String, Object>> listing = new ArrayList<>();
        String after = "";
        int files = 0;
        while (true) {
            List<Entry> page = storage.subtreePage(space.id(), "", after, PAGE);
            for (Entry e : page) {
                Map<String, Object> line = new LinkedHashMap<>();
                line.put("path", e.path());
                line.put("kind", e.kind());
                if (!e.folder()) {
                    files++;
                    String content = "content/" + files;
                    try (InputStream in = storage.open(e, 0, e.size());
                            OutputStream bytes = out.entry(content)) {
                        in.transferTo(bytes);
                    }
                    line.put("content", content);
                    line.put("size", e.size());
                    line.put("content_type", e.contentType());
                    line.put("sha256", e.sha256());
                }
                listing.add(line);
            }
            if (page.size() < PAGE) {
                break;
            }
            after = page.get(page.size() - 1).path();
        }
        Lines lines = out.lines(LISTING);
        for (Map<String, Object> line : listing) {
            lines.add(line);
        }
        return listing.size();
    }

    @Override
    public long restore(SpaceRef space, ArchiveReader in) throws IOException {
        long[] n = {0};
        in.lines(LISTING, line -> {
            JsonBody b = JsonBody.of(line);
            String path = Paths.normalise("storage: path", b.requiredString("path"), false);
            String kind = b.oneOf("kind", KINDS).orElse("file");
            Storage.Target target = new Storage.Target(Paths.parent(path), Paths.last(path));
            if (kind.equals("folder")) {
                // a file's upload makes the folders above it; one listed on its own (an empty one) is made here
                if (storage.byPath(space.id(), path).isEmpty()) {
                    storage.createFolder(space.id(), target);
                }
            } else {
                String type = b.string("content_type")
                        .map(StorageResource::contentType)
                        .orElse(null);
                try (InputStream bytes = in.open(b.requiredString("content"))) {
                    storage.write(space.id(), target, null, false, bytes, -1, type, null);
                }
            }
            n[0]++;
        });
        return n[0];
    }

    @Override
    public void discard(SpaceRef space) {
        storage.deleteAll(space.id());
    }
}
