package dev.atrium.resources.internal;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;

/** A resource as the core keeps it (table {@code resources}). */
@Entity
@Table(name = "resources")
public class ResourceRow {

    @Id
    @Column(name = "id")
    public String id;

    @Column(name = "space_id", nullable = false)
    public String spaceId;

    @Column(name = "name", nullable = false)
    public String name;

    @Column(name = "type", nullable = false)
    public String type;

    @Column(name = "backend", nullable = false)
    public String backend;

    @Column(name = "config", nullable = false)
    public String config;

    @Column(name = "state", nullable = false)
    public String state;

    @Column(name = "created_at", nullable = false)
    public Instant createdAt;

    @Column(name = "updated_at", nullable = false)
    public Instant updatedAt;
}
