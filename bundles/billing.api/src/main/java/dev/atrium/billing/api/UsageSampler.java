package dev.atrium.billing.api;

import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A whiteboard service for usage that is held rather than done (bytes stored): billing asks every registered sampler
 * what is held now, once per sampling interval, and counts the first answer of each UTC hour for each workspace and
 * dimension as that hour's quantity (byte-hours). A capability registers one and keeps no schedule of its own.
 */
@ConsumerType
public interface UsageSampler {

    /** The meter the samples count on, one of {@link Meters}. */
    String meter();

    /** What is held now, one sample per workspace and dimension; nothing held need not be listed. */
    List<Sample> sample() throws Exception;

    /**
     * @param spaceId   the workspace holding it
     * @param dimension what the meter is split by (a resource id), or empty
     * @param quantity  how much is held, at least 0
     */
    record Sample(String spaceId, String dimension, long quantity) {}
}
