package dev.atrium.kernel.internal.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.Jobs;
import java.util.List;
import org.junit.jupiter.api.Test;

class JobBoardTest {

    private final JobBoard board = new JobBoard();

    @Test
    void aJobClosedWithoutAnEndFailsAsEndedWithoutAResult() {
        JobBoard.Entry job = board.start("bundle-update", "Update of x", "dev.atrium.x");
        try (job) {
            job.progress(2, 5, "refreshing dependants");
        }
        Jobs.Snapshot s = job.snapshot();
        assertEquals(Jobs.FAILED, s.state());
        assertEquals("ended without a result", s.reason());
        assertEquals(2, s.done());
        assertTrue(s.endedAt() != null);
    }

    @Test
    void theFirstEndStaysAndASucceededJobIsDone() {
        JobBoard.Entry job = board.start("repository-maintenance", "Maintenance", "dev.atrium.repos");
        job.progress(1, 3, "repository 2 of 3");
        job.succeeded("3 of 3 repositories collected, 0 failed");
        job.failed("too late");
        job.progress(0, 9, "too late");
        job.close();
        Jobs.Snapshot s = job.snapshot();
        assertEquals(Jobs.SUCCEEDED, s.state());
        assertEquals(3, s.done());
        assertEquals(3, s.total());
        assertNull(s.reason());
        assertEquals("repository 2 of 3", s.step());
    }

    @Test
    void runningJobsComeFirstThenTheFinishedNewestFirstAndOnlyTheLastHundredAreKept() {
        JobBoard.Entry running = board.start("k", "running", "b");
        for (int i = 0; i < JobBoard.FINISHED_KEPT + 20; i++) {
            board.start("k", "finished " + i, "b").succeeded("ok");
        }
        JobBoard.Entry failed = board.start("k", "failed", "b");
        failed.failed("why");
        List<Jobs.Snapshot> all = board.list(null);
        assertEquals(1 + JobBoard.FINISHED_KEPT, all.size());
        assertEquals(running.id(), all.get(0).id());
        assertEquals(failed.id(), all.get(1).id());
        assertEquals("finished " + (JobBoard.FINISHED_KEPT + 19), all.get(2).title());
        assertEquals(
                List.of(failed.id()),
                board.list(Jobs.FAILED).stream().map(Jobs.Snapshot::id).toList());
        assertEquals(
                List.of(running.id()),
                board.list(Jobs.RUNNING).stream().map(Jobs.Snapshot::id).toList());
        assertTrue(board.find("finished 0").isEmpty());
        assertTrue(board.find(running.id()).isPresent());
    }
}
