package dev.atrium.skills.internal;

import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.skills.api.SkillsPrompt;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@link SkillsPrompt} for runs: the same text as {@code GET /api/spaces/:spaceId/skills-context}. */
@Component(service = SkillsPrompt.class)
public class SkillsPromptService implements SkillsPrompt {

    private final SkillsContext context;

    @Activate
    public SkillsPromptService(@Reference SkillsContext context) {
        this.context = context;
    }

    @Override
    public String forSpace(SpaceRef space) {
        return context.of(space.id()).text();
    }
}
