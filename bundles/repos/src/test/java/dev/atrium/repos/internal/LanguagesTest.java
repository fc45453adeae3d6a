package dev.atrium.repos.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.revwalk.RevCommit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LanguagesTest {

    @TempDir
    Path dir;

    @Test
    void theLanguageWithTheMostBytesWinsAndProseDataAndVendoredCodeDoNotCount() throws Exception {
        try (Git git =
                Git.init().setDirectory(dir.toFile()).setInitialBranch("main").call()) {
            write("src/Main.java", "class Main {}\n".repeat(10)); // 140 bytes of Java
            write("tools/a.py", "x = 1\n".repeat(10)); // 60 bytes of Python
            write("tools/b.py", "y = 2\n".repeat(10)); // 60 more
            write("README.md", "# prose\n".repeat(1000)); // not a language
            write("data.json", "{}\n".repeat(1000));
            write("node_modules/big/index.js", "var a;\n".repeat(1000)); // vendored
            write("vendor/lib.go", "package x\n".repeat(1000));
            git.add().addFilepattern(".").call();
            RevCommit c = git.commit()
                    .setMessage("files")
                    .setAuthor("t", "t@example.invalid")
                    .setCommitter("t", "t@example.invalid")
                    .setSign(false)
                    .call();
            assertEquals("Java", Languages.detect(git.getRepository(), c.getId()));
        }
    }

    @Test
    void aPathIsKnownByItsExtensionOnly() {
        assertEquals("TypeScript", Languages.language("web/app.tsx"));
        assertEquals("C++", Languages.language("a/b.HPP"));
        assertNull(Languages.language("Makefile"));
        assertNull(Languages.language(".bashrc"));
        assertNull(Languages.language("dir.d/README"));
    }

    private void write(String path, String content) throws Exception {
        Path p = dir.resolve(path);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content, StandardCharsets.UTF_8);
    }
}
