package dev.atrium.runs.internal;

import java.util.Set;

import dev.atrium.kernel.api.Caller;

/**
 * The caller a run acts as: its recorded requester Principal. The kernel's owner scope proves it again (Principal
 * active, workspace active and owned, witness active) every time the run starts or calls a tool.
 */
record RunCaller(String principalId) implements Caller {

    @Override
    public String authMethod() {
        return "run";
    }

    @Override
    public Set<String> scopes() {
        return Set.of("threads:read", "threads:write");
    }

    @Override
    public String getName() {
        return principalId;
    }
}
