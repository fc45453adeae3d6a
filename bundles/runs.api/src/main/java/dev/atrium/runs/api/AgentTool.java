package dev.atrium.runs.api;

import java.util.Set;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A tool an agent run may call. The run's tool executor offers it only when the run holds every grant in
 * {@link #requiredGrants()} (a {@code restricted_egress} workspace never holds {@code egress.http}), and
 * calls it only after re-verifying the run's requester Principal and owner witness.
 */
@ConsumerType
public interface AgentTool {

    /** The name the model calls it by ({@code [a-z0-9_]+}). */
    String name();

    String description();

    /** A JSON Schema object's text describing the arguments. */
    String parametersSchema();

    /** Grants the run must hold, e.g. {@code egress.http}. */
    Set<String> requiredGrants();

    /**
     * @param context   the run and its proven workspace
     * @param arguments the arguments as JSON object text (may be malformed: say so in the exception)
     * @return the result text handed to the model
     * @throws Exception the message becomes an error result the model sees
     */
    String execute(Context context, String arguments) throws Exception;

    /**
     * @param runId       the run
     * @param threadId    its thread
     * @param spaceId     the workspace, proven for the requester just before this call
     * @param principalId the run's requester
     * @param grants      the grants the run holds
     */
    record Context(String runId, String threadId, String spaceId, String principalId, Set<String> grants) {}
}
