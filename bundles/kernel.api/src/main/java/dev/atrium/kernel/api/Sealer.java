package dev.atrium.kernel.api;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Values at rest sealed with AES-256-GCM under one key ({@link KeyFile}, made on first use): a fresh 96-bit nonce per
 * value, and associated data the caller chooses (say, the owner's id and the value's name) so that a sealed value
 * cannot be moved elsewhere. Instances sharing one database must share the key file.
 */
public final class Sealer {

    private static final int TAG_BITS = 128;

    /** A sealed value, with the id of the key that sealed it. */
    public record Sealed(String keyId, byte[] nonce, byte[] ciphertext) {}

    private final String keyId;
    private final SecretKey key;
    private final SecureRandom random = new SecureRandom();

    private Sealer(String keyId, SecretKey key) {
        this.keyId = keyId;
        this.key = key;
    }

    /**
     * @param file  the key file, made when missing
     * @param keyId the id stored with every value this key seals
     * @throws IOException when the file cannot be made or read, or holds no 256-bit key
     */
    public static Sealer withKeyFile(Path file, String keyId) throws IOException {
        return withKey(keyId, KeyFile.readOrMake(file));
    }

    /** @param key 32 bytes */
    public static Sealer withKey(String keyId, byte[] key) {
        if (key.length != 32) {
            throw new IllegalArgumentException("an AES-256 key is 32 bytes");
        }
        return new Sealer(keyId, new SecretKeySpec(key, "AES"));
    }

    public String keyId() {
        return keyId;
    }

    public Sealed seal(String plain, String associatedData) {
        byte[] nonce = new byte[12];
        random.nextBytes(nonce);
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(associatedData.getBytes(StandardCharsets.UTF_8));
            return new Sealed(keyId, nonce, cipher.doFinal(plain.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available", e);
        }
    }

    /** @throws IllegalStateException when another key sealed it, or it was sealed with other associated data, or altered */
    public String open(Sealed sealed, String associatedData) {
        if (!keyId.equals(sealed.keyId())) {
            throw new IllegalStateException("the value was sealed with key " + sealed.keyId() + ", not " + keyId);
        }
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, sealed.nonce()));
            cipher.updateAAD(associatedData.getBytes(StandardCharsets.UTF_8));
            return new String(cipher.doFinal(sealed.ciphertext()), StandardCharsets.UTF_8);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the value cannot be opened with key " + keyId, e);
        }
    }
}
