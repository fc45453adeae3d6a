package dev.atrium.skills.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceArchivePart;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * A workspace's own skills in a workspace archive: {@code skills/skills.jsonl}, one skill a line (the official catalog
 * ships with the server and is not in it). An import checks each skill as a create does.
 */
@Component(service = WorkspaceArchivePart.class)
public class SkillsArchivePart implements WorkspaceArchivePart {

    static final String ENTRY = "skills.jsonl";
    private static final List<String> FIELDS = List.of("name", "description", "instructions", "tools", "enabled");

    private final SkillStore store;
    private final OfficialSkills catalog;

    @Activate
    public SkillsArchivePart(@Reference SkillStore store, @Reference OfficialSkills catalog) {
        this.store = store;
        this.catalog = catalog;
    }

    @Override
    public String name() {
        return "skills";
    }

    @Override
    public long export(SpaceRef space, ArchiveWriter out) throws IOException {
        Lines lines = out.lines(ENTRY);
        long n = 0;
        for (SkillStore.Skill s : store.all(space.id())) {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("name", s.name());
            line.put("description", s.description());
            line.put("instructions", s.instructions());
            line.put("tools", s.tools());
            line.put("enabled", s.enabled());
            line.put("source", s.source());
            lines.add(line);
            n++;
        }
        return n;
    }

    @Override
    public long restore(SpaceRef space, ArchiveReader in) throws IOException {
        long[] n = {0};
        in.lines(ENTRY, line -> {
            // the fields a create takes, checked as a create checks them; source (the official skill it came from) as
            // is
            ObjectNode fields = line.deepCopy();
            fields.retain(FIELDS);
            SkillInput checked = SkillInput.of(fields, null, null, catalog);
            String source = JsonBody.of(line).optionalText("source", 1, 64).orElse(null);
            store.create(
                    space.id(),
                    new SkillInput(
                            checked.name(),
                            checked.description(),
                            checked.instructions(),
                            checked.tools(),
                            checked.enabled(),
                            source));
            n[0]++;
        });
        return n[0];
    }

    @Override
    public void discard(SpaceRef space) {
        store.deleteAll(space.id());
    }
}
