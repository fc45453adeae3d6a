package dev.atrium.deploy.api;

import java.time.Instant;

/**
 * One line a deployment wrote.
 *
 * @param seq          increasing per service, never reused, so a reader can page and resume after a given line
 * @param at           when it was written
 * @param deploymentId which deployment wrote it
 * @param level        {@code log}, {@code info}, {@code warn}, {@code error} or {@code debug}
 * @param message      the text
 */
public record LogLine(long seq, Instant at, String deploymentId, String level, String message) {}
