package dev.atrium.actions.internal.workflow;

/** A workflow file that cannot run: its message names the file, the line and the key. */
public final class WorkflowException extends Exception {

    private static final long serialVersionUID = 1L;

    private final int line;
    private final int column;

    /**
     * @param line 1-based, 0 when unknown
     * @param column 1-based, 0 when unknown
     */
    public WorkflowException(String path, int line, int column, String problem) {
        super(path + (line > 0 ? " line " + line : "") + ": " + problem);
        this.line = line;
        this.column = column;
    }

    /** 1-based line of the problem, 0 when unknown. */
    public int line() {
        return line;
    }

    /** 1-based column of the problem, 0 when unknown. */
    public int column() {
        return column;
    }
}
