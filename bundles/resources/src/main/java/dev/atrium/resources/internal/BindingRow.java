package dev.atrium.resources.internal;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.time.Instant;
import java.util.Objects;

/** A resource bound to a service under a binding name (table {@code resource_bindings}). */
@Entity
@Table(name = "resource_bindings")
@IdClass(BindingRow.Key.class)
public class BindingRow {

    @Id
    @Column(name = "resource_id")
    public String resourceId;

    @Id
    @Column(name = "service_id")
    public String serviceId;

    @Column(name = "binding_name", nullable = false)
    public String bindingName;

    @Column(name = "created_at", nullable = false)
    public Instant createdAt;

    /** The composite primary key. */
    public static class Key implements Serializable {
        private static final long serialVersionUID = 1L;
        public String resourceId;
        public String serviceId;

        public Key() {}

        public Key(String resourceId, String serviceId) {
            this.resourceId = resourceId;
            this.serviceId = serviceId;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k
                    && Objects.equals(resourceId, k.resourceId)
                    && Objects.equals(serviceId, k.serviceId);
        }

        @Override
        public int hashCode() {
            return Objects.hash(resourceId, serviceId);
        }
    }
}
