package dev.atrium.skills.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.skills.internal.SkillStore.Skill;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class SkillDocumentTest {

    @Test
    void frontMatterGivesNameDescriptionAndToolsAndTheRestIsTheInstructions() {
        SkillDocument d = SkillDocument.parse(
                "---\nname: research\ndescription: Look things up.\ntools: [http_fetch, memory_add]\n---\n\nStep one.\n");
        assertEquals("research", d.name());
        assertEquals("Look things up.", d.description());
        assertEquals(List.of("http_fetch", "memory_add"), d.tools());
        assertEquals("Step one.", d.instructions());
    }

    @Test
    void aFileWithoutFrontMatterOrNameIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> SkillDocument.parse("no front matter"));
        assertThrows(IllegalArgumentException.class, () -> SkillDocument.parse("---\ndescription: d\n---\nx"));
        assertThrows(
                IllegalArgumentException.class,
                () -> SkillDocument.parse("---\nname: Bad Name\ndescription: d\n---\nx"));
    }

    @Test
    void everyShippedSkillParses() throws Exception {
        List<Path> files;
        try (Stream<Path> s = Files.list(Path.of("src/main/resources/skills"))) {
            files = s.toList();
        }
        assertTrue(files.size() >= 5, files.toString());
        for (Path f : files) {
            SkillDocument d = SkillDocument.parse(Files.readString(f));
            assertEquals(f.getFileName().toString(), d.name() + ".md");
        }
    }

    @Test
    void theContextKeepsWholeSkillsWithinItsBoundAndNamesTheOmittedOnes() {
        List<Skill> skills = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            skills.add(new Skill("skl_" + i, "spc", "s" + i, "d", "x".repeat(5_000), List.of(), true, null, "t", "t"));
        }
        SkillsContext.Context c = SkillsContext.build(skills);
        assertTrue(c.text().length() <= SkillsContext.MAX_CHARS);
        assertEquals(List.of("s0", "s1", "s2"), c.skills());
        assertEquals(List.of("s3", "s4"), c.omitted());
        assertEquals("", SkillsContext.build(List.of()).text());
    }
}
