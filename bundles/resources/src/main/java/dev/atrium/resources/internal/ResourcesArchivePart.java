package dev.atrium.resources.internal;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceArchivePart;
import dev.atrium.resource.api.ResourceException;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resources' definitions in a workspace archive: {@code resources/resources.jsonl}, one resource a line with its name,
 * type, backend and configuration as stored (write-only fields are never stored, so never in it). Not in it: the data a
 * resource holds (keys, rows, objects, messages), its tokens and grants, its bindings (to services, another part's ids)
 * and any secret value: a {@code secretRef} is written by name and type only, and an import cannot make it without its
 * value, so it leaves it out (the part's count says how many it made).
 */
@Component(service = WorkspaceArchivePart.class)
public class ResourcesArchivePart implements WorkspaceArchivePart {

    static final String ENTRY = "resources.jsonl";
    static final String SECRET_REF = "secretRef";
    private static final Logger LOG = LoggerFactory.getLogger(ResourcesArchivePart.class);

    private final ResourceStore store;
    private final Directory directory;

    @Activate
    public ResourcesArchivePart(@Reference ResourceStore store, @Reference Directory directory) {
        this.store = store;
        this.directory = directory;
    }

    @Override
    public String name() {
        return "resources";
    }

    @Override
    public long export(SpaceRef space, ArchiveWriter out) throws IOException {
        Lines lines = out.lines(ENTRY);
        long n = 0;
        for (ResourceRow r : store.list(space.id(), null, Integer.MAX_VALUE, 0)) {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("name", r.name);
            line.put("type", r.type);
            if (!SECRET_REF.equals(r.type)) {
                line.put("backend", r.backend);
                line.put("config", Runtime.parse(r.config));
            }
            lines.add(line);
            n++;
        }
        return n;
    }

    @Override
    public long restore(SpaceRef space, ArchiveReader in) throws IOException {
        long[] n = {0};
        in.lines(ENTRY, line -> {
            JsonBody b = JsonBody.of(line);
            String name = b.text("name", 1, 64);
            String type = b.text("type", 1, 40);
            if (SECRET_REF.equals(type)) {
                LOG.info(
                        "resources: the secretRef {} is not imported into {}: the archive has no secret values",
                        name,
                        space.id());
                return;
            }
            String backend = b.optionalText("backend", 1, 40).orElse(null);
            Map<String, Object> config = config(line.get("config"));
            try {
                directory.lifecycle().create(space.id(), type, backend, name, config);
            } catch (ResourceLifecycle.BadInput | ResourceLifecycle.NameTaken e) {
                throw ApiException.badRequest("resources: " + name + ": " + e.getMessage());
            } catch (ResourceException e) {
                throw Runtime.answer(e);
            }
            n[0]++;
        });
        return n[0];
    }

    private static Map<String, Object> config(JsonNode c) {
        if (c == null || c.isNull()) {
            return Map.of();
        }
        if (!c.isObject()) {
            throw ApiException.badRequest("resources: config must be a JSON object");
        }
        return Runtime.JSON.convertValue(c, new TypeReference<Map<String, Object>>() {});
    }

    @Override
    public void discard(SpaceRef space) {
        List<ResourceRow> rows = store.list(space.id(), null, Integer.MAX_VALUE, 0);
        for (ResourceRow r : rows) {
            try {
                directory.lifecycle().delete(r);
            } catch (ResourceException | RuntimeException e) {
                LOG.warn("resources: {} of a failed import could not be deleted: {}", r.id, e.toString());
            }
        }
    }
}
