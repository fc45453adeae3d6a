package dev.atrium.resources.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Sql;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The core's rows, through JPA: resources, access grants, tokens, bindings. Knows nothing of callers. */
@Component(service = ResourceStore.class)
public class ResourceStore {

    private final Jpa jpa;

    @Activate
    public ResourceStore(@Reference Jpa jpa) {
        this.jpa = jpa;
    }

    static Instant now() {
        // PostgreSQL keeps microseconds: what is stored is what is returned
        return Instant.now().truncatedTo(ChronoUnit.MICROS);
    }

    /** Stores a new resource; {@link ResourceLifecycle.NameTaken} when its workspace has one of that name. */
    public ResourceRow create(ResourceRow row) {
        try {
            return jpa.tx(em -> {
                em.persist(row);
                em.flush();
                return row;
            });
        } catch (Sql.Conflict e) {
            throw new ResourceLifecycle.NameTaken(row.name);
        }
    }

    public ResourceRow setState(String id, String state) {
        return jpa.tx(em -> {
            ResourceRow row = em.find(ResourceRow.class, id);
            row.state = state;
            em.flush();
            return row;
        });
    }

    public Optional<ResourceRow> find(String id) {
        return Optional.ofNullable(jpa.read(em -> em.find(ResourceRow.class, id)));
    }

    /** Every resource of {@code type}, oldest first, a page at a time. */
    public List<ResourceRow> ofType(String type, int limit, int offset) {
        return jpa.read(em -> em.createQuery(
                        "SELECT r FROM ResourceRow r WHERE r.type = :type ORDER BY r.createdAt, r.id",
                        ResourceRow.class)
                .setParameter("type", type)
                .setFirstResult(offset)
                .setMaxResults(limit)
                .getResultList());
    }

    public List<ResourceRow> byName(String name) {
        return jpa.read(em -> em.createQuery(
                        "SELECT r FROM ResourceRow r WHERE r.name = :name ORDER BY r.createdAt", ResourceRow.class)
                .setParameter("name", name)
                .setMaxResults(1000)
                .getResultList());
    }

    public List<ResourceRow> list(String spaceId, String type, int limit, int offset) {
        return jpa.read(em -> em.createQuery(
                        "SELECT r FROM ResourceRow r WHERE r.spaceId = :space"
                                + (type == null ? "" : " AND r.type = :type") + " ORDER BY r.createdAt, r.id",
                        ResourceRow.class)
                .setParameter("space", spaceId)
                .setFirstResult(offset)
                .setMaxResults(limit)
                .setParameter(type == null ? "space" : "type", type == null ? spaceId : type)
                .getResultList());
    }

    public long count(String spaceId, String type) {
        return jpa.read(em -> em.createQuery(
                        "SELECT COUNT(r) FROM ResourceRow r WHERE r.spaceId = :space"
                                + (type == null ? "" : " AND r.type = :type"),
                        Long.class)
                .setParameter("space", spaceId)
                .setParameter(type == null ? "space" : "type", type == null ? spaceId : type)
                .getSingleResult());
    }

    /** Resources other workspaces granted to {@code spaceId}, with the permission each grant gives. */
    public List<Object[]> sharedWith(String spaceId, int limit, int offset) {
        return jpa.read(em -> em.createQuery(
                        "SELECT r, a.permission FROM ResourceRow r, AccessRow a WHERE a.resourceId = r.id AND a.spaceId = :space"
                                + " ORDER BY r.createdAt, r.id",
                        Object[].class)
                .setParameter("space", spaceId)
                .setFirstResult(offset)
                .setMaxResults(limit)
                .getResultList());
    }

    public long countSharedWith(String spaceId) {
        return jpa.read(em -> em.createQuery("SELECT COUNT(a) FROM AccessRow a WHERE a.spaceId = :space", Long.class)
                .setParameter("space", spaceId)
                .getSingleResult());
    }

