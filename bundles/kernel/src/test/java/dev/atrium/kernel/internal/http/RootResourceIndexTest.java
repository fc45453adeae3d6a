package dev.atrium.kernel.internal.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.xml.namespace.QName;
import org.apache.cxf.jaxrs.JAXRSServiceImpl;
import org.apache.cxf.jaxrs.model.ClassResourceInfo;
import org.apache.cxf.jaxrs.utils.JAXRSUtils;
import org.apache.cxf.jaxrs.utils.ResourceUtils;
import org.junit.jupiter.api.Test;

/** CXF's own matching, over the whole application and over the roots the index shows it, picks the same roots. */
class RootResourceIndexTest {

    @Path("/")
    static class Root {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/healthz")
    static class Health {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/api/spaces")
    static class Spaces {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/api/spaces/{spaceId}")
    static class Space {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/api/spaces/{spaceId}/threads")
    static class Threads {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/api/spaces/{spaceId}/memories/{memoryId}")
    static class Memory {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/api/spaces/{spaceId}/files/{path: .*}")
    static class Files {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/api/repos/{owner}/{name}")
    static class Repo {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/api/repos/{owner}/{name}/pulls/")
    static class Pulls {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/api/users/{id: [0-9]+}")
    static class UserById {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/api/{anything}")
    static class AnyApi {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/{first}/second")
    static class AnyFirst {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("api/relative/x")
    static class Relative {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/git/{owner}/{repo}.git")
    static class GitRepo {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/.well-known/webfinger")
    static class WebFinger {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/a b/c")
    static class Spaced {
        @GET
        public String get() {
            return "";
        }
    }

    @Path("/api/spaces{suffix}")
    static class SpacesSuffix {
        @GET
        public String get() {
            return "";
        }
    }

    private static final List<Class<?>> CLASSES = List.of(
            Root.class,
            Health.class,
            Spaces.class,
            Space.class,
            Threads.class,
            Memory.class,
            Files.class,
            Repo.class,
            Pulls.class,
            UserById.class,
            AnyApi.class,
            AnyFirst.class,
            Relative.class,
            GitRepo.class,
            WebFinger.class,
            Spaced.class,
            SpacesSuffix.class);

    private static final String[] SEGMENTS = {
        "api",
        "spaces",
        "sp_1",
        "threads",
        "memories",
        "m1",
        "files",
        "repos",
        "o",
        "pulls",
        "users",
        "42",
        "healthz",
        "second",
        "relative",
        "x",
        "git",
        "r.git",
        ".well-known",
        "webfinger",
        "a%20b",
        "c",
        "spacesX",
        ""
    };

    private static JAXRSServiceImpl application() {
        List<ClassResourceInfo> roots = new ArrayList<>();
        for (Class<?> c : CLASSES) {
            roots.add(ResourceUtils.createClassResourceInfo(c, c, true, true));
        }
        return new JAXRSServiceImpl(roots, new QName("urn:test", "application"));
    }

    /** The classes CXF picks for a path among the given roots, in its order; empty when none matches. */
    private static List<Class<?>> picked(JAXRSServiceImpl service, String path) {
        Map<ClassResourceInfo, ?> matched = JAXRSUtils.selectResourceClass(service.getClassResourceInfos(), path, null);
        return matched == null
                ? List.of()
                : matched.keySet().stream()
                        .map(ClassResourceInfo::getServiceClass)
                        .collect(Collectors.toList());
    }

    /** Every combination of the segments up to two deep, and deeper below the prefixes the templates have. */
    private static List<String> paths() {
        List<String> paths = new ArrayList<>(List.of("/", "/api/spaces;x=1/sp_1", "/api/spaces/sp_1/", "//api/spaces"));
        List<String> level = List.of("");
        for (int depth = 1; depth <= 5; depth++) {
            List<String> next = new ArrayList<>();
            for (String prefix : level) {
                boolean deeper = depth <= 2
                        || prefix.startsWith("/api/spaces/")
                        || prefix.startsWith("/api/repos/")
                        || (depth <= 4 && (prefix.startsWith("/api/") || prefix.startsWith("/git/")));
                if (!deeper && depth > 2) {
                    continue;
                }
                for (String segment : SEGMENTS) {
                    next.add(prefix + "/" + segment);
                }
            }
            paths.addAll(next);
            level = next;
        }
        return paths;
    }

