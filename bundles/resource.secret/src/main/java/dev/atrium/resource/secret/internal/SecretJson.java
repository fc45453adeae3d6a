package dev.atrium.resource.secret.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** The JSON the secret keys admin routes answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class SecretJson {

    private SecretJson() {}

    /** A secret key (never its material): whether new values are encrypted with it, and how many it still encrypts. */
    record Key(String id, boolean current, long values) {}

    record Keys(List<Key> keys) {}

    /** The new current key's id. */
    record Rotated(@JsonProperty("key_id") String keyId) {}
}
