package dev.atrium.skills.api;

import dev.atrium.kernel.api.SpaceRef;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A workspace's enabled skills as a run's system prompt takes them (the same text as
 * {@code GET /api/spaces/:spaceId/skills-context}): each enabled skill whole, bounded in size. Registered by the
 * skills capability while it is enabled.
 */
@ProviderType
public interface SkillsPrompt {

    /**
     *Returns the skills section of the system prompt; empty when the workspace has no enabled skill.
     * @param space the run's workspace, as the kernel proved it for the run's requester
     *
     */
    String forSpace(SpaceRef space);
}
