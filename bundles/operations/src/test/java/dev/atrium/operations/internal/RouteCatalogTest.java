package dev.atrium.operations.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class RouteCatalogTest {

    @Test
    void theDefaultApplicationAtTheRootAddsNothingToAResourcePath() {
        assertEquals("/api/threads/{id}", RouteCatalog.join("", "/", "/api/threads/{id}"));
    }

    @Test
    void aContextPathAndAnApplicationBaseArePrefixedWithOneSlashEach() {
        assertEquals("/ctx/app/api/x", RouteCatalog.join("/ctx/", "app/", "/api/x"));
    }

    @Test
    void doubledAndTrailingSlashesCollapse() {
        assertEquals(
                "/api/repos/{id}/branches/{name}", RouteCatalog.join("/", "//api/repos/", "{id}//branches/{name}/"));
    }

    @Test
    void nullAndEmptyPiecesAreSkippedAndNothingAtAllIsTheRoot() {
        assertEquals("/healthz", RouteCatalog.join(null, "", "healthz"));
        assertEquals("/", RouteCatalog.join(null, "", "/"));
    }

    @Test
    void aServletWildcardPatternIsKept() {
        assertEquals("/admin/console/*", RouteCatalog.join("", "/admin/console/*"));
    }
}
