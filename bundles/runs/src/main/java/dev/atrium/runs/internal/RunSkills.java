package dev.atrium.runs.internal;

import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.skills.api.SkillsPrompt;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The skills section of a run's system prompt, from the skills capability. Its {@link SkillsPrompt} service is tracked
 * as {@link RunNotices} tracks notifications, optionally and dynamically (its package imported optionally): with the
 * skills capability disabled a run has no skills section, and nothing fails.
 */
@Component(service = RunSkills.class)
public class RunSkills {

    private static final Logger LOG = LoggerFactory.getLogger(RunSkills.class);

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile SkillsPrompt skills;

    /** The workspace's skills section, or empty when there is none (or no skills capability). */
    String forSpace(SpaceRef space) {
        SkillsPrompt s = skills;
        if (s == null) {
            return "";
        }
        try {
            String text = s.forSpace(space);
            return text == null ? "" : text;
        } catch (RuntimeException e) {
            // skills are an addition to the prompt, never worth a run: it goes on without them
            LOG.warn("reading the skills of workspace {} failed", space.id(), e);
            return "";
        }
    }
}
