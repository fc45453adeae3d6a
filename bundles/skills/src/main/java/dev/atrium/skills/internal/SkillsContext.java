package dev.atrium.skills.internal;

import dev.atrium.skills.internal.SkillStore.Skill;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * What a run's system prompt gets of a workspace's skills: its enabled skills by name, each whole (name, description,
 * tools, instructions), as long as they fit in {@value #MAX_CHARS} characters; the ones that do not fit are named in
 * {@code omitted}, never cut in the middle.
 */
@Component(service = SkillsContext.class)
public class SkillsContext {

    static final int MAX_CHARS = 16_000;
    static final String HEADER =
            "# Skills\n\nThis workspace has these skills. When a request matches a skill's description, follow its instructions.\n";

    private final SkillStore store;

    @Activate
    public SkillsContext(@Reference SkillStore store) {
        this.store = store;
    }

    record Context(String text, List<String> skills, List<String> omitted) {
        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("context", text);
            m.put("skills", skills);
            m.put("omitted", omitted);
            m.put("truncated", !omitted.isEmpty());
            m.put("max_chars", MAX_CHARS);
            return m;
        }
    }

    Context of(String spaceId) {
        return build(store.enabled(spaceId, SkillStore.MAX_PER_SPACE));
    }

    static Context build(List<Skill> enabled) {
        if (enabled.isEmpty()) {
            return new Context("", List.of(), List.of());
        }
        StringBuilder text = new StringBuilder(HEADER);
        List<String> included = new ArrayList<>();
        List<String> omitted = new ArrayList<>();
        for (Skill s : enabled) {
            String section = "\n## " + s.name() + "\n\n" + s.description() + "\n"
                    + (s.tools().isEmpty() ? "" : "Tools: " + String.join(", ", s.tools()) + "\n") + "\n"
                    + s.instructions() + "\n";
            if (text.length() + section.length() <= MAX_CHARS) {
                text.append(section);
                included.add(s.name());
            } else {
                omitted.add(s.name());
            }
        }
        return new Context(included.isEmpty() ? "" : text.toString(), included, omitted);
    }
}
