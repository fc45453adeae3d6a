package dev.atrium.search.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class SourceChunksTest {

    @Test
    void sourceCodeIsCutAtDeclarationsWithTheirNamesAndLineRanges() {
        String js = String.join(
                "\n",
                "// utilities",
                "import x from 'y';",
                "",
                "export function sortItems(list) {",
                "  const copy = [...list];",
                "  copy.sort((a, b) => a - b);",
                "  return copy;",
                "}",
                "",
                "export async function fetchAll(urls) {",
                "  const out = [];",
                "  for (const u of urls) {",
                "    out.push(await fetch(u));",
                "  }",
                "  return out;",
                "}",
                "");
        List<SourceChunks.Chunk> chunks = SourceChunks.of("src/util.js", js);
        assertEquals(
                List.of("sortItems", "fetchAll"),
                chunks.stream().map(SourceChunks.Chunk::symbol).toList().subList(chunks.size() - 2, chunks.size()),
                chunks.toString());
        SourceChunks.Chunk sort = chunks.get(chunks.size() - 2);
        assertTrue(sort.startLine() <= 4 && sort.endLine() >= 8, sort.toString());
        assertTrue(sort.text().contains("copy.sort"));
        assertEquals(16, chunks.get(chunks.size() - 1).endLine());
    }

    @Test
    void javaMethodsAndClassesAreDeclarationsButControlFlowIsNot() {
        String java = String.join(
                "\n",
                "package a;",
                "",
                "public class Orders {",
                "",
                "    private final List<String> items = new ArrayList<>();",
                "",
                "    public List<String> sorted(Comparator<String> order) {",
                "        if (items.isEmpty()) {",
                "            return List.of();",
                "        }",
                "        for (String s : items) {",
                "            check(s);",
                "        }",
                "        return items.stream().sorted(order).toList();",
                "    }",
                "}");
        List<String> symbols = SourceChunks.of("Orders.java", java).stream()
                .map(SourceChunks.Chunk::symbol)
                .toList();
        assertTrue(symbols.contains("Orders"), symbols.toString());
        assertTrue(symbols.contains("sorted"), symbols.toString());
        assertTrue(!symbols.contains("if") && !symbols.contains("for"), symbols.toString());
    }

    @Test
    void proseIsCutAtParagraphsAndLongPiecesAreBounded() {
        StringBuilder md =
                new StringBuilder("# Title\n\nFirst paragraph line one.\nline two.\nline three.\nline four.\n\n");
        for (int i = 0; i < 200; i++) {
            md.append("long line ").append(i).append('\n');
        }
        List<SourceChunks.Chunk> chunks = SourceChunks.of("README.md", md.toString());
        assertTrue(chunks.size() >= 3, chunks.size() + " pieces");
        for (SourceChunks.Chunk c : chunks) {
            assertTrue(c.endLine() - c.startLine() + 1 <= SourceChunks.MAX_LINES, c.toString());
        }
        assertEquals(1, chunks.get(0).startLine());
    }
}