    /** Stores a changed name or config; 409 when the new name is taken in the workspace. */
    public ResourceRow update(String id, String name, String config) {
        try {
            return jpa.tx(em -> {
                ResourceRow row = em.find(ResourceRow.class, id);
                if (row == null) {
                    throw ApiException.notFound(ResourcesApi.NOT_FOUND);
                }
                if (name != null) {
                    row.name = name;
                }
                if (config != null) {
                    row.config = config;
                }
                row.updatedAt = now();
                em.flush();
                return row;
            });
        } catch (Sql.Conflict e) {
            throw ApiException.conflict("a resource named '" + name + "' already exists in this workspace");
        }
    }

    /** Deletes the resource and (by the schema's cascades) its grants, tokens and bindings. */
    public boolean delete(String id) {
        return jpa.tx(em -> em.createQuery("DELETE FROM ResourceRow r WHERE r.id = :id")
                        .setParameter("id", id)
                        .executeUpdate()
                > 0);
    }

    // access grants

    public List<AccessRow> grants(String resourceId) {
        return jpa.read(em -> em.createQuery(
                        "SELECT a FROM AccessRow a WHERE a.resourceId = :id ORDER BY a.createdAt, a.spaceId",
                        AccessRow.class)
                .setParameter("id", resourceId)
                .getResultList());
    }

    public Optional<AccessRow> grant(String resourceId, String spaceId) {
        return Optional.ofNullable(jpa.read(em -> em.find(AccessRow.class, new AccessRow.Key(resourceId, spaceId))));
    }

    /** Grants or changes the permission of {@code spaceId} on the resource. */
    public AccessRow grant(String resourceId, String spaceId, String permission) {
        return jpa.tx(em -> {
            AccessRow row = em.find(AccessRow.class, new AccessRow.Key(resourceId, spaceId));
            if (row == null) {
                row = new AccessRow();
                row.resourceId = resourceId;
                row.spaceId = spaceId;
                row.createdAt = now();
                row.permission = permission;
                em.persist(row);
            } else {
                row.permission = permission;
            }
            em.flush();
            return row;
        });
    }

    public boolean revoke(String resourceId, String spaceId) {
        return jpa.tx(em -> em.createQuery("DELETE FROM AccessRow a WHERE a.resourceId = :id AND a.spaceId = :space")
                        .setParameter("id", resourceId)
                        .setParameter("space", spaceId)
                        .executeUpdate()
                > 0);
    }

    // tokens

    public List<TokenRow> tokens(String resourceId) {
        return jpa.read(em -> em.createQuery(
                        "SELECT t FROM TokenRow t WHERE t.resourceId = :id ORDER BY t.createdAt, t.id", TokenRow.class)
                .setParameter("id", resourceId)
                .getResultList());
    }

    public TokenRow createToken(TokenRow row) {
        return jpa.tx(em -> {
            em.persist(row);
            return row;
        });
    }

    public boolean deleteToken(String resourceId, String tokenId) {
        return jpa.tx(em -> em.createQuery("DELETE FROM TokenRow t WHERE t.resourceId = :id AND t.id = :token")
                        .setParameter("id", resourceId)
                        .setParameter("token", tokenId)
                        .executeUpdate()
                > 0);
    }

    public Optional<TokenRow> tokenByHash(String hash) {
        List<TokenRow> rows =
                jpa.read(em -> em.createQuery("SELECT t FROM TokenRow t WHERE t.tokenHash = :hash", TokenRow.class)
                        .setParameter("hash", hash)
                        .getResultList());
        return rows.stream().findFirst();
    }

    public void touchToken(String tokenId) {
        jpa.tx(em -> em.createQuery("UPDATE TokenRow t SET t.lastUsedAt = :now WHERE t.id = :id")
                .setParameter("now", now())
                .setParameter("id", tokenId)
                .executeUpdate());
    }

    // bindings

    public List<BindingRow> bindings(String resourceId) {
        return jpa.read(em -> em.createQuery(
                        "SELECT b FROM BindingRow b WHERE b.resourceId = :id ORDER BY b.createdAt, b.serviceId",
                        BindingRow.class)
                .setParameter("id", resourceId)
                .getResultList());
    }

