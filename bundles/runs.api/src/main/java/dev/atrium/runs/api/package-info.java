/**
 * The agent-run SPIs: {@link dev.atrium.runs.api.ModelProvider} (a model API the run loop talks to) and
 * {@link dev.atrium.runs.api.AgentTool} (a tool the model may call). Both are registered as OSGi services. A tool reads
 * its arguments with {@link dev.atrium.runs.api.ToolArguments}. {@link dev.atrium.runs.api.RunStarter} (since 1.2) starts a
 * run on a thread for a Principal from another capability. {@link dev.atrium.runs.api.AgentToolSource} (since 1.3)
 * offers tools that depend on the run's workspace. {@link dev.atrium.runs.api.RunEvents} (since 1.5) names the
 * EventAdmin topic of a run's end, and {@link dev.atrium.runs.api.RunStarter#status} reads a run's status.
 */
@org.osgi.annotation.versioning.Version("1.5.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.runs.api;
