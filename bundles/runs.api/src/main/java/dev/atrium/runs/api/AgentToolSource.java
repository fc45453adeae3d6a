package dev.atrium.runs.api;

import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Tools that depend on the run's workspace (since 1.3), e.g. those of the workspace's MCP servers: the run's tool
 * executor asks every registered source on each model turn, with the context it has just proven, and offers and runs
 * what it answers exactly as it does a registered {@link AgentTool} (only with every grant the tool requires). A name
 * a registered {@link AgentTool} already has is never taken by a source's tool.
 */
@ConsumerType
public interface AgentToolSource {

    /**
     *Returns the tools this run may be offered now (empty when none); must answer quickly (a cache, not the network).
     * @param context the run and its workspace, proven for the requester just before the call
     *
     */
    List<AgentTool> tools(AgentTool.Context context);
}
