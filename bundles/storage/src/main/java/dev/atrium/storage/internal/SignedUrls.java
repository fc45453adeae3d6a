package dev.atrium.storage.internal;

import dev.atrium.kernel.api.Digests;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signatures of download URLs: HMAC-SHA256 over the workspace id, the file id and the expiry, so a link names exactly
 * one file of one workspace until one instant, and no part of it can be changed without the key.
 */
final class SignedUrls {

    private final byte[] key;

    SignedUrls(byte[] key) {
        if (key.length < 32) {
            throw new IllegalArgumentException("a download URL key needs at least 32 bytes");
        }
        this.key = key.clone();
    }

    String sign(String spaceId, String fileId, long expiresEpochSeconds) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            byte[] out = mac.doFinal(("storage-download\n" + spaceId + "\n" + fileId + "\n" + expiresEpochSeconds)
                    .getBytes(StandardCharsets.UTF_8));
            return Digests.base64Url(out);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    boolean verify(String spaceId, String fileId, long expiresEpochSeconds, String signature) {
        return signature != null && Digests.constantTimeEquals(sign(spaceId, fileId, expiresEpochSeconds), signature);
    }
}
