package dev.atrium.skills.api;

import org.osgi.annotation.versioning.ProviderType;

import dev.atrium.kernel.api.SpaceRef;

/**
 * A workspace's enabled skills as a run's system prompt takes them (the same text as
 * {@code GET /api/spaces/:spaceId/skills-context}): each enabled skill whole, bounded in size. Registered by the
 * skills capability while it is enabled.
 */
@ProviderType
public interface SkillsPrompt {

    /**
     * @param space the run's workspace, as the kernel proved it for the run's requester
     * @return the skills section of the system prompt; empty when the workspace has no enabled skill
     */
    String forSpace(SpaceRef space);
}
