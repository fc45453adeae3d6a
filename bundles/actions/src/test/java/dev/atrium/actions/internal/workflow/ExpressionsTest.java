package dev.atrium.actions.internal.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ExpressionsTest {

    private static final Context CTX = Context.of(Map.of(
            "github",
            Map.of("ref", "refs/heads/main", "event_name", "push", "event", Map.of("commits", List.of("a", "b"))),
            "matrix",
            ordered("os", "alpine", "node", 16L),
            "env",
            Map.of("NAME", "World"),
            "steps",
            Map.of("build-it", Map.of("outputs", Map.of("version", "1.2")))));

    private static Map<String, Object> ordered(String k1, Object v1, String k2, Object v2) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(k1, v1);
        m.put(k2, v2);
        return m;
    }

    private static Object eval(String expression) {
        return Expressions.parse(expression).evaluate(CTX);
    }

    @Test
    void literalsEvaluateToTheirValues() {
        assertEquals("it's", eval("'it''s'"));
        assertEquals(42.0, eval("42"));
        assertEquals(-1.5, eval("-1.5"));
        assertEquals(255.0, eval("0xff"));
        assertEquals(true, eval("true"));
        assertEquals(null, eval("null"));
    }

    @Test
    void andBindsTighterThanOrAndNotTighterThanComparison() {
        assertEquals(true, eval("true || false && false"));
        assertEquals(false, eval("(true || false) && false"));
        assertEquals(true, eval("!false == true"));
        assertEquals(true, eval("1 < 2 == true"));
    }

    @Test
    void andAndOrReturnAnOperandNotABoolean() {
        assertEquals("b", eval("'a' && 'b'"));
        assertEquals("", eval("'' && 'b'"));
        assertEquals("fallback", eval("matrix.missing || 'fallback'"));
    }

    @Test
    void equalityCoercesDifferentTypesToNumbers() {
        assertEquals(true, eval("'1' == 1"));
        assertEquals(true, eval("null == 0"));
        assertEquals(true, eval("false == 0"));
        assertEquals(true, eval("true == 1"));
        assertEquals(true, eval("'' == 0"));
        assertEquals(false, eval("'abc' == 0"), "NaN equals nothing");
        assertEquals(true, eval("null == ''"), "null and '' both coerce to 0");
        assertEquals(true, eval("' 2 ' == 2"));
    }

    @Test
    void stringsCompareIgnoringCase() {
        assertEquals(true, eval("'A' == 'a'"));
        assertEquals(true, eval("github.event_name == 'PUSH'"));
        assertEquals(true, eval("'a' < 'B'"));
        assertEquals(false, eval("'a' != 'A'"));
    }

    @Test
    void orderingWithNaNIsFalse() {
        assertEquals(false, eval("'x' < 1"));
        assertEquals(false, eval("'x' >= 1"));
        assertEquals(true, eval("2 >= '2'"));
    }

    @Test
    void propertiesAreReadByDotAndIndexIgnoringCase() {
        assertEquals("alpine", eval("matrix.os"));
        assertEquals("alpine", eval("matrix['OS']"));
        assertEquals("1.2", eval("steps.build-it.outputs.version"));
        assertEquals("b", eval("github.event.commits[1]"));
        assertEquals(null, eval("github.event.commits[5]"));
        assertEquals(null, eval("github.nothing.deeper"));
    }

    @Test
    void functionsBehaveAsGitHubs() {
        assertEquals(true, eval("contains('Hello world', 'WORLD')"));
        assertEquals(true, eval("contains(github.event.commits, 'A')"));
        assertEquals(true, eval("startsWith(github.ref, 'refs/HEADS/')"));
        assertEquals(true, eval("endsWith(github.ref, '/main')"));
        assertEquals("Hello World {x}", eval("format('Hello {0} {{x}}', env.NAME)"));
        assertEquals("a, b", eval("join(github.event.commits, ', ')"));
        assertEquals("a,b", eval("join(github.event.commits)"));
        assertEquals("{\n  \"os\": \"alpine\",\n  \"node\": 16\n}", eval("toJSON(matrix)"));
        assertEquals(List.of(1, 2), eval("fromJSON('[1, 2]')"));
        assertEquals(true, eval("fromJSON('true')"));
        assertEquals(3, eval("fromJSON('{\"a\": 3}').a"));
    }

    @Test
    void unknownAndUnsupportedFunctionsAreRefusedAtParse() {
        ExpressionException unknown = assertThrows(ExpressionException.class, () -> Expressions.parse("a(1)"));
        assertTrue(unknown.getMessage().startsWith("unknown function 'a'"), unknown.getMessage());
        ExpressionException hash =
                assertThrows(ExpressionException.class, () -> Expressions.parse("hashFiles('**/*.lock')"));
        assertTrue(hash.getMessage().contains("'hashFiles' is not supported"), hash.getMessage());
        ExpressionException arity = assertThrows(ExpressionException.class, () -> Expressions.parse("contains('a')"));
        assertTrue(arity.getMessage().contains("takes 2 argument(s), not 1"), arity.getMessage());
        ExpressionException filter =
                assertThrows(ExpressionException.class, () -> Expressions.parse("github.event.commits.*.id"));
        assertTrue(filter.getMessage().contains("'.*' is not supported"), filter.getMessage());
    }

    @Test
    void syntaxErrorsNameTheirPosition() {
        ExpressionException e = assertThrows(ExpressionException.class, () -> Expressions.parse("1 == == 2"));
        assertEquals(5, e.position());
        assertThrows(ExpressionException.class, () -> Expressions.parse("'open"));
        assertThrows(ExpressionException.class, () -> Expressions.parse("(1"));
        assertThrows(ExpressionException.class, () -> Expressions.parse(""));
        assertThrows(ExpressionException.class, () -> Expressions.parse("a = b"));
        assertThrows(ExpressionException.class, () -> Expressions.validate("x ${{ 1 2 }}"));
        Expressions.validate("no expression, ${ not one } either");
    }

    @Test
    void interpolationRendersValuesTheGitHubWay() {
        assertEquals("node 16 on alpine", Expressions.interpolate("node ${{ matrix.node }} on ${{matrix.os}}", CTX));
        assertEquals("[]", Expressions.interpolate("[${{ matrix.none }}]", CTX));
        assertEquals("3 1.5 true", Expressions.interpolate("${{ 3.0 }} ${{ 1.5 }} ${{ true }}", CTX));
        assertEquals("[\n  \"a\",\n  \"b\"\n]", Expressions.interpolate("${{ github.event.commits }}", CTX));
        assertEquals("x}}y", Expressions.interpolate("${{ 'x}}' }}y", CTX), "a }} inside a string does not close");
    }

    @Test
    void anIfWithoutAStatusFunctionIsImplicitlySuccessAnd() {
        Context failed = CTX.withStatus(Context.Status.FAILURE);
        assertTrue(Expressions.condition("matrix.os == 'alpine'", CTX));
        assertFalse(Expressions.condition("matrix.os == 'alpine'", failed));
        assertTrue(Expressions.condition("${{ failure() && matrix.os == 'alpine' }}", failed));
        assertTrue(Expressions.condition("always()", failed));
        assertFalse(Expressions.condition("success()", failed));
        assertTrue(Expressions.condition("cancelled()", CTX.withStatus(Context.Status.CANCELLED)));
        assertFalse(Expressions.condition("", failed));
        assertTrue(Expressions.condition(null, CTX));
        assertFalse(Expressions.condition("${{ false }}", CTX));
        assertTrue(Expressions.condition("'non-empty'", CTX));
    }
}
