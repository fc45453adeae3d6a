package dev.atrium.actions.internal.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each unsupported or invalid thing is refused with its line and a message naming it. */
class WorkflowRefusalTest {

    private static final String PATH = ".github/workflows/ci.yml";

    /** A minimal valid workflow whose job {@code build} has {@code jobExtra} lines and one step. */
    private static String job(String jobExtra) {
        return """
                on: push
                jobs:
                  build:
                    runs-on: ubuntu-latest
                """ + jobExtra.indent(4) + """
                    steps:
                      - run: make
                """;
    }

    private static WorkflowException refused(String yaml) {
        return assertThrows(WorkflowException.class, () -> Workflow.parse(PATH, yaml, WorkflowParseTest.LABELS));
    }

    private static void assertRefused(String yaml, int line, String messagePart) {
        WorkflowException e = refused(yaml);
        assertTrue(e.getMessage().contains(messagePart), e.getMessage());
        assertTrue(e.getMessage().startsWith(PATH + " line " + line + ": "), e.getMessage());
        assertEquals(line, e.line(), e.getMessage());
    }

    @Test
    void anUnsupportedJobKeyIsRefusedWithItsFullPathAndLine() {
        WorkflowException e = refused(job("container: node:20"));
        assertEquals(
                PATH + " line 5: unsupported key 'jobs.build.container': the runner chooses the job's container"
                        + " by its label",
                e.getMessage());
        assertEquals(5, e.column());
        assertRefused(job("concurrency: one-at-a-time"), 5, "a job's own concurrency group is not supported");
    }

    @Test
    void anUnknownKeyIsRefusedAtAnyLevel() {
        assertRefused("on: push\nfoo: 1\njobs: {}\n", 2, "unknown key 'foo'");
        assertRefused("on: push\npermissions: read-all\njobs: {}\n", 2, "unsupported key 'permissions'");
        assertRefused(
                job("").replace("- run: make", "- run: make\n        sheel: bash"), 7, "'jobs.build.steps[0].sheel'");
        assertRefused("on:\n  push:\n    branch: [main]\njobs: {}\n", 3, "unknown key 'on.push.branch'");
        assertRefused(job("strategy:\n  matrix: {a: [1]}\n  foo: 1"), 7, "unknown key 'jobs.build.strategy.foo'");
    }

    @Test
    void aYamlSyntaxErrorIsRefusedWithSnakeYamlsLine() {
        WorkflowException e = refused("on: push\njobs:\n  build:\n    runs-on: [ubuntu\n    steps: x\n");
        assertTrue(e.getMessage().startsWith(PATH + " line "), e.getMessage());
        assertTrue(e.getMessage().contains("invalid YAML"), e.getMessage());
        assertTrue(e.line() >= 4, e.getMessage());
        assertRefused("on: push\non: pull_request\njobs: {}\n", 2, "duplicate key 'on'");
    }

    @Test
    void aWrongTypeIsRefused() {
        assertRefused(job("timeout-minutes: soon"), 5, "'jobs.build.timeout-minutes' must be a number of minutes");
        assertRefused(job("timeout-minutes: 0"), 5, "between 0.01 and 10080");
        assertRefused(job("continue-on-error: maybe"), 5, "must be true or false");
        assertRefused(job("env: [A, B]"), 5, "'jobs.build.env' must be a mapping");
        assertRefused("on: push\njobs:\n  build:\n    runs-on: alpine\n    steps: make\n", 5, "must be a list");
    }

    @Test
    void anUnsupportedUsesIsRefusedWithItsLine() {
        assertRefused(
                job("").replace("- run: make", "- run: make\n      - uses: docker/build-push-action@v5"),
                7,
                "unsupported action 'docker/build-push-action@v5' in 'jobs.build.steps[1].uses'");
        assertRefused(job("").replace("run: make", "uses: ./local-action"), 6, "unsupported action './local-action'");
    }

