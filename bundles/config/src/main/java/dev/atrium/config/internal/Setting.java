package dev.atrium.config.internal;

import java.util.List;

/**
 * One configuration property of one PID and where its value comes from when the operator's configuration does not
 * set it: the first of {@code sources} that is set and not blank, else {@code fallback} (null: the component's own
 * default).
 */
record Setting(String property, Kind kind, List<Source> sources, String fallback) {

    /** How the text of a source becomes the typed value the component's configuration record expects. */
    enum Kind {
        STRING("a string"),
        INTEGER("an integer"),
        LONG("an integer"),
        BOOLEAN("true or false"),
        /** A directory, made absolute against the process's working directory. */
        DIRECTORY("a directory");

        final String expected;

        Kind(String expected) {
            this.expected = expected;
        }
    }

    /** An environment variable or a framework (else system) property. */
    record Source(boolean environment, String name) {
        static Source env(String name) {
            return new Source(true, name);
        }

        static Source property(String name) {
            return new Source(false, name);
        }

        @Override
        public String toString() {
            return environment ? "environment variable " + name : "framework property " + name;
        }
    }

    static Setting of(String property, Kind kind, Source... sources) {
        return new Setting(property, kind, List.of(sources), null);
    }
}
