package dev.atrium.actions.internal.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TriggersTest {

    private static Triggers on(String onYaml) throws WorkflowException {
        String yaml = "on:\n" + onYaml.indent(2) + "jobs:\n  a:\n    runs-on: alpine\n    steps: [{run: x}]\n";
        return Workflow.parse("t.yml", yaml, Set.of("alpine")).on();
    }

    @Test
    void branchPatternsDecideByTheLastMatchingPattern() throws WorkflowException {
        Triggers t = on("push:\n  branches: [main, 'release/**', '!release/old']");
        assertTrue(t.onPush("refs/heads/main", null));
        assertTrue(t.onPush("refs/heads/release/1.x/hotfix", null));
        assertFalse(t.onPush("refs/heads/release/old", null));
        assertFalse(t.onPush("refs/heads/mainline", null));
        assertFalse(t.onPush("refs/tags/v1", null), "a branch filter alone leaves tags out");
    }

    @Test
    void aSingleStarDoesNotCrossASlash() throws WorkflowException {
        Triggers t = on("push:\n  branches: ['feature/*']");
        assertTrue(t.onPush("refs/heads/feature/x", null));
        assertFalse(t.onPush("refs/heads/feature/x/y", null));
    }

    @Test
    void tagPatternsMatchTagsOnly() throws WorkflowException {
        Triggers t = on("push:\n  tags: ['v*']");
        assertTrue(t.onPush("refs/tags/v1.2.0", null));
        assertFalse(t.onPush("refs/tags/release-1", null));
        assertFalse(t.onPush("refs/heads/main", null), "a tag filter alone leaves branches out");
    }

    @Test
    void ignoreListsExcludeWhatTheyMatch() throws WorkflowException {
        Triggers t = on("push:\n  branches-ignore: ['dependabot/**']\n  tags-ignore: ['nightly']");
        assertTrue(t.onPush("refs/heads/main", null));
        assertFalse(t.onPush("refs/heads/dependabot/npm/x", null));
        assertTrue(t.onPush("refs/tags/v1", null));
        assertFalse(t.onPush("refs/tags/nightly", null));
    }

    @Test
    void pathsRunWhenAChangedFileMatches() throws WorkflowException {
        Triggers t = on("push:\n  paths: ['src/**', '!src/**/*.md']");
        assertTrue(t.onPush("refs/heads/main", List.of("docs/a.md", "src/main/A.java")));
        assertFalse(t.onPush("refs/heads/main", List.of("docs/a.md", "README.md")));
        assertFalse(t.onPush("refs/heads/main", List.of("src/notes/x.md")));
        assertTrue(t.onPush("refs/heads/main", null), "unknown changes pass the paths filter");
        assertTrue(t.onPush("refs/tags/v1", List.of("docs/a.md")), "paths do not apply to tags");
    }

    @Test
    void pathsIgnoreSkipsWhenEveryChangedFileIsIgnored() throws WorkflowException {
        Triggers t = on("pull_request:\n  branches: [main]\n  paths-ignore: ['docs/**', '*.md']");
        assertFalse(t.onPullRequest("main", List.of("docs/x.txt", "README.md")));
        assertTrue(t.onPullRequest("main", List.of("docs/x.txt", "src/A.java")));
        assertFalse(t.onPullRequest("develop", List.of("src/A.java")));
        assertTrue(t.onPullRequest("refs/heads/main", null));
    }

    @Test
    void pullRequestTypesDefaultToOpenedSynchronizeReopened() throws WorkflowException {
        Triggers t = on("pull_request:");
        assertTrue(t.onPullRequest("opened", "main", null));
        assertTrue(t.onPullRequest("synchronize", "main", null));
        assertTrue(t.onPullRequest("reopened", "main", null));
        assertFalse(t.onPullRequest("closed", "main", null));
        Triggers closed = on("pull_request:\n  types: [closed]");
        assertTrue(closed.onPullRequest("closed", "main", null));
        assertFalse(closed.onPullRequest("opened", "main", null));
        assertFalse(closed.onPullRequest("main", null), "the two-argument form is an opened or updated pull request");
        assertTrue(t.onPullRequest("main", null));
    }

    @Test
    void globCharactersFollowGitHubsCheatSheet() {
        assertTrue(Glob.of(List.of("v1.?")).matches("v1."), "? is zero or one of the preceding character");
        assertTrue(Glob.of(List.of("v1.?")).matches("v1"));
        assertTrue(Glob.of(List.of("v[12].[0-9]+")).matches("v2.10"));
        assertFalse(Glob.of(List.of("v[12].[0-9]+")).matches("v3.1"));
        assertTrue(Glob.of(List.of("**.js")).matches("a/b/c.js"));
        assertTrue(Glob.of(List.of("*.js")).matches("c.js"));
        assertFalse(Glob.of(List.of("*.js")).matches("a/c.js"));
        assertTrue(Glob.of(List.of("a\\*b")).matches("a*b"));
        assertFalse(Glob.of(List.of("a\\*b")).matches("axb"));
        assertThrows(IllegalArgumentException.class, () -> Glob.of(List.of("[abc")));
    }

    @Test
    void dispatchInputsAreResolvedWithDefaultsAndCheckedByType() throws WorkflowException {
        Triggers t = on("""
                workflow_dispatch:
                  inputs:
                    env:
                      type: choice
                      options: [staging, prod]
                      required: true
                    debug:
                      type: boolean
                      default: 'false'
                    count:
                      type: number
                    note:
                      description: free text
                """);
        assertEquals(
                Map.of("env", "prod", "debug", "false", "count", "", "note", ""),
                t.resolveInputs(Map.of("env", "prod")));
        assertEquals(
                List.of("env", "debug", "count", "note"),
                List.copyOf(t.resolveInputs(Map.of("env", "prod")).keySet()));
        assertMessage("input 'env' is required", () -> t.resolveInputs(Map.of()));
        assertMessage("must be one of staging, prod", () -> t.resolveInputs(Map.of("env", "dev")));
        assertMessage("is a boolean", () -> t.resolveInputs(Map.of("env", "prod", "debug", "yes")));
        assertMessage("is a number", () -> t.resolveInputs(Map.of("env", "prod", "count", "many")));
        assertMessage("unknown input 'x'", () -> t.resolveInputs(Map.of("env", "prod", "x", "1")));
        assertMessage("no workflow_dispatch", () -> on("push:").resolveInputs(Map.of()));
    }

    private static void assertMessage(String part, org.junit.jupiter.api.function.Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }

    @Test
    void cronGivesTheNextRunInUtc() {
        Schedule hourly = Schedule.of("15 * * * *");
        ZonedDateTime t = ZonedDateTime.of(2026, 1, 1, 10, 15, 0, 0, ZoneOffset.UTC);
        assertEquals(t.plusHours(1), hourly.nextAfter(t).orElseThrow(), "strictly after");
        ZonedDateTime paris = ZonedDateTime.of(2026, 1, 1, 12, 0, 0, 0, java.time.ZoneId.of("Europe/Paris"));
        assertEquals(
                ZonedDateTime.of(2026, 1, 1, 11, 15, 0, 0, ZoneOffset.UTC),
                hourly.nextAfter(paris).orElseThrow());
        Schedule everyFive = Schedule.of("*/5 * * * *");
        assertEquals(
                ZonedDateTime.of(2026, 1, 1, 10, 20, 0, 0, ZoneOffset.UTC),
                everyFive.nextAfter(t).orElseThrow());
        Schedule named = Schedule.of("0 9 * JAN MON");
        assertEquals(
                ZonedDateTime.of(2026, 1, 5, 9, 0, 0, 0, ZoneOffset.UTC),
                named.nextAfter(t).orElseThrow());
    }

    @Test
    void dayOfMonthAndDayOfWeekBothSetMeansEitherAsInPosix() {
        Schedule s = Schedule.of("0 0 13 * 5"); // the 13th, and every Friday
        ZonedDateTime thu = ZonedDateTime.of(2026, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);
        assertEquals(
                ZonedDateTime.of(2026, 1, 2, 0, 0, 0, 0, ZoneOffset.UTC),
                s.nextAfter(thu).orElseThrow());
    }

    @Test
    void invalidCronsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> Schedule.of("* * * *"));
        assertThrows(IllegalArgumentException.class, () -> Schedule.of("0 25 * * *"));
        assertThrows(IllegalArgumentException.class, () -> Schedule.of("0 0 * * * 2026"));
        assertThrows(IllegalArgumentException.class, () -> Schedule.of("@daily"));
    }
}
