package dev.atrium.actions.internal.workflow;

/**
 * {@code jobs.<id>.strategy}.
 *
 * @param failFast whether one failing combination cancels the others (GitHub's default: true)
 * @param maxParallel how many combinations run at once; 0 is unlimited
 */
public record Strategy(Matrix matrix, boolean failFast, int maxParallel) {}
