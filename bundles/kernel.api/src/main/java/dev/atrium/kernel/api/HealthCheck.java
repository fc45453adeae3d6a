package dev.atrium.kernel.api;

import java.util.List;
import java.util.Set;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A part of the server that the operator's health view reports on, registered as a service by the capability that
 * knows it (the custom domains' certificates, say). {@code GET /admin/status} asks every registered check on every
 * request, while the console polls it every few seconds, and also while the database is down: {@link #check} answers
 * from what its bundle holds in memory, at once, and never waits for the database or the network.
 */
@ConsumerType
public interface HealthCheck {

    /** What the check is about, a short lower-case name the view titles it with ({@code certificates}). */
    String name();

    /** The state now. */
    Result check();

    /**
     * A check's answer: {@code status} {@link #OK}, {@link #WARNING} (needs the operator's attention soon) or
     * {@link #FAILED}; {@code summary} one line; {@code details} one line per item concerned (a domain and when its
     * certificate expires), none when all is well.
     */
    record Result(String status, String summary, List<String> details) {

        public static final String OK = "ok";
        public static final String WARNING = "warning";
        public static final String FAILED = "failed";

        public Result {
            if (!Set.of(OK, WARNING, FAILED).contains(status)) {
                throw new IllegalArgumentException("a check's status is ok, warning or failed, not " + status);
            }
            details = List.copyOf(details);
        }
    }
}
