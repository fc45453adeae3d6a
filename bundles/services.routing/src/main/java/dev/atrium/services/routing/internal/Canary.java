package dev.atrium.services.routing.internal;

import java.util.random.RandomGenerator;

/** The per-request split between a service's current deployment and its canary. */
final class Canary {

    private Canary() {}

    /** Whether this request goes to the canary: with probability {@code percent}/100, decided per request. */
    static boolean pick(int percent, RandomGenerator random) {
        if (percent <= 0) {
            return false;
        }
        if (percent >= 100) {
            return true;
        }
        return random.nextInt(100) < percent;
    }
}
