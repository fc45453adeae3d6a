package dev.atrium.store.ap.api;

/** The media types and JSON-LD contexts of ActivityPub documents, as the spec names them. */
public final class ActivityMedia {

    /** ActivityStreams documents (actors, collections, activities). */
    public static final String ACTIVITY_JSON = "application/activity+json; charset=utf-8";
    /** The JSON-LD form some peers ask for. */
    public static final String LD_JSON = "application/ld+json; charset=utf-8";
    /** WebFinger answers. */
    public static final String JRD_JSON = "application/jrd+json; charset=utf-8";
    /** What a fetch of an ActivityPub document asks for. */
    public static final String ACCEPT =
            "application/activity+json, application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\"";

    public static final String ACTIVITYSTREAMS_CONTEXT = "https://www.w3.org/ns/activitystreams";
    public static final String SECURITY_CONTEXT = "https://w3id.org/security/v1";

    private ActivityMedia() {}

    /** Whether a {@code Content-Type} names an ActivityPub document (activity+json, or ld+json). */
    public static boolean isActivityPub(String contentType) {
        if (contentType == null) {
            return false;
        }
        String type = contentType.split(";", 2)[0].trim().toLowerCase(java.util.Locale.ROOT);
        return type.equals("application/activity+json") || type.equals("application/ld+json");
    }
}
