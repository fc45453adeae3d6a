package dev.atrium.actions.internal.workflow;

import java.util.List;

/**
 * An input of {@code workflow_dispatch}.
 *
 * @param defaultValue null when none
 * @param type string, boolean, choice, number or environment (taken as a string: Atrium has no environments)
 * @param options the choices of a choice input, else empty
 */
public record Input(String description, boolean required, String defaultValue, String type, List<String> options) {

    public Input {
        options = List.copyOf(options);
    }
}
