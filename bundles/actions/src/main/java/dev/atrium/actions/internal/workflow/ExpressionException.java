package dev.atrium.actions.internal.workflow;

/** An expression that does not parse, or calls a function that is unknown or not supported. */
public final class ExpressionException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final int position;

    ExpressionException(String message, int position) {
        super(message);
        this.position = position;
    }

    /** 0-based offset of the problem in the text given to {@link Expressions}. */
    public int position() {
        return position;
    }
}