    public BindingRow bind(String resourceId, String serviceId, String bindingName) {
        return jpa.tx(em -> {
            requireNoOtherService(em, resourceId, serviceId);
            BindingRow row = em.find(BindingRow.class, new BindingRow.Key(resourceId, serviceId));
            if (row == null) {
                row = new BindingRow();
                row.resourceId = resourceId;
                row.serviceId = serviceId;
                row.createdAt = now();
                row.bindingName = bindingName;
                em.persist(row);
            } else {
                row.bindingName = bindingName;
            }
            em.flush();
            return row;
        });
    }

    public boolean unbind(String resourceId, String serviceId) {
        return jpa.tx(
                em -> em.createQuery("DELETE FROM BindingRow b WHERE b.resourceId = :id AND b.serviceId = :service")
                                .setParameter("id", resourceId)
                                .setParameter("service", serviceId)
                                .executeUpdate()
                        > 0);
    }

    /** The bindings of one service, oldest first. */
    public List<BindingRow> bindingsOfService(String serviceId) {
        return jpa.read(em -> em.createQuery(
                        "SELECT b FROM BindingRow b WHERE b.serviceId = :service ORDER BY b.createdAt, b.bindingName",
                        BindingRow.class)
                .setParameter("service", serviceId)
                .getResultList());
    }

    /** Makes {@code byResource} (resource id to binding name) exactly the bindings of {@code serviceId}, in one transaction. */
    public void replaceBindings(String serviceId, java.util.Map<String, String> byResource) {
        jpa.tx(em -> {
            em.createQuery("DELETE FROM BindingRow b WHERE b.serviceId = :service")
                    .setParameter("service", serviceId)
                    .executeUpdate();
            Instant now = now();
            for (java.util.Map.Entry<String, String> e : byResource.entrySet()) {
                requireNoOtherService(em, e.getKey(), serviceId);
                BindingRow row = new BindingRow();
                row.resourceId = e.getKey();
                row.serviceId = serviceId;
                row.bindingName = e.getValue();
                row.createdAt = now;
                em.persist(row);
            }
            em.flush();
            return null;
        });
    }

    /**
     * Types bound to one service at a time: a durableObject's objects run in the bound service's own runtime process,
     * so a second service would run the same objects at the same time.
     */
    static final java.util.Set<String> ONE_SERVICE_TYPES = java.util.Set.of("durableObject");

    /**
     * 409 when the resource is of a {@link #ONE_SERVICE_TYPES one-service type} and bound to a service other than
     * {@code serviceId}; the resource's row is locked first, so two services binding it at once cannot both succeed.
     */
    private static void requireNoOtherService(
            jakarta.persistence.EntityManager em, String resourceId, String serviceId) {
        ResourceRow r = em.find(ResourceRow.class, resourceId);
        if (r == null || !ONE_SERVICE_TYPES.contains(r.type)) {
            return;
        }
        em.lock(r, jakarta.persistence.LockModeType.PESSIMISTIC_WRITE);
        List<String> others = em.createQuery(
                        "SELECT b.serviceId FROM BindingRow b WHERE b.resourceId = :id AND b.serviceId <> :service",
                        String.class)
                .setParameter("id", resourceId)
                .setParameter("service", serviceId)
                .getResultList();
        if (!others.isEmpty()) {
            throw ApiException.conflict(
                    "the " + r.type + " resource '" + r.name + "' is already bound to service " + others.get(0)
                            + "; its objects run in one service's runtime, so it can be bound to one service at a time (unbind it there first)");
        }
    }

    /** Removes every binding of a service. */
    public int unbindService(String serviceId) {
        return jpa.tx(em -> em.createQuery("DELETE FROM BindingRow b WHERE b.serviceId = :service")
                .setParameter("service", serviceId)
                .executeUpdate());
    }
}
