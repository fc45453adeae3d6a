package dev.atrium.actions.internal.workflow;

/** A parsed expression (the text inside {@code ${{ }}}); immutable, evaluated any number of times. */
public interface Expression {

    /** The value: null, Boolean, Number, String, or a Map/List from a context or fromJSON. */
    Object evaluate(Context context);

    /** Whether it calls success(), failure(), cancelled() or always(), which turns off the implicit success(). */
    boolean callsStatusFunction();

    /** The named contexts it reads (lower case), e.g. {@code matrix}. */
    java.util.Set<String> contexts();
}
