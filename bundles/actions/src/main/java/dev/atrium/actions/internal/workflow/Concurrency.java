package dev.atrium.actions.internal.workflow;

/**
 * A concurrency group: runs (or jobs) of one group run one at a time.
 *
 * @param group may hold {@code ${{ }}} expressions, evaluated when the run starts
 * @param cancelInProgress whether a new one cancels the one in progress rather than waiting
 */
public record Concurrency(String group, boolean cancelInProgress) {}
