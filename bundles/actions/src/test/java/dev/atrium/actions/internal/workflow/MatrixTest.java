package dev.atrium.actions.internal.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The examples of GitHub's "Using a matrix for your jobs", expanded as GitHub documents them. */
class MatrixTest {

    private static List<Map<String, Object>> expand(String matrixYaml) throws WorkflowException {
        String yaml = "on: push\njobs:\n  t:\n    runs-on: alpine\n    strategy:\n      matrix:\n"
                + matrixYaml.indent(8) + "    steps: [{run: x}]\n";
        return Workflow.parse("m.yml", yaml, Set.of("alpine")).jobs().get("t").combinations();
    }

    private static Map<String, Object> m(Object... kv) {
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            out.put((String) kv[i], kv[i + 1]);
        }
        return out;
    }

    @Test
    void aSingleDimensionMatrixRunsOneJobPerValue() throws WorkflowException {
        assertEquals(List.of(m("version", 10L), m("version", 12L), m("version", 14L)), expand("version: [10, 12, 14]"));
    }

    @Test
    void aMultiDimensionMatrixVariesTheFirstKeySlowest() throws WorkflowException {
        assertEquals(
                List.of(
                        m("os", "ubuntu-22.04", "version", 10L),
                        m("os", "ubuntu-22.04", "version", 12L),
                        m("os", "ubuntu-22.04", "version", 14L),
                        m("os", "ubuntu-20.04", "version", 10L),
                        m("os", "ubuntu-20.04", "version", 12L),
                        m("os", "ubuntu-20.04", "version", 14L)),
                expand("os: [ubuntu-22.04, ubuntu-20.04]\nversion: [10, 12, 14]"));
    }

    @Test
    void includeAddsToCombinationsItDoesNotChangeOrAddsItsOwn() throws WorkflowException {
        String yaml = """
                fruit: [apple, pear]
                animal: [cat, dog]
                include:
                  - color: green
                  - color: pink
                    animal: cat
                  - fruit: apple
                    shape: circle
                  - fruit: banana
                  - fruit: banana
                    animal: cat
                """;
        assertEquals(
                List.of(
                        m("fruit", "apple", "animal", "cat", "color", "pink", "shape", "circle"),
                        m("fruit", "apple", "animal", "dog", "color", "green", "shape", "circle"),
                        m("fruit", "pear", "animal", "cat", "color", "pink"),
                        m("fruit", "pear", "animal", "dog", "color", "green"),
                        m("fruit", "banana"),
                        m("fruit", "banana", "animal", "cat")),
                expand(yaml));
    }

    @Test
    void includeExpandsTheOneMatchingConfiguration() throws WorkflowException {
        String yaml = """
                os: [windows-latest, ubuntu-latest]
                node: [14, 16]
                include:
                  - os: windows-latest
                    node: 16
                    npm: 6
                """;
        assertEquals(
                List.of(
                        m("os", "windows-latest", "node", 14L),
                        m("os", "windows-latest", "node", 16L, "npm", 6L),
                        m("os", "ubuntu-latest", "node", 14L),
                        m("os", "ubuntu-latest", "node", 16L)),
                expand(yaml));
    }

    @Test
    void includeThatChangesAnOriginalValueAddsAConfiguration() throws WorkflowException {
        String yaml = """
                os: [windows-latest, ubuntu-latest]
                node: [14, 16]
                include:
                  - os: windows-latest
                    node: 17
                """;
        List<Map<String, Object>> all = expand(yaml);
        assertEquals(5, all.size());
        assertEquals(m("os", "windows-latest", "node", 17L), all.get(4));
    }

    @Test
    void aMatrixOfIncludesOnlyRunsEachInclude() throws WorkflowException {
        String yaml = """
                include:
                  - site: "production"
                    datacenter: "site-a"
                  - site: "staging"
                    datacenter: "site-b"
                """;
        assertEquals(
                List.of(m("site", "production", "datacenter", "site-a"), m("site", "staging", "datacenter", "site-b")),
                expand(yaml));
    }

    @Test
    void excludeRemovesEveryCombinationMatchingAllItsPairs() throws WorkflowException {
        String yaml = """
                os: [macos-latest, windows-latest]
                version: [12, 14, 16]
                environment: [staging, production]
                exclude:
                  - os: macos-latest
                    version: 12
                    environment: production
                  - os: windows-latest
                    version: 16
                """;
        List<Map<String, Object>> all = expand(yaml);
        assertEquals(9, all.size());
        assertEquals(m("os", "macos-latest", "version", 12L, "environment", "staging"), all.get(0));
        assertEquals(m("os", "windows-latest", "version", 14L, "environment", "production"), all.get(8));
    }

    @Test
    void valuesKeepTheirYamlTypesAndObjectsStayObjects() throws WorkflowException {
        List<Map<String, Object>> all = expand("cfg: [{a: 1, b: 'x'}, 'yes', true, 1.5, null]");
        assertEquals(m("cfg", m("a", 1L, "b", "x")), all.get(0));
        assertEquals(m("cfg", "yes"), all.get(1), "YAML 1.2: yes is a string");
        assertEquals(m("cfg", true), all.get(2));
        assertEquals(m("cfg", 1.5), all.get(3));
        assertEquals(m("cfg", null), all.get(4));
    }
}