    @Test
    void narrowingNeverChangesWhichRootCxfPicks() {
        JAXRSServiceImpl application = application();
        RootResourceIndex index = RootResourceIndex.build(application);
        int narrowed = 0;
        List<String> paths = paths();
        for (String path : paths) {
            JAXRSServiceImpl shown = index.serviceFor(path);
            assertEquals(picked(application, path), picked(shown, path), path);
            if (shown.getClassResourceInfos().size() < CLASSES.size()) {
                narrowed++;
            }
        }
        assertTrue(paths.size() > 10_000, "paths tried: " + paths.size());
        assertTrue(narrowed > paths.size() * 9 / 10, "narrowed " + narrowed + " of " + paths.size());
    }

    @Test
    void aPathMeetsOnlyTheRootsItsLeadingSegmentsAdmit() {
        RootResourceIndex index = RootResourceIndex.build(application());
        assertEquals(
                Set.of(Root.class, Spaces.class, Space.class, AnyApi.class, SpacesSuffix.class, Spaced.class),
                classes(index.serviceFor("/api/spaces/sp_1")));
        assertEquals(
                Set.of(
                        Root.class,
                        Spaces.class,
                        Space.class,
                        AnyApi.class,
                        SpacesSuffix.class,
                        Spaced.class,
                        Threads.class),
                classes(index.serviceFor("/api/spaces/sp_1/threads")));
        assertEquals(Set.of(Root.class, Health.class, Spaced.class), classes(index.serviceFor("/healthz")));
        assertEquals(Set.of(Root.class, Spaced.class), classes(index.serviceFor("/healthzz")));
        assertEquals(
                Set.of(Root.class, Spaced.class, AnyApi.class, SpacesSuffix.class),
                classes(index.serviceFor("/api/spacesX/sp_1")));
        assertEquals(
                Set.of(Root.class, AnyApi.class, SpacesSuffix.class, UserById.class, Spaced.class),
                classes(index.serviceFor("/api/users/abc")));
    }

    @Test
    void pathsWithMatrixParametersMeetEveryRoot() {
        JAXRSServiceImpl application = application();
        assertSame(application, RootResourceIndex.build(application).serviceFor("/api/spaces;v=1/sp_1"));
    }

    @Test
    void theSameAdmittedRootsShareOneService() {
        RootResourceIndex index = RootResourceIndex.build(application());
        assertSame(index.serviceFor("/api/spaces/sp_1"), index.serviceFor("/api/spaces/sp_2"));
    }

    @Test
    void leadingSegmentsStopAtTheFirstThatIsNeitherALiteralNorAPlainVariable() {
        assertArrayEquals(
                new String[] {"api", "spaces", null, "threads"},
                RootResourceIndex.leadingSegments("/api/spaces/{spaceId}/threads/"));
        assertArrayEquals(
                new String[] {"api", "spaces", null, "files"},
                RootResourceIndex.leadingSegments("/api/spaces/{spaceId}/files/{path: .*}"));
        assertArrayEquals(new String[] {"git", null}, RootResourceIndex.leadingSegments("/git/{owner}/{repo}.git"));
        assertArrayEquals(new String[] {}, RootResourceIndex.leadingSegments("/a b/c"));
        assertArrayEquals(new String[] {}, RootResourceIndex.leadingSegments("/"));
    }

    private static Set<Class<?>> classes(JAXRSServiceImpl service) {
        return service.getClassResourceInfos().stream()
                .map(ClassResourceInfo::getServiceClass)
                .collect(Collectors.toSet());
    }
}
