package dev.atrium.kernel.api;

import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The kernel's Principals as an identity bundle needs them: one Principal per {@code (provider, subject)}, created
 * on first login together with its default workspace.
 */
@ProviderType
public interface PrincipalDirectory {

    /** A Principal as the directory shows it; {@code created} is true when this call created it. */
    record Entry(
            String id,
            String provider,
            String subject,
            String username,
            String name,
            String email,
            String picture,
            String status,
            boolean setupCompleted,
            boolean created) {
        public boolean active() {
            return "active".equals(status);
        }
    }

    /**
     * The Principal of {@code (provider, subject)}, created with its default workspace when there is none. The new
     * Principal takes {@code preferredUsername} when it is a valid, free handle, and no username otherwise (the
     * user then picks one with {@code POST /api/auth/setup-username}).
     */
    Entry findOrCreate(String provider, String subject, String preferredUsername, String name, String email);

    Optional<Entry> find(String provider, String subject);

    Optional<Entry> get(String principalId);

    /** Sets the username and completes setup; 400 for an invalid handle, 409 when it is taken. */
    Entry setUsername(String principalId, String username);

    /** Changes the display name and the avatar URL; a null argument leaves that field as it is. */
    Entry updateProfile(String principalId, String name, String picture);

    /** Makes a personal access token with scope {@code *} for the Principal (the CLI's browser login); returns its secret. */
    String createPersonalAccessToken(String principalId, String name);
}
