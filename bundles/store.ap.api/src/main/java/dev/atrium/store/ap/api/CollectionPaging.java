package dev.atrium.store.ap.api;

/**
 * The paging of public collections both store models serve: {@code page} counts from 1 (absent: the summary
 * collection with {@code totalItems} and {@code first}), {@code limit} is 1–100, default 20.
 *
 * @param page  the page asked for, or null for the summary
 * @param limit items per page
 * @since 1.1
 */
public record CollectionPaging(Integer page, int limit) {

    public static final int DEFAULT_LIMIT = 20;
    public static final int MAX_LIMIT = 100;
    private static final int MAX_PAGE = 1_000_000;

    /**
     * Reads the query parameters.
     *
     * @throws IllegalArgumentException with a message for the client when either is not a whole number in its range
     */
    public static CollectionPaging of(String page, String limit) {
        int size = DEFAULT_LIMIT;
        if (limit != null) {
            size = parse(limit, MAX_LIMIT, "limit must be a whole number from 1 to " + MAX_LIMIT);
        }
        return new CollectionPaging(
                page == null ? null : parse(page, MAX_PAGE, "page must be a whole number from 1"), size);
    }

    private static int parse(String value, int max, String message) {
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 1 && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new IllegalArgumentException(message);
    }

    /** The index of the page's first item. */
    public long offset() {
        return page == null ? 0 : (long) (page - 1) * limit;
    }
}
