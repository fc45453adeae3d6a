package dev.atrium.repos.api;

/**
 * EventAdmin topics repositories publish (for federation and workflows). Every event carries
 * {@link #REPO_ID}, {@link #SPACE_ID}, {@link #NAME}; ref events carry {@link #REF}, {@link #OLD_ID},
 * {@link #NEW_ID}; pushes carry {@link #REFS} (one "ref old new" line per change) and {@link #COMMITS}
 * (the pushed commits, newest first, at most 100, each a map of sha, message, author_name, author_email,
 * time). Every event carries {@link #VISIBILITY} too (the repository's visibility when it was posted), so a
 * listener can tell public activity from private without asking.
 */
public final class RepositoryEvents {

    public static final String CREATED = "atrium/repo/created";
    public static final String UPDATED = "atrium/repo/updated";
    public static final String DELETED = "atrium/repo/deleted";
    public static final String PUSHED = "atrium/repo/pushed";
    public static final String BRANCH_CREATED = "atrium/repo/branch_created";
    public static final String BRANCH_DELETED = "atrium/repo/branch_deleted";
    public static final String TAG_CREATED = "atrium/repo/tag_created";
    public static final String TAG_DELETED = "atrium/repo/tag_deleted";

    /**
     * A Principal ({@link #PRINCIPAL_ID}) starred the repository; posted after the star is committed, only when the
     * star is new.
     *
     * @since 1.8
     */
    public static final String STARRED = "atrium/repo/starred";

    /**
     * A Principal ({@link #PRINCIPAL_ID}) took their star away; posted after the removal is committed, only when
     * there was a star.
     *
     * @since 1.8
     */
    public static final String UNSTARRED = "atrium/repo/unstarred";

    /**
     * A release that is not a draft was published (the releases bundle posts it): {@link #PRINCIPAL_ID} is its author,
     * with {@link #TAG}, {@link #RELEASE_ID} and {@link #PRERELEASE}.
     *
     * @since 1.8
     */
    public static final String RELEASE_PUBLISHED = "atrium/repo/release_published";

    public static final String REPO_ID = "repo_id";
    public static final String SPACE_ID = "space_id";
    public static final String NAME = "name";
    public static final String PRINCIPAL_ID = "principal_id";
    public static final String REF = "ref";
    public static final String OLD_ID = "old_id";
    public static final String NEW_ID = "new_id";
    public static final String REFS = "refs";
    public static final String COMMITS = "commits";

    /** {@code public} or {@code private}. @since 1.8 */
    public static final String VISIBILITY = "visibility";

    /** A release's tag name (without {@code refs/tags/}). @since 1.8 */
    public static final String TAG = "tag";

    /** @since 1.8 */
    public static final String RELEASE_ID = "release_id";

    /** A Boolean: whether the release is a prerelease. @since 1.8 */
    public static final String PRERELEASE = "prerelease";

    private RepositoryEvents() {}

    /**
     * The ref changes a push event's {@link #REFS} property names (a list of "ref old new" lines, or one text of
     * them); lines of another shape are left out.
     *
     * @since 1.6
     */
    public static java.util.List<RepositoryRegistry.RefChange> refChanges(Object refs) {
        Iterable<?> lines = refs instanceof Iterable<?> list
                ? list
                : refs instanceof String text ? java.util.List.of(text.split("\n")) : java.util.List.of();
        java.util.List<RepositoryRegistry.RefChange> out = new java.util.ArrayList<>();
        for (Object line : lines) {
            String[] parts = String.valueOf(line).trim().split(" ");
            if (parts.length == 3) {
                out.add(new RepositoryRegistry.RefChange(parts[0], parts[1], parts[2]));
            }
        }
        return out;
    }
}
