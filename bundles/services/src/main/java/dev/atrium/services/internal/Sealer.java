package dev.atrium.services.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;

import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The services capability's two keys under {@code <data>/keys/services}: {@code env.key} seals secret variables
 * (AES-256-GCM, a fresh 96-bit nonce per value, the service id and variable name as associated data, so a sealed value
 * cannot be moved to another variable), and {@code binding.key} makes each deployment's binding secret (HMAC-SHA256 of
 * its runtime id: nothing to store, the same after a restart). Each file holds a 256-bit key in base64, made on first
 * use with mode 0600, written atomically. Same approach as {@code resource.secret}'s {@code SecretKeys} (one key here,
 * no rotation yet: {@code key_id} is stored with every value so rotation can be added).
 */
final class Sealer {

    static final String KEY_ID = "env1";
    private static final int TAG_BITS = 128;

    record Sealed(String keyId, byte[] nonce, byte[] ciphertext) {
    }

    private final SecretKey envKey;
    private final SecretKey bindingKey;
    private final SecureRandom random = new SecureRandom();

    Sealer(Path directory) throws IOException {
        this.envKey = load(directory, "env.key", random);
        this.bindingKey = load(directory, "binding.key", random);
    }

    /** For tests: keys given. */
    Sealer(byte[] envKey, byte[] bindingKey) {
        this.envKey = new SecretKeySpec(envKey, "AES");
        this.bindingKey = new SecretKeySpec(bindingKey, "HmacSHA256");
    }

    Sealed seal(String serviceId, String name, String plain) {
        byte[] nonce = new byte[12];
        random.nextBytes(nonce);
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, envKey, new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(aad(serviceId, name));
            return new Sealed(KEY_ID, nonce, cipher.doFinal(plain.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available", e);
        }
    }

    String open(String serviceId, String name, String keyId, byte[] nonce, byte[] ciphertext) {
        if (!KEY_ID.equals(keyId)) {
            throw new IllegalStateException("the secret of " + name + " was sealed with an unknown key " + keyId);
        }
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, envKey, new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(aad(serviceId, name));
            return new String(cipher.doFinal(ciphertext), StandardCharsets.UTF_8);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the secret of " + name + " cannot be opened with this instance's key", e);
        }
    }

    /** The binding secret of a runtime deployment: base64url HMAC-SHA256 of its id. */
    String bindingSecret(String runtimeId) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(bindingKey);
            return Base64.getUrlEncoder().withoutPadding().encodeToString(mac.doFinal(runtimeId.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available", e);
        }
    }

    private static byte[] aad(String serviceId, String name) {
        return (serviceId + "\n" + name).getBytes(StandardCharsets.UTF_8);
    }

    private static SecretKey load(Path directory, String file, SecureRandom random) throws IOException {
        Path path = directory.resolve(file);
        String algorithm = file.startsWith("binding") ? "HmacSHA256" : "AES";
        if (!Files.isRegularFile(path)) {
            Files.createDirectories(directory);
            try {
                Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx------"));
            } catch (UnsupportedOperationException e) {
                // not POSIX: the data directory's own protection applies
            }
            byte[] raw = new byte[32];
            random.nextBytes(raw);
            Path temp = Files.createTempFile(directory, ".new-", ".tmp", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try {
                Files.writeString(temp, Base64.getEncoder().encodeToString(raw) + "\n", StandardCharsets.US_ASCII);
                try {
                    Files.move(temp, path, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(temp, path);
                }
            } finally {
                Files.deleteIfExists(temp);
            }
        }
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(Files.readString(path, StandardCharsets.US_ASCII).trim());
        } catch (IllegalArgumentException e) {
            throw new IOException("the key file " + path + " is not base64", e);
        }
        if (raw.length != 32) {
            throw new IOException("the key file " + path + " does not hold a 256-bit key");
        }
        return new SecretKeySpec(raw, algorithm);
    }
}
