package dev.atrium.shortcuts.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceArchivePart;
import dev.atrium.shortcuts.internal.ShortcutStore.Group;
import dev.atrium.shortcuts.internal.ShortcutStore.Item;
import dev.atrium.shortcuts.internal.ShortcutStore.Link;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * A workspace's shortcut groups in a workspace archive: {@code shortcuts/groups.jsonl}, one group a line in their order,
 * with its items in theirs. A user's own shortcuts belong to the user, not the workspace, and are not in it.
 */
@Component(service = WorkspaceArchivePart.class)
public class ShortcutsArchivePart implements WorkspaceArchivePart {

    static final String ENTRY = "groups.jsonl";

    private final ShortcutStore store;

    @Activate
    public ShortcutsArchivePart(@Reference ShortcutStore store) {
        this.store = store;
    }

    @Override
    public String name() {
        return "shortcuts";
    }

    @Override
    public long export(SpaceRef space, ArchiveWriter out) throws IOException {
        Lines lines = out.lines(ENTRY);
        long n = 0;
        for (Group g : store.groups(space.id())) {
            List<Map<String, Object>> items = new ArrayList<>();
            for (Item i : g.items()) {
                Map<String, Object> item = new LinkedHashMap<>();
                item.put("title", i.title());
                item.put("url", i.url());
                item.put("icon", i.icon());
                items.add(item);
            }
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("name", g.name());
            line.put("items", items);
            lines.add(line);
            n++;
        }
        return n;
    }

    @Override
    public long restore(SpaceRef space, ArchiveReader in) throws IOException {
        long[] n = {0};
        in.lines(ENTRY, line -> {
            String name = JsonBody.of(line).text("name", 1, SpaceShortcutGroupsResource.MAX_NAME);
            List<Link> items = new ArrayList<>();
            JsonNode itemsNode = line.get("items");
            if (itemsNode != null && !itemsNode.isNull()) {
                if (!itemsNode.isArray() || itemsNode.size() > ShortcutStore.MAX_ITEMS) {
                    throw ApiException.badRequest("shortcuts: items must be a list of at most "
                            + ShortcutStore.MAX_ITEMS + " {title, url, icon}");
                }
                for (JsonNode item : itemsNode) {
                    items.add(Links.from(item));
                }
            }
            store.createGroup(space.id(), name, items);
            n[0]++;
        });
        return n[0];
    }

    @Override
    public void discard(SpaceRef space) {
        store.deleteGroups(space.id());
    }
}
