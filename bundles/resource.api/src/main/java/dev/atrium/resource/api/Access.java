package dev.atrium.resource.api;

/** The permission a call holds on a resource; each level includes the ones before it. */
public enum Access {
    /** Read data: list, get, run read-only queries. */
    READ,
    /** Also change data: put, delete, write queries. */
    WRITE,
    /** Also manage the resource: tokens, connection secrets. */
    ADMIN;

    /** Whether this permission includes {@code needed}. */
    public boolean allows(Access needed) {
        return compareTo(needed) >= 0;
    }

    /** The wire name: {@code read}, {@code write}, {@code admin}. */
    public String wire() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Parses a wire name; null when it is none of them. */
    public static Access parse(String wire) {
        if (wire == null) {
            return null;
        }
        return switch (wire) {
            case "read" -> READ;
            case "write" -> WRITE;
            case "admin" -> ADMIN;
            default -> null;
        };
    }
}
