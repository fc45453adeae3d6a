/**
 * What other capabilities use of the skills capability: {@link dev.atrium.skills.api.SkillsPrompt}, the text a run's
 * system prompt gets of its workspace's enabled skills. Users import this package with {@code resolution:=optional}
 * and reference the service optionally and dynamically: while the skills capability is disabled there is no service,
 * and a run has no skills.
 */
@org.osgi.annotation.versioning.Version("1.0.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.skills.api;
