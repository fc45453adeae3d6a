package dev.atrium.actions.internal.workflow;

/**
 * {@code defaults.run} of a workflow or a job.
 *
 * @param shell null when not set
 * @param workingDirectory null when not set
 */
public record Defaults(String shell, String workingDirectory) {

    public static final Defaults NONE = new Defaults(null, null);

    /** These defaults with each unset one taken from {@code outer} (a job's over its workflow's). */
    public Defaults orElse(Defaults outer) {
        return new Defaults(
                shell != null ? shell : outer.shell(),
                workingDirectory != null ? workingDirectory : outer.workingDirectory());
    }
}
