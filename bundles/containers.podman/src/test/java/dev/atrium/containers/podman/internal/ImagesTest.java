package dev.atrium.containers.podman.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImagesTest {

    @TempDir
    Path dir;

    @Test
    void eachTarIsALabelAndTheAliasesComeWithTheDefaultLabel() throws Exception {
        Files.writeString(dir.resolve("busybox.tar"), "a");
        Files.writeString(dir.resolve("Not-A-Label.tar"), "a");
        Files.writeString(dir.resolve("notes.txt"), "a");
        Images images = new Images(dir, "");
        assertEquals("busybox", images.defaultLabel());
        assertEquals(
                Set.of("busybox", "ubuntu-latest", "ubuntu-24.04", "ubuntu-22.04", "linux", "self-hosted"),
                images.labels());
        assertEquals("busybox", images.resolve("ubuntu-latest"));
        assertEquals("busybox", images.resolve("busybox"));
    }

    @Test
    void debianIsTheDefaultWhenItHasATarUnlessConfiguredOtherwise() throws Exception {
        Files.writeString(dir.resolve("busybox.tar"), "a");
        Files.writeString(dir.resolve("debian.tar"), "b");
        assertEquals("debian", new Images(dir, "").resolve("linux"));
        assertEquals("busybox", new Images(dir, "busybox").resolve("linux"));
    }

    @Test
    void withoutTheDefaultLabelsTarThereAreNoAliases() throws Exception {
        Files.writeString(dir.resolve("node.tar"), "a");
        assertEquals(Set.of("node"), new Images(dir, "").labels());
        assertEquals(Set.of(), new Images(dir.resolve("missing"), "").labels());
    }

    @Test
    void theHashFollowsTheTarsContentAndIsKeptWhileSizeAndTimeStay() throws Exception {
        Path tar = dir.resolve("busybox.tar");
        Files.writeString(tar, "one");
        FileTime time = FileTime.fromMillis(1_700_000_000_000L);
        Files.setLastModifiedTime(tar, time);
        Images images = new Images(dir, "");
        String first = images.hash(tar);
        assertEquals(12, first.length());
        assertTrue(first.matches("[0-9a-f]{12}"));
        // same size and time: the cached hash, without reading the file again
        Files.writeString(tar, "two");
        Files.setLastModifiedTime(tar, time);
        assertEquals(first, images.hash(tar));
        // a rebuilt tar (a new time): a new hash, so it is imported again
        Files.setLastModifiedTime(tar, FileTime.fromMillis(1_700_000_001_000L));
        assertNotEquals(first, images.hash(tar));
    }
}
