package dev.atrium.reminders.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceArchivePart;
import dev.atrium.reminders.internal.ReminderStore.Reminder;
import java.io.IOException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Reminders in a workspace archive: {@code reminders/reminders.jsonl}, one a line with the fields a create takes
 * (title, body, time zone, {@code at} or {@code rrule} from {@code starts_at}, enabled). Left out: the run a reminder
 * starts (its thread is another part's, with a new id) and the firing history; the next firing is computed on import.
 */
@Component(service = WorkspaceArchivePart.class)
public class RemindersArchivePart implements WorkspaceArchivePart {

    static final String ENTRY = "reminders.jsonl";
    private static final List<String> FIELDS =
            List.of("title", "body", "time_zone", "at", "rrule", "starts_at", "enabled");

    private final ReminderStore store;

    @Activate
    public RemindersArchivePart(@Reference ReminderStore store) {
        this.store = store;
    }

    @Override
    public String name() {
        return "reminders";
    }

    @Override
    public long export(SpaceRef space, ArchiveWriter out) throws IOException {
        Lines lines = out.lines(ENTRY);
        long n = 0;
        for (Reminder r : store.list(space.id(), Integer.MAX_VALUE, 0)) {
            Map<String, Object> json = r.toJson();
            Map<String, Object> line = new LinkedHashMap<>();
            for (String f : FIELDS) {
                if (json.get(f) != null) {
                    line.put(f, json.get(f));
                }
            }
            lines.add(line);
            n++;
        }
        return n;
    }

    @Override
    public long restore(SpaceRef space, ArchiveReader in) throws IOException {
        long[] n = {0};
        in.lines(ENTRY, line -> {
            ObjectNode fields = line.deepCopy();
            fields.retain(FIELDS);
            // checked as a create checks them, except that a one-off time may have passed: it then never fires
            ReminderInput r = ReminderInput.create(fields, Instant.EPOCH);
            store.create(space.id(), r.title(), r.body(), r.schedule(), r.enabled(), null);
            n[0]++;
        });
        return n[0];
    }

    @Override
    public void discard(SpaceRef space) {
        store.deleteAll(space.id());
    }
}
