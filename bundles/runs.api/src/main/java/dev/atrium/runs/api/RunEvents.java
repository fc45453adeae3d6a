package dev.atrium.runs.api;

/**
 * The EventAdmin topic the runs capability posts when a run ends, for capabilities that follow a run they started
 * through {@link RunStarter} (an agent task whose run decides its status). Posted asynchronously, once, by the
 * instance that recorded the run's end; a listener that was not running then reads the outcome with
 * {@link RunStarter#status}.
 *
 * @since 1.5
 */
public final class RunEvents {

    /** A run reached a terminal status: {@code completed}, {@code failed} or {@code cancelled}. */
    public static final String FINISHED = "atrium/run/finished";

    /** The run's id (a String). */
    public static final String RUN_ID = "run_id";
    /** The run's workspace id (a String). */
    public static final String SPACE_ID = "space_id";
    /** The run's thread id (a String). */
    public static final String THREAD_ID = "thread_id";
    /** The terminal status (a String): {@code completed}, {@code failed} or {@code cancelled}. */
    public static final String STATUS = "status";

    private RunEvents() {}
}
