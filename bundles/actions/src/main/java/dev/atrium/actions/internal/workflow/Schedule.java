package dev.atrium.actions.internal.workflow;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Objects;
import java.util.Optional;

/** A {@code schedule} entry: POSIX 5-field cron (minute hour day-of-month month day-of-week), in UTC as GitHub. */
public final class Schedule {

    private final String cron;
    private final ExecutionTime executionTime;

    private Schedule(String cron, ExecutionTime executionTime) {
        this.cron = cron;
        this.executionTime = executionTime;
    }

    /** Parses a cron; IllegalArgumentException says why it is not a valid one. */
    public static Schedule of(String cron) {
        String trimmed = cron.strip();
        if (trimmed.split("\\s+").length != 5) {
            throw new IllegalArgumentException(
                    "invalid cron '" + cron + "': five fields expected (minute hour day-of-month month day-of-week)");
        }
        Cron parsed;
        try {
            parsed = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX)).parse(trimmed);
            parsed.validate();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid cron '" + cron + "': " + e.getMessage(), e);
        }
        return new Schedule(trimmed, ExecutionTime.forCron(parsed));
    }

    public String cron() {
        return cron;
    }

    /** The first time strictly after {@code t} the cron fires, in UTC; empty when it never does. */
    public Optional<ZonedDateTime> nextAfter(ZonedDateTime t) {
        return executionTime.nextExecution(t.withZoneSameInstant(ZoneOffset.UTC));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Schedule s && s.cron.equals(cron);
    }

    @Override
    public int hashCode() {
        return Objects.hash(cron);
    }

    @Override
    public String toString() {
        return "Schedule[" + cron + "]";
    }
}
