package dev.atrium.services.internal;

import dev.atrium.kernel.api.KeyFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * The services capability's two keys under {@code <data>/keys/services} ({@link KeyFile}s): {@code env.key} seals
 * secret variables (kernel.api's {@link dev.atrium.kernel.api.Sealer}: AES-256-GCM, the service id and variable name as
 * associated data, so a sealed value cannot be moved to another variable), and {@code binding.key} makes each
 * deployment's binding secret (HMAC-SHA256 of its runtime id: nothing to store, the same after a restart). One key
 * each, no rotation yet: {@code key_id} is stored with every value so rotation can be added.
 */
final class Sealer {

    static final String KEY_ID = "env1";

    record Sealed(String keyId, byte[] nonce, byte[] ciphertext) {}

    private final dev.atrium.kernel.api.Sealer env;
    private final SecretKey bindingKey;

    Sealer(Path directory) throws IOException {
        this(KeyFile.readOrMake(directory.resolve("env.key")), KeyFile.readOrMake(directory.resolve("binding.key")));
    }

    /** For tests: keys given. */
    Sealer(byte[] envKey, byte[] bindingKey) {
        this.env = dev.atrium.kernel.api.Sealer.withKey(KEY_ID, envKey);
        this.bindingKey = new SecretKeySpec(bindingKey, "HmacSHA256");
    }

    Sealed seal(String serviceId, String name, String plain) {
        dev.atrium.kernel.api.Sealer.Sealed s = env.seal(plain, aad(serviceId, name));
        return new Sealed(s.keyId(), s.nonce(), s.ciphertext());
    }

    String open(String serviceId, String name, String keyId, byte[] nonce, byte[] ciphertext) {
        try {
            return env.open(new dev.atrium.kernel.api.Sealer.Sealed(keyId, nonce, ciphertext), aad(serviceId, name));
        } catch (IllegalStateException e) {
            throw new IllegalStateException("the secret of " + name + " cannot be opened with this instance's key", e);
        }
    }

    /** The binding secret of a runtime deployment: base64url HMAC-SHA256 of its id. */
    String bindingSecret(String runtimeId) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(bindingKey);
            return Base64.getUrlEncoder()
                    .withoutPadding()
                    .encodeToString(mac.doFinal(runtimeId.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available", e);
        }
    }

    private static String aad(String serviceId, String name) {
        return serviceId + "\n" + name;
    }
}
