package dev.atrium.actions.internal.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class WorkflowParseTest {

    static final Set<String> LABELS = Set.of("ubuntu-latest", "debian-12", "alpine");

    static final String CI = """
            name: CI
            on:
              push:
                branches: [main, 'release/**']
              pull_request:
              workflow_dispatch:
                inputs:
                  level:
                    description: Log level
                    type: choice
                    options: [info, debug]
                    default: info
                  dry-run:
                    type: boolean
              schedule:
                - cron: '30 5 * * 1-5'
            env:
              CI: "true"
            defaults:
              run:
                shell: bash
            concurrency:
              group: ci-${{ github.ref }}
              cancel-in-progress: true
            jobs:
              build:
                name: Build (${{ matrix.os }})
                runs-on: ${{ matrix.os }}
                timeout-minutes: 30
                strategy:
                  fail-fast: false
                  max-parallel: 2
                  matrix:
                    os: [ubuntu-latest, debian-12, alpine]
                outputs:
                  version: ${{ steps.version.outputs.value }}
                steps:
                  - uses: actions/checkout@v4
                    with:
                      fetch-depth: 0
                  - id: version
                    run: echo "value=1.2.${{ github.run_number }}" >> "$GITHUB_OUTPUT"
                  - name: Test
                    run: |
                      make test
                      echo done
                    env:
                      LEVEL: ${{ inputs.level }}
                    working-directory: src
                  - uses: actions/upload-artifact@v4
                    if: ${{ matrix.os == 'ubuntu-latest' }}
                    with:
                      name: dist
                      path: |
                        dist/**
                        !dist/*.tmp
                      retention-days: 5
              publish:
                needs: build
                if: github.ref == 'refs/heads/main'
                runs-on: ubuntu-latest
                defaults:
                  run:
                    working-directory: out
                steps:
                  - uses: actions/download-artifact@v4
                    with:
                      name: dist
                      path: out
                  - run: ./publish.sh ${{ needs.build.outputs.version }}
                    continue-on-error: true
                    timeout-minutes: 5
            """;

    @Test
    void aRealisticWorkflowParsesIntoItsModel() throws WorkflowException {
        Workflow w = Workflow.parse(".github/workflows/ci.yml", CI, LABELS);
        assertEquals("CI", w.name());
        assertEquals(Map.of("CI", "true"), w.env());
        assertEquals(new Defaults("bash", null), w.defaults());
        assertEquals(new Concurrency("ci-${{ github.ref }}", true), w.concurrency());
        assertEquals(List.of("build", "publish"), List.copyOf(w.jobs().keySet()));

        Triggers on = w.on();
        assertTrue(on.onPush("refs/heads/main", null));
        assertTrue(on.onPush("refs/heads/release/1.0", null));
        assertFalse(on.onPush("refs/heads/feature", null));
        assertFalse(on.onPush("refs/tags/v1", null), "only branch filters: tags do not run it");
        assertTrue(on.onPullRequest("opened", "main", List.of("a.txt")));
        assertFalse(on.onPullRequest("closed", "main", List.of("a.txt")));
        assertTrue(on.dispatchable());
        assertEquals(
                List.of("level", "dry-run"), List.copyOf(on.dispatchInputs().keySet()));
        assertEquals(
                new Input("Log level", false, "info", "choice", List.of("info", "debug")),
                on.dispatchInputs().get("level"));
        assertEquals(Map.of("level", "info", "dry-run", "false"), on.resolveInputs(Map.of()));
        assertEquals("30 5 * * 1-5", on.schedules().get(0).cron());

        Job build = w.jobs().get("build");
        assertEquals(30, build.timeoutMinutes());
        assertEquals(new Strategy(build.strategy().matrix(), false, 2), build.strategy());
        assertEquals(3, build.combinations().size());
        assertEquals("debian-12", build.runsOn(Map.of("os", "debian-12")));
        assertEquals(Map.of("version", "${{ steps.version.outputs.value }}"), build.outputs());
        assertEquals(4, build.steps().size());
        Step checkout = build.steps().get(0);
        assertEquals(Uses.CHECKOUT, checkout.uses());
        assertEquals(Map.of("fetch-depth", "0"), checkout.with());
        assertEquals(38, checkout.line());
        Step test = build.steps().get(2);
        assertEquals("make test\necho done\n", test.run());
        assertEquals("src", test.workingDirectory());
        assertEquals(0, test.timeoutMinutes());
        Step upload = build.steps().get(3);
        assertEquals(Uses.UPLOAD_ARTIFACT, upload.uses());
        assertEquals("dist/**\n!dist/*.tmp\n", upload.with().get("path"));
        assertEquals("${{ matrix.os == 'ubuntu-latest' }}", upload.ifExpression());
        assertEquals(26, build.line());

        Job publish = w.jobs().get("publish");
        assertEquals(List.of("build"), publish.needs());
        assertEquals(360, publish.timeoutMinutes());
        assertNull(publish.strategy());
        assertEquals(null, publish.concurrency());
        assertEquals(new Defaults(null, "out"), publish.defaults());
        assertEquals(new Defaults("bash", "out"), publish.defaults().orElse(w.defaults()));
        assertTrue(publish.steps().get(1).continueOnError());
        assertEquals(5, publish.steps().get(1).timeoutMinutes());
        assertEquals(List.of(build, publish), w.jobOrder());
    }

    @Test
    void theScheduleOfARealisticWorkflowFiresOnWeekdayMornings() throws WorkflowException {
        Schedule s = Workflow.parse("ci.yml", CI, LABELS).on().schedules().get(0);
        ZonedDateTime friday = ZonedDateTime.of(2026, 12, 4, 6, 0, 0, 0, ZoneOffset.UTC);
        assertEquals(
                ZonedDateTime.of(2026, 12, 7, 5, 30, 0, 0, ZoneOffset.UTC),
                s.nextAfter(friday).orElseThrow());
    }

    @Test
    void onAsAStringOrAListNamesEvents() throws WorkflowException {
        String jobs = "\njobs:\n  a:\n    runs-on: alpine\n    steps:\n      - run: 'true'\n";
        Workflow s = Workflow.parse("w.yml", "on: push" + jobs, LABELS);
        assertTrue(s.on().onPush("refs/tags/v1", List.of()));
        assertFalse(s.on().dispatchable());
        Workflow l = Workflow.parse("w.yml", "on: [pull_request, workflow_dispatch]" + jobs, LABELS);
        assertFalse(l.on().onPush("refs/heads/main", null));
        assertTrue(l.on().onPullRequest("main", null));
        assertTrue(l.on().dispatchable());
        assertEquals("w.yml", l.name());
    }

    @Test
    void workflowFilesAreFoundInTheThreeDirectories() {
        assertTrue(Workflow.isWorkflowFile(".github/workflows/ci.yml"));
        assertTrue(Workflow.isWorkflowFile(".gitea/workflows/ci.yaml"));
        assertTrue(Workflow.isWorkflowFile(".atrium/workflows/x.yml"));
        assertFalse(Workflow.isWorkflowFile(".github/workflows/sub/ci.yml"));
        assertFalse(Workflow.isWorkflowFile(".github/workflows/README.md"));
        assertFalse(Workflow.isWorkflowFile("workflows/ci.yml"));
    }
}
