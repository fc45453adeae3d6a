package dev.atrium.resources.internal;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** A resource token; only the SHA-256 of its secret is kept (table {@code resource_tokens}). */
@Entity
@Table(name = "resource_tokens")
public class TokenRow {

    @Id
    @Column(name = "id")
    public String id;

    @Column(name = "resource_id", nullable = false)
    public String resourceId;

    @Column(name = "name", nullable = false)
    public String name;

    @Column(name = "permission", nullable = false)
    public String permission;

    @Column(name = "token_hash", nullable = false)
    public String tokenHash;

    @Column(name = "created_at", nullable = false)
    public Instant createdAt;

    @Column(name = "last_used_at")
    public Instant lastUsedAt;
}
