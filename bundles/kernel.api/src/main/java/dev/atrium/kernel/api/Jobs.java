package dev.atrium.kernel.api;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Long jobs a capability runs (repository maintenance, a bundle update, a workspace import), reported so that the
 * operator sees their progress and how they ended ({@code /admin/jobs}, the console's Jobs view). The service is
 * bundle-scoped: the kernel records which bundle started each job, and fails the jobs still running when that bundle
 * releases the service (it stopped) with "the capability stopped".
 *
 * <p>A job is used from the thread doing the work, in a try-with-resources block: {@link Job#close()} without
 * {@link Job#succeeded} or {@link Job#failed} first ends it as failed ("ended without a result"), so a job whose thread
 * died does not stay running. The kernel keeps the running jobs and the last hundred finished ones, in memory only.
 *
 * @since 2.18
 */
@ProviderType
public interface Jobs {

    /** Starts a job of {@code kind} (e.g. {@code repository-maintenance}) described by {@code title}; it runs now. */
    Job start(String kind, String title);

    /** One job. Calls after it ended change nothing. */
    @ProviderType
    interface Job extends AutoCloseable {

        /** Its id, as {@code /admin/jobs/{id}} takes it. */
        String id();

        /** How far it is: {@code done} of {@code total} (0 when not known yet), and the step it is at now. */
        void progress(long done, long total, String step);

        /** Ends it well; {@code summary} says what it did. */
        void succeeded(String summary);

        /** Ends it badly; {@code reason} says why. */
        void failed(String reason);

        /** Where it stands now. */
        Snapshot snapshot();

        /** Ends it as failed ("ended without a result") unless it ended already. */
        @Override
        void close();
    }

    /**
     * A job as the operator sees it: {@code state} is {@code running}, {@code succeeded} or {@code failed};
     * {@code summary} is set when it succeeded, {@code reason} when it failed; {@code bundle} is the symbolic name of
     * the bundle that started it.
     */
    record Snapshot(
            String id,
            String kind,
            String title,
            String state,
            long done,
            long total,
            String step,
            @JsonProperty("started_at") Instant startedAt,
            @JsonProperty("ended_at") Instant endedAt,
            String summary,
            String reason,
            String bundle) {

        public boolean running() {
            return RUNNING.equals(state);
        }

        /** The job as {@code /admin/jobs} answers it (times as ISO-8601 text). */
        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("kind", kind);
            m.put("title", title);
            m.put("state", state);
            m.put("done", done);
            m.put("total", total);
            m.put("step", step);
            m.put("started_at", startedAt == null ? null : startedAt.toString());
            m.put("ended_at", endedAt == null ? null : endedAt.toString());
            m.put("summary", summary);
            m.put("reason", reason);
            m.put("bundle", bundle);
            return m;
        }
    }

    String RUNNING = "running";
    String SUCCEEDED = "succeeded";
    String FAILED = "failed";
}
