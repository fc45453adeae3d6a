package dev.atrium.apps.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.services.api.ServiceControl;
import java.util.function.Supplier;

/** Other capabilities' refusals, answered with the status and code they carry. */
final class Errors {

    private Errors() {}

    static <T> T api(Supplier<T> work) {
        try {
            return work.get();
        } catch (ServiceControl.Refused e) {
            throw new ApiException(e.status(), e.code(), e.getMessage());
        }
    }
}
