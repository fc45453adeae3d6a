package dev.atrium.agenttasks.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.agenttasks.internal.PlanParser.Step;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlanParserTest {

    @Test
    void theAskedForShapeIsRead() {
        assertEquals(
                List.of(new Step("Draft", "Write the first version"), new Step("Review", "")),
                PlanParser.parse(
                        "{\"steps\":[{\"title\":\"Draft\",\"detail\":\"Write the first version\"},{\"title\":\"Review\"}]}"));
    }

    @Test
    void aCodeFenceAndProseAroundTheJsonAreSkipped() {
        String answer =
                "Sure! Here is the plan:\n```json\n{\"steps\": [{\"title\": \"A\", \"detail\": \"a\"}]}\n```\nGood luck.";
        assertEquals(List.of(new Step("A", "a")), PlanParser.parse(answer));
    }

    @Test
    void aBareArrayOtherFieldNamesAndStringsAreSteps() {
        assertEquals(
                List.of(new Step("One", "first"), new Step("Two", ""), new Step("Three", "")),
                PlanParser.parse("[{\"name\":\"One\",\"description\":\"first\"},\"Two\",{\"step\":\"Three\"}]"));
    }

    @Test
    void aBraceBeforeTheJsonDoesNotHideIt() {
        assertEquals(
                List.of(new Step("Only", "")),
                PlanParser.parse("Use {curly} braces carefully. {\"steps\":[{\"title\":\"Only\"}]}"));
    }

    @Test
    void aNumberedListIsReadWithTitlesAndDetails() {
        String answer = """
                Here is what I would do:
                1. Collect the data: pull last month's numbers
                2) **Clean it** - drop duplicates
                3. Report
                   with a chart per region
                Done.
                """;
        assertEquals(
                List.of(
                        new Step("Collect the data", "pull last month's numbers"),
                        new Step("Clean it", "drop duplicates"),
                        new Step("Report", "with a chart per region")),
                PlanParser.parse(answer));
    }

    @Test
    void bulletsAreSteps() {
        assertEquals(List.of(new Step("First", ""), new Step("Second", "")), PlanParser.parse("- First\n* Second"));
    }

    @Test
    void anAnswerWithoutStepsIsEmpty() {
        assertTrue(PlanParser.parse("I cannot help with that.").isEmpty());
        assertTrue(PlanParser.parse("").isEmpty());
        assertTrue(PlanParser.parse(null).isEmpty());
        assertTrue(PlanParser.parse("{\"steps\": []}").isEmpty());
        assertTrue(PlanParser.parse("{\"steps\": [{\"title\": \"\"}]}").isEmpty());
    }

    @Test
    void stepsAreBoundedAndCleaned() {
        StringBuilder many = new StringBuilder("[");
        for (int i = 0; i < 80; i++) {
            many.append(i == 0 ? "" : ",").append("\"s").append(i).append('"');
        }
        assertEquals(
                PlanParser.MAX_STEPS,
                PlanParser.parse(many.append("]").toString()).size());
        String longTitle = "x".repeat(500);
        Step s = PlanParser.parse("[{\"title\":\"" + longTitle + "\",\"detail\":\"a\\u0000b\"}]")
                .get(0);
        assertEquals(PlanParser.MAX_TITLE, s.title().length());
        assertTrue(s.detail().indexOf('\0') < 0);
    }
}
