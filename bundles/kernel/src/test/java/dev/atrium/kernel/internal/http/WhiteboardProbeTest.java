package dev.atrium.kernel.internal.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;
import org.osgi.service.jaxrs.runtime.dto.ResourceDTO;
import org.osgi.service.jaxrs.runtime.dto.ResourceMethodInfoDTO;

class WhiteboardProbeTest {

    private static ResourceDTO resource(String... paths) {
        ResourceDTO r = new ResourceDTO();
        r.resourceMethods = new ResourceMethodInfoDTO[paths.length];
        for (int i = 0; i < paths.length; i++) {
            r.resourceMethods[i] = new ResourceMethodInfoDTO();
            r.resourceMethods[i].path = paths[i];
        }
        return r;
    }

    @Test
    void aProbeFillsEveryTemplateVariableOfTheResourcesFirstPath() {
        assertEquals(
                "/api/spaces/0/memories", WhiteboardProbe.path(resource("/api/spaces/{spaceId}/memories", "/other")));
        assertEquals("/api/repos/0/tree/0", WhiteboardProbe.path(resource("api/repos/{repoId}/tree/{path: .+}")));
        assertEquals("/admin/repos/0/gc", WhiteboardProbe.path(resource("", "/admin//repos/{id:[0-9]+}/gc")));
    }

    @Test
    void aResourceWithoutPathsCannotBeProbed() {
        assertNull(WhiteboardProbe.path(resource()));
        assertNull(WhiteboardProbe.path(new ResourceDTO()));
    }

    @Test
    void onlyThisInstancesSecretPassesTheGate() {
        WhiteboardProbe probe = new WhiteboardProbe(null);
        assertFalse(probe.isProbe("guessed"));
        assertFalse(probe.isProbe(""));
    }
}