    @Test
    void anUnknownWithKeyOfABuiltInIsRefusedWithItsLine() {
        String yaml = job("").replace("run: make", "uses: actions/checkout@v4\n        with:\n          token: x");
        assertRefused(yaml, 8, "unsupported key 'jobs.build.steps[0].with.token' for actions/checkout");
        String upload = job("").replace(
                        "run: make",
                        "uses: actions/upload-artifact@v4\n        with:\n          path: a\n          if-no-files-found: fail");
        assertRefused(upload, 9, "must be warn, error or ignore");
        assertRefused(job("").replace("run: make", "uses: actions/cache@v4"), 6, "actions/cache needs 'with.key'");
    }

    @Test
    void aStepWithBothOrNeitherRunAndUsesIsRefused() {
        assertRefused(job("").replace("run: make", "run: make\n        uses: actions/checkout@v4"), 6, "exactly one");
        assertRefused(job("").replace("run: make", "name: nothing"), 6, "exactly one of 'run' and 'uses'");
        assertRefused(job("").replace("run: make", "run: make\n        with: {a: b}"), 7, "only for a 'uses' step");
    }

    @Test
    void aRunsOnLabelNoRunnerHasIsRefusedListingTheKnownLabels() {
        assertRefused(
                job("").replace("ubuntu-latest", "windows-latest"),
                4,
                "unknown runner label 'windows-latest' in 'jobs.build.runs-on' (known labels: alpine, debian-12,"
                        + " ubuntu-latest)");
        assertRefused(job("").replace("ubuntu-latest", "[self-hosted, linux]"), 4, "several labels");
    }

    @Test
    void aMatrixLabelNoRunnerHasIsRefusedAfterExpansion() {
        String yaml =
                job("strategy:\n  matrix:\n    os: [alpine, macos-14]").replace("ubuntu-latest", "${{ matrix.os }}");
        assertRefused(yaml, 4, "unknown runner label 'macos-14'");
        assertRefused(job("").replace("ubuntu-latest", "${{ inputs.os }}"), 4, "may only read the matrix");
    }

    @Test
    void needsNamingAnUnknownJobIsRefused() {
        assertRefused(job("needs: [lint]"), 5, "job 'build' needs unknown job 'lint'");
    }

    @Test
    void aNeedsCycleIsRefusedNamingItsJobs() {
        String yaml = """
                on: push
                jobs:
                  a:
                    runs-on: alpine
                    needs: c
                    steps: [{run: x}]
                  b:
                    runs-on: alpine
                    needs: a
                    steps: [{run: x}]
                  c:
                    runs-on: alpine
                    needs: [b]
                    steps: [{run: x}]
                """;
        assertRefused(yaml, 5, "the needs of jobs form a cycle: a -> c -> b -> a");
    }

    @Test
    void anInvalidCronIsRefused() {
        String yaml = "on:\n  schedule:\n    - cron: '61 * * * *'\njobs: {}\n";
        assertRefused(yaml, 3, "invalid cron '61 * * * *'");
        assertRefused("on:\n  schedule:\n    - cron: '* * * *'\njobs: {}\n", 3, "five fields expected");
    }

    @Test
    void anExpressionThatDoesNotParseIsRefusedWithItsLine() {
        assertRefused(
                job("").replace("run: make", "run: |\n          echo hi\n          echo ${{ github.sha "),
                8,
                "'${{' without a closing");
        assertRefused(job("env:\n  A: ${{ 1 + 2 }}"), 6, "invalid expression in 'jobs.build.env.A'");
        assertRefused(job("if: github.event_name = 'push'"), 5, "invalid expression in 'jobs.build.if'");
    }

    @Test
    void anExpressionCallingAnUnknownFunctionIsRefusedNamingIt() {
        assertRefused(job("name: ${{ toUpper('x') }}"), 5, "unknown function 'toUpper'");
        assertRefused(
                job("").replace(
                                "run: make",
                                "uses: actions/cache@v4\n        with:\n          path: p\n          key: ${{ hashFiles('**/lock') }}"),
                9,
                "function 'hashFiles' is not supported");
        assertRefused(job("if: ${{ foo.bar }}"), 5, "unrecognized named-value 'foo'");
    }

