package dev.atrium.kernel.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A key file is made once, owner-only, never replaced, and a sealed value opens only with its key and associated data. */
class KeyFileTest {

    @Test
    void aKeyFileIsMadeOnceOwnerOnlyAndNeverReplaced(@TempDir Path data) throws Exception {
        Path file = data.resolve("keys/kind/k.key");
        byte[] made = KeyFile.readOrMake(file);
        assertEquals(32, made.length);
        assertArrayEquals(made, KeyFile.readOrMake(file));
        assertThrows(FileAlreadyExistsException.class, () -> KeyFile.make(file));
        assertArrayEquals(made, KeyFile.read(file));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent())));
        try (Stream<Path> left = Files.list(file.getParent())) {
            assertEquals(1, left.count(), "no temporary file is left");
        }
        Files.writeString(file, "not base64!");
        assertTrue(assertThrows(IOException.class, () -> KeyFile.read(file))
                .getMessage()
                .contains("not base64"));
        Files.writeString(file, "AAAA");
        assertTrue(assertThrows(IOException.class, () -> KeyFile.read(file))
                .getMessage()
                .contains("256-bit"));
    }

    @Test
    void aSealedValueOpensOnlyWithItsKeyAndAssociatedData(@TempDir Path data) throws Exception {
        Sealer a = Sealer.withKeyFile(data.resolve("a.key"), "a1");
        Sealer.Sealed sealed = a.seal("s3cret", "w1\nTOKEN");
        assertTrue(!new String(sealed.ciphertext(), java.nio.charset.StandardCharsets.ISO_8859_1).contains("s3cret"));
        assertEquals("s3cret", Sealer.withKeyFile(data.resolve("a.key"), "a1").open(sealed, "w1\nTOKEN"));
        assertThrows(IllegalStateException.class, () -> a.open(sealed, "w1\nOTHER"));
        Sealer b = Sealer.withKeyFile(data.resolve("b.key"), "a1");
        assertThrows(IllegalStateException.class, () -> b.open(sealed, "w1\nTOKEN"), "another key with the same id");
        assertThrows(
                IllegalStateException.class,
                () -> Sealer.withKeyFile(data.resolve("b.key"), "b1").open(sealed, "w1\nTOKEN"));
    }
}
