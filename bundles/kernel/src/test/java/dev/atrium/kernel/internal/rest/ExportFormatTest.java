package dev.atrium.kernel.internal.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.ApiException;
import org.junit.jupiter.api.Test;

class ExportFormatTest {

    @Test
    void jsonStaysTheDefaultAndTheArchiveIsAskedForByFormatOrByAnAcceptWithoutJson() {
        assertFalse(SpacesResource.archiveWanted(null, null));
        assertFalse(SpacesResource.archiveWanted(null, "*/*"));
        assertFalse(SpacesResource.archiveWanted(null, "application/json, application/zip"));
        assertTrue(SpacesResource.archiveWanted(null, "application/zip"));
        assertTrue(SpacesResource.archiveWanted("zip", "application/json"));
        assertFalse(SpacesResource.archiveWanted("json", "application/zip"));
        ApiException bad = assertThrows(ApiException.class, () -> SpacesResource.archiveWanted("tar", null));
        assertEquals(400, bad.status());
    }
}