    @Test
    void duplicateStepIdsAreRefused() {
        String yaml = job("").replace("- run: make", "- id: x\n        run: a\n      - id: x\n        run: b");
        assertRefused(yaml, 8, "duplicate step id 'x'");
    }

    @Test
    void anInvalidJobIdIsRefused() {
        assertRefused("on: push\njobs:\n  1build:\n    runs-on: alpine\n    steps: [{run: x}]\n", 3, "job id '1build'");
    }

    @Test
    void anUnsupportedEventIsRefusedWithItsName() {
        assertRefused("on:\n  push:\n  release:\n    types: [published]\njobs: {}\n", 3, "unsupported event 'release'");
        assertRefused("on: [push, pull_request_target]\njobs: {}\n", 1, "unsupported event 'pull_request_target'");
    }

    @Test
    void aMatrixOfMoreThan256CombinationsIsRefused() {
        String yaml = job("strategy:\n  matrix:\n    a: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]\n"
                + "    b: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]");
        assertRefused(yaml, 7, "has 272 combinations, more than 256");
    }

    @Test
    void conflictingFiltersAndBadInputsAreRefused() {
        assertRefused(
                "on:\n  push:\n    branches: [main]\n    branches-ignore: [x]\njobs: {}\n", 4, "cannot both be set");
        assertRefused(
                "on:\n  workflow_dispatch:\n    inputs:\n      x:\n        type: choice\n        options: [a]\n"
                        + "        default: b\njobs: {}\n",
                7,
                "must be one of a");
        assertRefused("on:\n  pull_request:\n    types: [labeled]\njobs: {}\n", 3, "unsupported pull_request type");
    }

    @Test
    void missingPartsAreRefused() {
        assertRefused("jobs: {}\n", 1, "needs 'on'");
        assertRefused("on: push\njobs: {}\n", 2, "'jobs' has no job");
        assertRefused("on: push\njobs:\n  a:\n    steps: [{run: x}]\n", 3, "needs 'runs-on'");
        WorkflowException empty = refused("");
        assertEquals(0, empty.line());
        assertEquals(PATH + ": the file is empty", empty.getMessage());
    }

    @Test
    void noLabelsMeansEveryRunsOnIsRefused() {
        WorkflowException e = assertThrows(WorkflowException.class, () -> Workflow.parse(PATH, job(""), Set.of()));
        assertTrue(e.getMessage().contains("(known labels: none)"), e.getMessage());
    }

    @Test
    void anIfMixingTextWithAnExpressionIsRefused() {
        assertRefused(job("if: ${{ true }} && false"), 5, "mixes '${{ }}' with other text");
    }

    @Test
    void unsupportedShellsAndRunOnlyKeysOnUsesStepsAreRefused() {
        assertRefused(job("defaults:\n  run:\n    shell: cmd"), 7, "unsupported shell 'cmd'");
        assertRefused(
                job("").replace("run: make", "uses: actions/checkout@v4\n        shell: bash"),
                7,
                "'jobs.build.steps[0].shell' is only for a 'run' step");
        assertRefused("on:\njobs: {}\n", 1, "'on' names no event");
    }

    @Test
    void persistCredentialsIsAcceptedWithNoEffect() throws WorkflowException {
        String yaml = job("").replace(
                        "run: make", "uses: actions/checkout@v4\n        with:\n          persist-credentials: false");
        Step step = Workflow.parse(PATH, yaml, WorkflowParseTest.LABELS)
                .jobs()
                .get("build")
                .steps()
                .get(0);
        assertEquals(Uses.CHECKOUT, step.uses());
        assertEquals("false", step.with().get("persist-credentials"));
    }
}
