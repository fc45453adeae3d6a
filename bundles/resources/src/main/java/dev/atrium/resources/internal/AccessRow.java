package dev.atrium.resources.internal;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.time.Instant;
import java.util.Objects;

/** A grant of a resource to another workspace of its owner (table {@code resource_access}). */
@Entity
@Table(name = "resource_access")
@IdClass(AccessRow.Key.class)
public class AccessRow {

    @Id
    @Column(name = "resource_id")
    public String resourceId;

    @Id
    @Column(name = "space_id")
    public String spaceId;

    @Column(name = "permission", nullable = false)
    public String permission;

    @Column(name = "created_at", nullable = false)
    public Instant createdAt;

    /** The composite primary key. */
    public static class Key implements Serializable {
        private static final long serialVersionUID = 1L;
        public String resourceId;
        public String spaceId;

        public Key() {}

        public Key(String resourceId, String spaceId) {
            this.resourceId = resourceId;
            this.spaceId = spaceId;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Objects.equals(resourceId, k.resourceId) && Objects.equals(spaceId, k.spaceId);
        }

        @Override
        public int hashCode() {
            return Objects.hash(resourceId, spaceId);
        }
    }
}
